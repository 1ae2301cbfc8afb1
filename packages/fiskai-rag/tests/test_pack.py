from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import cast

import apsw
import pytest

from fiskai_rag import Store, open_store
from fiskai_rag.errors import PackBudgetError, QueryWindowError
from fiskai_rag.pack._render import TRUST_NOTICE
from fiskai_rag.store._db import Conn

TODAY = dt.date(2026, 11, 30)  # a Monday


def test_a_pack_cites_the_best_chunks_first_with_a_receipt(store: Store) -> None:
    pack = store.context("what happens when the buffer fills", budget=400, today=TODAY)

    assert pack.status == "ok"
    assert pack.citations[0] in {"corpus/design/backpressure.md#1", "corpus/copies/backpressure-copy.md#1"}
    assert pack.receipt["selected"] == list(pack.citations)
    assert pack.receipt["filtered_terms"]["scaffolding"] == ["what", "when", "the"]
    assert pack.receipt["terms"] == ["happens", "buffer", "fills"]
    assert pack.receipt["warning"] is None
    assert pack.receipt["index"]["state"] == "used"


def test_encoded_tokens_measure_the_delivered_text_in_every_format(store: Store) -> None:
    for fmt in ("text", "json", "jsonl"):
        pack = store.context("retention period", budget=700, fmt=fmt, today=TODAY)

        assert pack.receipt["encoded_tokens"] == math.ceil(len(pack.text.encode()) / 4) <= 700
        assert pack.receipt["format"] == fmt
        assert TRUST_NOTICE in pack.text
        if fmt != "text":
            assert json.loads(pack.text)["receipt"] == pack.receipt
    assert "\n" not in store.context("retention", budget=700, fmt="jsonl", today=TODAY).text[:-1]


def test_json_is_the_indented_envelope_and_jsonl_the_same_on_one_line(store: Store) -> None:
    as_json = store.context("retention period", budget=9000, fmt="json", explain=True, today=TODAY)
    as_jsonl = store.context("retention period", budget=9000, fmt="jsonl", explain=True, today=TODAY)

    envelope = json.loads(as_json.text)
    assert as_json.text == json.dumps(envelope, ensure_ascii=False, indent=2) + "\n"
    assert json.loads(as_jsonl.text)["items"] == envelope["items"]
    assert envelope["notice"] == TRUST_NOTICE


def test_explain_lists_integer_contributions_that_sum_to_each_score(store: Store) -> None:
    pack = store.context("flow control window", budget=600, explain=True, fmt="json", today=TODAY)

    items = json.loads(pack.text)["items"]
    assert items
    for item in items:
        assert item["score"] == sum(reason["points"] for reason in item["reasons"])
        assert all(isinstance(reason["points"], int) for reason in item["reasons"])
    assert any(reason["reason"].startswith("heading:") for reason in items[0]["reasons"])
    plain = store.context("flow control window", budget=600, today=TODAY)
    assert "why:" not in plain.text
    assert "why:" in store.context("flow control window", budget=600, explain=True, today=TODAY).text


def test_heading_matches_outrank_body_mentions(store: Store) -> None:
    pack = store.context("limits", budget=2000, explain=True, today=TODAY)

    assert pack.citations[0] == "corpus/design/retention.md#1"  # "Retention policy > Limits"
    assert "corpus/notes/2026-11-26-review.md#0" in pack.citations  # "retention limits" in its body only
    assert pack.items[0].reasons[0] == ("heading:limits", pack.items[0].reasons[0][1])


def test_identical_representations_collapse_with_a_count(store: Store) -> None:
    pack = store.context("flow control window credit", budget=2000, today=TODAY)

    [item] = [i for i in pack.items if i.heading_path.endswith("Flow control window")]
    assert item.count == 2
    assert item.collapsed == ("corpus/design/backpressure.md#2",) or item.collapsed == (
        "corpus/copies/backpressure-copy.md#2",
    )
    assert pack.receipt["counts"]["collapsed"] >= 1


def test_the_relevance_floor_keeps_unrelated_chunks_out_of_a_large_budget(store: Store) -> None:
    pack = store.context("retention period", budget=20000, today=TODAY)

    assert pack.citations
    assert all("retention" in item.excerpt.lower() or "retention" in item.heading_path.lower() for item in pack.items)
    assert not any(c.startswith("corpus/ops/upgrade.md") for c in pack.citations)


def test_a_missing_index_is_a_soft_status_naming_the_fix(tmp_path: Path) -> None:
    with open_store(tmp_path / "nothing", read_only=True) as empty:
        pack = empty.context("anything", budget=300, today=TODAY)

    assert pack.status == "index_not_built"
    assert pack.items == ()
    assert pack.receipt["index"]["state"] == "missing"
    assert "has not been built yet; index the documents to cite" in pack.text
    assert "fiskai knowledge" not in pack.text  # the library names no CLI command; the CLI words fixes
    assert TRUST_NOTICE in pack.text
    assert pack.receipt["encoded_tokens"] <= 300


def test_no_candidates_in_the_window(store: Store) -> None:
    pack = store.context("retention", budget=500, since=dt.date(2020, 1, 1), until=dt.date(2020, 1, 31), today=TODAY)

    assert pack.status == "no_candidates"
    assert pack.receipt["warning"]["kind"] == "no_candidates"
    assert "2020-01-01..2020-01-31" in pack.receipt["warning"]["text"]


def test_no_match_above_the_floor(store: Store) -> None:
    unknown = store.context("zeppelin", budget=500, today=TODAY)
    only_scaffolding = store.context("what is my", budget=500, today=TODAY)

    assert unknown.status == "no_match"
    assert only_scaffolding.status == "no_match"
    assert "scaffolding" in only_scaffolding.receipt["warning"]["text"]


def test_matches_that_cannot_fit_the_budget(store: Store) -> None:
    with pytest.raises(PackBudgetError) as caught:
        store.context("retention period", budget=1, today=TODAY)
    minimum = caught.value.minimum_budget

    pack = store.context("retention period", budget=minimum, today=TODAY)

    assert f"--budget {minimum}" in str(caught.value)
    assert pack.status == "over_budget"
    assert pack.items == ()
    assert pack.receipt["encoded_tokens"] <= minimum
    assert pack.receipt["dropped_count"] > 0
    assert "none fits the budget" in pack.receipt["warning"]["text"]


def test_a_smaller_budget_drops_the_least_useful_items_first(store: Store) -> None:
    large = store.context("retention period limits", budget=4000, today=TODAY)
    small = store.context("retention period limits", budget=large.receipt["encoded_tokens"] - 60, today=TODAY)

    assert 0 < len(small.citations) < len(large.citations)
    assert list(small.citations) == [c for c in large.citations if c in small.citations]
    assert small.citations[0] == large.citations[0]
    assert small.receipt["dropped_count"] > large.receipt["dropped_count"]


def test_pins_come_first_and_every_pin_that_cannot_fit_is_named(store: Store) -> None:
    pinned = store.context("retention", budget=1200, pins=["corpus/ops/upgrade.md#0"], today=TODAY)
    missing = store.context("retention", budget=1200, pins=["corpus/ops/nope.md#0", "bad-citation"], today=TODAY)
    wanted = ["corpus/design/backpressure.md#1", "corpus/ops/runbook.md#1", "corpus/glossary.md#2"]
    crowded = store.context("retention", budget=420, pins=wanted, today=TODAY)

    assert pinned.citations[0] == "corpus/ops/upgrade.md#0"
    assert pinned.items[0].pinned
    assert ("pinned", 0) in pinned.items[0].reasons
    assert missing.receipt["rejected_pins"] == [
        {"citation": "corpus/ops/nope.md#0", "reason": "not_found"},
        {"citation": "bad-citation", "reason": "not_found"},
    ]
    rejected = [pin["citation"] for pin in crowded.receipt["rejected_pins"]]
    delivered = [c for c in crowded.citations if c in wanted]
    assert rejected
    assert delivered
    assert sorted(rejected + delivered) == sorted(wanted)
    assert all(pin["reason"] in {"over_pin_share", "over_budget"} for pin in crowded.receipt["rejected_pins"])


def test_exclude_skips_citations_already_delivered_in_the_run(store: Store) -> None:
    first = store.context("buffer", budget=500, today=TODAY)
    second = store.context("buffer", budget=500, exclude=first.citations, today=TODAY)

    assert first.citations
    assert not set(first.citations) & set(second.citations)
    assert second.receipt["counts"]["excluded"] == len(first.citations)


def test_one_file_is_at_most_40_percent_of_a_diversified_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    dated = "---\ndate: 2026-11-20\n---\n"
    big = "\n\n".join(f"## Widget part {i}\n\nThe widget gear {i} turns the widget." for i in range(8))
    (docs / "big.md").write_text(f"{dated}# Widgets\n\n{big}\n", encoding="utf-8")
    for name in ("a", "b", "c", "d"):
        (docs / f"{name}.md").write_text(f"{dated}# Widget note {name}\n\nA widget appears here.\n", encoding="utf-8")
    for i in range(30):
        (docs / f"other{i}.md").write_text(f"# Other {i}\n\nNothing related at all.\n", encoding="utf-8")
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["docs"])

    with open_store(tmp_path / "store", read_only=True) as reader:
        pack = reader.context("widget", budget=5000, today=TODAY)
        # Under a date window the pack adds its own FTS5 candidates to search's (which keeps two chunks a
        # document), so big.md offers all eight and the cap has to drop some.
        windowed = reader.context("widget", budget=5000, since=dt.date(2026, 11, 1), today=TODAY)

    for delivered in (pack, windowed):
        from_big = [c for c in delivered.citations if c.startswith("docs/big.md")]
        assert len(delivered.citations) >= 5
        assert len(from_big) * 5 <= len(delivered.citations) * 2
    assert any(d["reason"] == "source_cap" for d in windowed.receipt["dropped"])


def test_exact_citation_and_path_queries_get_the_identifier_bonus(store: Store) -> None:
    by_citation = store.context("corpus/ops/runbook.md#1", budget=500, explain=True, today=TODAY)
    by_slug = store.context("runbook", budget=800, explain=True, today=TODAY)

    assert by_citation.citations[0] == "corpus/ops/runbook.md#1"
    assert ("identifier:corpus/ops/runbook.md#1", 64) in by_citation.items[0].reasons
    assert by_slug.citations[0].startswith("corpus/ops/runbook.md")
    assert ("slug:runbook", 32) in by_slug.items[0].reasons


def test_the_same_request_gives_byte_identical_text(store: Store) -> None:
    texts = {store.context("broker restart", budget=600, fmt=fmt, today=TODAY).text for fmt in ("json",) * 3}

    assert len(texts) == 1


def test_input_digest_ignores_budget_and_format_but_not_the_query_or_window(store: Store) -> None:
    base = store.context("retention period", budget=600, today=TODAY).receipt["input_digest"]

    assert store.context("retention period", budget=2000, fmt="json", today=TODAY).receipt["input_digest"] == base
    assert store.context("retention limits", budget=600, today=TODAY).receipt["input_digest"] != base
    assert (
        store.context("retention period", budget=600, since=dt.date(2026, 11, 1), today=TODAY).receipt["input_digest"]
        != base
    )


def test_an_index_built_before_dates_is_stale_until_reindexed(store: Store, tmp_path: Path) -> None:
    store.close()
    raw = cast(Conn, apsw.Connection(str(tmp_path / "store" / "knowledge.db")))
    raw.execute("ALTER TABLE documents DROP COLUMN date")
    raw.close()

    with open_store(tmp_path / "store", read_only=True) as old:
        stale = old.context("retention", budget=600, today=TODAY)
        windowed = old.context("retention", budget=600, since=dt.date(2026, 11, 1), today=TODAY)
    with open_store(tmp_path / "store", read_only=False) as writer:
        stats = writer.index(["corpus"])
    with open_store(tmp_path / "store", read_only=True) as upgraded:
        fresh = upgraded.context("retention", budget=600, since=dt.date(2026, 11, 1), today=TODAY)

    assert stale.status == "ok"
    assert stale.receipt["index"]["state"] == "stale"
    assert "predates document dates" in stale.receipt["index"]["note"]
    assert windowed.status == "no_candidates"
    assert stats.updated == stats.files  # every file is re-read once to pick up its date
    assert fresh.receipt["index"]["state"] == "used"
    assert fresh.status == "ok"


def test_two_temporal_expressions_are_refused(store: Store) -> None:
    with pytest.raises(QueryWindowError):
        store.context("today retention yesterday", budget=600, today=TODAY)
    with pytest.raises(QueryWindowError):
        store.context("retention last week", budget=600, since=dt.date(2026, 11, 1), today=TODAY)


def test_unknown_format_is_a_value_error(store: Store) -> None:
    with pytest.raises(ValueError, match="unknown pack format"):
        store.context("retention", budget=600, fmt="yaml", today=TODAY)  # pyright: ignore[reportArgumentType]


def _tiny_store(root: Path) -> Store:
    docs = root / "docs"
    docs.mkdir()
    (docs / "install.md").write_text("# Install\n\nRun the installer to set up the agent.\n", encoding="utf-8")
    (docs / "upgrade.md").write_text("# Upgrade\n\nThe installer also upgrades an existing agent.\n", encoding="utf-8")
    (docs / "backup.md").write_text("# Backup\n\nSnapshots are copied nightly.\n", encoding="utf-8")
    with open_store(root / "store", read_only=False) as writer:
        writer.index([str(docs)])
    return open_store(root / "store", read_only=True)


def test_common_words_still_count_when_the_query_has_nothing_rarer(tmp_path: Path) -> None:
    # "installer" is in 2 of 3 chunks: a stop term by the half rule, but it is all the query has.
    with _tiny_store(tmp_path) as tiny:
        pack = tiny.context("installer", budget=300, today=TODAY)
    assert pack.status == "ok"
    assert sorted(c.rsplit("/", 1)[-1] for c in pack.citations) == ["install.md#0", "upgrade.md#0"]


def test_a_rarer_word_still_silences_common_ones(tmp_path: Path) -> None:
    with _tiny_store(tmp_path) as tiny:
        pack = tiny.context("installer snapshots", budget=300, today=TODAY)
    assert [c.rsplit("/", 1)[-1] for c in pack.citations] == ["backup.md#0"]
