from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from fiskai_rag import open_store
from fiskai_rag.errors import QueryWindowError
from fiskai_rag.index._chunk import chunk_markdown
from fiskai_rag.pack._temporal import resolve_window

TODAY = dt.date(2026, 11, 30)  # a Monday
CORPUS = Path(__file__).parent / "data" / "pack" / "corpus"


def _window(query: str, **bounds: dt.date) -> tuple[str, str | None, str | None, str]:
    text, window, _ = resolve_window(query, since=bounds.get("since"), until=bounds.get("until"), today=TODAY)
    as_dict = window.as_dict()
    return text, as_dict["since"], as_dict["until"], str(as_dict["derived_from"])


@pytest.mark.parametrize(
    ("query", "text", "since", "until"),
    [
        ("notes today", "notes", "2026-11-30", "2026-11-30"),
        ("yesterday notes", "notes", "2026-11-29", "2026-11-29"),
        ("retention this week", "retention", "2026-11-30", "2026-11-30"),
        ("retention last week", "retention", "2026-11-23", "2026-11-29"),
        ("friday standup", "standup", "2026-11-27", "2026-11-27"),
        ("monday standup", "standup", "2026-11-30", "2026-11-30"),
        ("last monday standup", "standup", "2026-11-23", "2026-11-23"),
        ("retention 2026-11", "retention", "2026-11-01", "2026-11-30"),
        ("retention 2024-02", "retention", "2024-02-01", "2024-02-29"),
        ("2026-11-23 standup", "standup", "2026-11-23", "2026-11-23"),
        ("since 2026-11-20 buffer", "buffer", "2026-11-20", "2026-11-30"),
    ],
)
def test_each_closed_expression_resolves_against_today(query: str, text: str, since: str, until: str) -> None:
    resolved = _window(query)

    assert resolved[:3] == (text, since, until)
    assert resolved[3].startswith('query "')


def test_leading_scaffolding_is_trimmed_so_a_trailing_expression_is_found() -> None:
    text, window, trimmed = resolve_window("Show me the notes from last week?", since=None, until=None, today=TODAY)

    assert text == "notes from"
    assert trimmed == ("show", "me", "the")
    assert window.derived_from == 'query "last week" -> 2026-11-23..2026-11-29'


def test_a_query_without_an_expression_has_no_window() -> None:
    assert _window("take my last meeting notes") == ("meeting notes", None, None, "none")


def test_explicit_bounds_and_until_alone_looks_back_30_days() -> None:
    assert _window("buffer", since=dt.date(2026, 11, 1)) == ("buffer", "2026-11-01", "2026-11-30", "--since/--until")
    assert _window("buffer", until=dt.date(2026, 11, 10)) == (
        "buffer",
        "2026-10-11",
        "2026-11-10",
        "--until (30 days back)",
    )


@pytest.mark.parametrize("query", ["today retention yesterday", "today yesterday notes", "notes 2026-11 friday"])
def test_two_expressions_are_an_error(query: str) -> None:
    with pytest.raises(QueryWindowError) as caught:
        resolve_window(query, since=None, until=None, today=TODAY)

    assert "more than one temporal expression" in str(caught.value)


def test_an_expression_with_since_or_until_is_an_error() -> None:
    with pytest.raises(QueryWindowError) as caught:
        resolve_window("notes yesterday", since=None, until=dt.date(2026, 11, 1), today=TODAY)

    assert "--since/--until" in str(caught.value)


def test_since_after_until_is_an_error() -> None:
    with pytest.raises(QueryWindowError):
        resolve_window("notes", since=dt.date(2026, 11, 2), until=dt.date(2026, 11, 1), today=TODAY)


@pytest.mark.parametrize(
    ("front_matter", "date"),
    [
        ("date: 2026-11-20", "2026-11-20"),
        ('date: "2026-11-20T10:00:00Z"', "2026-11-20"),
        ("date: 2026-02-30", ""),
        ("date: soon", ""),
        ("  date: 2026-11-20", ""),
        ("title: x", ""),
    ],
)
def test_front_matter_date_is_recorded_as_a_day(front_matter: str, date: str) -> None:
    assert chunk_markdown(f"---\n{front_matter}\n---\n# T\n\nbody\n").date == date


def test_a_window_keeps_only_documents_dated_inside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(CORPUS, tmp_path / "corpus")
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["corpus"])

    with open_store(tmp_path / "store", read_only=True) as store:
        last_week = store.context("buffer last week", budget=2000, today=TODAY)
        november = store.context("retention", budget=2000, since=dt.date(2026, 11, 1), today=TODAY)
        unbounded = store.context("broker", budget=4000, today=TODAY)

    assert last_week.citations == ("corpus/notes/2026-11-23-standup.md#0",)
    assert last_week.receipt["window"] == {
        "since": "2026-11-23",
        "until": "2026-11-29",
        "derived_from": 'query "last week" -> 2026-11-23..2026-11-29',
    }
    assert {item.date for item in november.items} <= {"2026-11-10", "2026-11-26"}
    assert november.items
    assert any(item.date == "" for item in unbounded.items)  # undated documents count without a window
