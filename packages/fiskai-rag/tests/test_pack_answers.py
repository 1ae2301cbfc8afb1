"""Packs carry what search's top hits carry: seeded in search order, with excerpts sized to the budget."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from fiskai_rag import Store, open_store
from fiskai_rag.pack._build import EXCERPT_CHARS, MAX_EXCERPT_CHARS, excerpt_limit

TODAY = dt.date(2026, 11, 30)
EVALS = Path(__file__).resolve().parents[1] / "evals"


@pytest.mark.parametrize(
    "query", ["broker", "retention period", "what happens when the buffer fills", "restart the broker safely"]
)
def test_a_pack_leads_with_the_relevant_search_hits_in_search_order(store: Store, query: str) -> None:
    hits = [hit.citation for hit in store.search(query, top_k=10).hits]
    pack = store.context(query, budget=4000, explain=True, today=TODAY)

    delivered = list(pack.citations)
    seeded = [c for c in delivered if c in hits]
    assert seeded, "the pack shares no item with the search hits"
    # The hits the pack keeps come first and keep search's order; items the pack adds follow them.
    assert delivered[: len(seeded)] == seeded
    assert seeded == [c for c in hits if c in seeded]
    for item in pack.items[: len(seeded)]:
        rank = hits.index(item.citation) + 1
        assert ("search_rank:" + str(rank), 0) in item.reasons
        assert sum(points for _, points in item.reasons) == item.score


def test_excerpts_grow_with_the_budget_within_their_bounds() -> None:
    assert excerpt_limit(0) == EXCERPT_CHARS
    assert excerpt_limit(400) == EXCERPT_CHARS
    assert EXCERPT_CHARS < excerpt_limit(1400) < MAX_EXCERPT_CHARS
    assert excerpt_limit(1400) <= excerpt_limit(1500)
    assert excerpt_limit(100_000) == MAX_EXCERPT_CHARS


def _long_section(tmp_path: Path) -> Store:
    docs = tmp_path / "docs"
    docs.mkdir()
    filler = " ".join(f"Sentence {i} about the compactor keeps the page long enough to excerpt." for i in range(9))
    rows = "\n".join(f"| `--opt-{i}`{' ' * 30}| Option {i} of the compactor.{' ' * 40}|" for i in range(6))
    (docs / "compactor.md").write_text(
        "# Compactor\n\n## Settings\n\n"
        f"{filler}\n\n"
        f"| Flag{' ' * 36}| Meaning{' ' * 50}|\n| :{'-' * 38} | :{'-' * 55} |\n{rows}\n\n"
        "The compactor runs every ten minutes by default.\n",
        encoding="utf-8",
    )
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["docs"])
    return open_store(tmp_path / "store", read_only=True)


def test_a_long_section_arrives_whole_at_a_roomy_budget_and_excerpted_at_a_tight_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with _long_section(tmp_path) as store:
        roomy = store.context("compactor default interval", budget=1500, today=TODAY)
        tight = store.context("compactor default interval", budget=400, today=TODAY)

    prose = {item.citation: item.excerpt for item in roomy.items}
    # The ~630-character paragraph comes whole at 1500 tokens; at 400 only a 400-character excerpt fits.
    assert prose["docs/compactor.md#0"].startswith("Sentence 0 about the compactor")
    assert prose["docs/compactor.md#0"].endswith(
        "Sentence 8 about the compactor keeps the page long enough to excerpt."
    )
    short = {item.citation: item.excerpt for item in tight.items}
    assert len(short.get("docs/compactor.md#0", "")) <= EXCERPT_CHARS < len(prose["docs/compactor.md#0"])
    # Layout is squeezed out of the padded table: one space between cells, no rule line, the text intact.
    table = prose["docs/compactor.md#1"]
    assert "| `--opt-3` | Option 3 of the compactor. |" in table
    assert table.endswith("The compactor runs every ten minutes by default.")
    assert "  " not in table and ":---" not in table
    assert tight.receipt["encoded_tokens"] <= 400 and roomy.receipt["encoded_tokens"] <= 1500


@pytest.mark.ranking
def test_packs_at_1500_carry_every_answer_the_top_five_hits_carry(
    shared_fixtures: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tuning questions only (the held-out half is never used to check or tune behaviour).
    document = cast("dict[str, Any]", yaml.safe_load((EVALS / "influxdata-tuning.yaml").read_text(encoding="utf-8")))
    monkeypatch.chdir(shared_fixtures / "corpus")
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["influxdata-docs"])

    missed: list[str] = []
    carried = 0
    with open_store(tmp_path / "store", read_only=True) as store:
        for query in cast("list[dict[str, Any]]", document["queries"]):
            answers = [answer.casefold() for answer in query["answers"]]
            hits = store.search(query["query"], top_k=5).hits
            if not any(answer in hit.content.casefold() for hit in hits for answer in answers):
                continue
            carried += 1
            pack = store.context(query["query"], budget=1500)
            if not any(answer in item.excerpt.casefold() for item in pack.items for answer in answers):
                missed.append(query["id"])

    assert carried >= 20
    assert not missed, f"the pack lost answers its top five hits carried: {missed}"


def test_a_section_named_for_the_query_is_excerpted_from_its_lead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    middle = "\n".join(f"Line {i} explains how flushing works in general terms for operators." for i in range(6))
    (docs / "options.md").write_text(
        "# Options\n\n## snapshot-files-to-keep\n\n"
        "Specifies the number of snapshot files to retain in the object store.\n"
        f"{middle}\n\n"
        "| option | variable |\n| --- | --- |\n| `--snapshot-files-to-keep` | `SNAPSHOT_FILES_TO_KEEP` |\n",
        encoding="utf-8",
    )
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["docs"])
    with open_store(tmp_path / "store", read_only=True) as store:
        pack = store.context("snapshot-files-to-keep", budget=400, today=TODAY)

    # Every query term is in the heading, so the excerpt is not pulled to the table row that repeats them.
    assert pack.items
    assert pack.items[0].excerpt.startswith("Specifies the number of snapshot files to retain")
