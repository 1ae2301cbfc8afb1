from __future__ import annotations

import datetime as dt
import json
import math
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fiskai_rag import Store, open_store
from fiskai_rag.errors import PackBudgetError, QueryWindowError
from fiskai_rag.pack._render import TRUST_NOTICE

CORPUS = Path(__file__).parent / "data" / "pack" / "corpus"
TODAY = dt.date(2026, 11, 30)
WORDS = [
    "buffer", "fills", "retention", "period", "broker", "restart", "flow", "control", "window", "consumer",
    "producers", "stream", "limits", "upgrade", "what", "how", "the", "last", "week", "zeppelin", "ab",
    "corpus/ops/runbook.md#1", "glossary", "ünïcödé", "日本語", "2026-11", "since", "today",
]  # fmt: skip
PINS = ["corpus/ops/upgrade.md#0", "corpus/glossary.md#1", "corpus/nope.md#0", "corpus/design/retention.md#2"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    base = tmp_path_factory.mktemp("pack-budget")
    shutil.copytree(CORPUS, base / "corpus")
    previous = os.getcwd()
    os.chdir(base)  # document keys are `corpus/...`, as the pins name them
    try:
        with open_store(base / "store", read_only=False) as writer:
            writer.index(["corpus"])
    finally:
        os.chdir(previous)
    opened = open_store(base / "store", read_only=True)
    yield opened
    opened.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=0, max_size=6),
    budget=st.integers(min_value=-5, max_value=3000),
    fmt=st.sampled_from(["text", "json", "jsonl"]),
    explain=st.booleans(),
    pins=st.lists(st.sampled_from(PINS), max_size=3),
)
def test_encoded_tokens_never_exceed_the_budget_and_measure_the_text(
    store: Store, words: list[str], budget: int, fmt: str, explain: bool, pins: list[str]
) -> None:
    query = " ".join(words)
    try:
        pack = store.context(query, budget=budget, fmt=fmt, explain=explain, pins=pins, today=TODAY)  # pyright: ignore[reportArgumentType]
    except PackBudgetError as err:
        minimum = err.minimum_budget
        assert minimum > budget
        retried = store.context(query, budget=minimum, fmt=fmt, explain=explain, pins=pins, today=TODAY)  # pyright: ignore[reportArgumentType]
        assert retried.receipt["encoded_tokens"] <= minimum
        return
    except QueryWindowError:  # two temporal expressions drawn from the word list
        return
    encoded = pack.receipt["encoded_tokens"]
    assert encoded == math.ceil(len(pack.text.encode()) / 4)
    assert encoded <= budget
    assert TRUST_NOTICE in pack.text
    assert pack.receipt["budget"] == budget
    if fmt != "text":
        assert json.loads(pack.text)["receipt"] == pack.receipt
    rejected = {pin["citation"] for pin in pack.receipt["rejected_pins"]}
    for pin in pins:
        assert pin in pack.citations or pin in rejected
