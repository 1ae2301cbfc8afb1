"""The influxdata-docs question sets are well formed and their answers survive the chunker whole."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from fiskai_rag.index._chunk import chunk_markdown

EVALS = Path(__file__).resolve().parents[1] / "evals"
SETS = ("influxdata-tuning.yaml", "influxdata-heldout.yaml")
POOLED = {"influxdata-tuning-pooled.yaml": SETS[0], "influxdata-heldout-pooled.yaml": SETS[1]}
KINDS = {"keyword", "identifier", "paraphrase", "conversational"}


def _queries(name: str) -> list[dict[str, Any]]:
    document = cast("dict[str, Any]", yaml.safe_load((EVALS / name).read_text(encoding="utf-8")))
    return cast("list[dict[str, Any]]", document["queries"])


@pytest.mark.parametrize("name", [*SETS, *POOLED])
def test_each_half_has_every_kind(name: str) -> None:
    queries = _queries(name)
    kinds = Counter(query["kind"] for query in queries)

    assert len(queries) >= 40
    assert set(kinds) == KINDS
    assert min(kinds.values()) >= 10
    assert len({query["id"] for query in queries}) == len(queries)


def test_the_halves_share_no_answer() -> None:
    tuning, held_out = ({a for q in _queries(name) for a in q["answers"]} for name in SETS)

    assert not tuning & held_out


@pytest.mark.parametrize("name", [*SETS, *POOLED])
def test_every_answer_appears_whole_in_a_chunk_of_an_expected_document(name: str, shared_fixtures: Path) -> None:
    corpus = shared_fixtures / "corpus"
    chunks: dict[str, list[str]] = {}
    unanswered: list[str] = []
    for query in _queries(name):
        found = False
        for relpath in query["expected"]:
            if relpath not in chunks:
                text = (corpus / relpath).read_text(encoding="utf-8")
                chunks[relpath] = [chunk.content.casefold() for chunk in chunk_markdown(text).chunks]
            if any(answer.casefold() in chunk for answer in query["answers"] for chunk in chunks[relpath]):
                found = True
        if not found:
            unanswered.append(query["id"])

    assert unanswered == []


@pytest.mark.parametrize(("pooled", "original"), POOLED.items())
def test_pooled_judgments_only_add_answers_to_the_same_questions(pooled: str, original: str) -> None:
    # The pooled files extend the judgments, never the questions: each keeps its original answers first.
    before, after = _queries(original), _queries(pooled)

    assert [(q["id"], q["kind"], q["query"]) for q in after] == [(q["id"], q["kind"], q["query"]) for q in before]
    for old, new in zip(before, after, strict=True):
        assert new["answers"][: len(old["answers"])] == old["answers"]
        assert set(old["expected"]) <= set(new["expected"])
    assert sum(len(new["answers"]) > len(old["answers"]) for old, new in zip(before, after, strict=True)) == 29
