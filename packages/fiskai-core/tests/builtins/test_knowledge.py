import json
from collections.abc import Collection
from typing import Literal

import pytest

from fiskai_core.builtins import KNOWLEDGE_SEARCH, KnowledgeSearchTool
from fiskai_core.knowledge import KnowledgeSearcher
from fiskai_core.testing import FakePack, FakeSearcher
from fiskai_core.tools import Tool

pytestmark = pytest.mark.anyio

EXCERPTS = {
    "docs/streams.md#1": "streams keep messages",
    "docs/streams.md#2": "streams can mirror other streams",
    "docs/kv.md#1": "buckets hold keys",
}


def test_fakes_satisfy_the_seams() -> None:
    searcher: KnowledgeSearcher = FakeSearcher()
    tool: Tool = KnowledgeSearchTool(searcher, max_injected_tokens=100)
    assert tool.name == KNOWLEDGE_SEARCH


async def test_knowledge_search_returns_the_pack_within_the_configured_budget() -> None:
    searcher = FakeSearcher(excerpts=EXCERPTS)
    tool = KnowledgeSearchTool(searcher, max_injected_tokens=6000)
    result = await tool.execute('{"query": "streams"}')
    assert not result.is_error
    assert result.text.splitlines() == [
        "docs/streams.md#1: streams keep messages",
        "docs/streams.md#2: streams can mirror other streams",
    ]
    assert searcher.calls == [("streams", 6000, frozenset())]


async def test_later_searches_skip_what_this_run_already_delivered() -> None:
    searcher = FakeSearcher(excerpts=EXCERPTS)
    tool = KnowledgeSearchTool(searcher, max_injected_tokens=13)
    first = await tool.execute('{"query": "streams"}')
    second = await tool.execute('{"query": "streams"}')
    assert first.text == "docs/streams.md#1: streams keep messages"
    assert second.text == "docs/streams.md#2: streams can mirror other streams"
    assert tool.delivered_citations == ("docs/streams.md#1", "docs/streams.md#2")
    assert searcher.calls[1][2] == frozenset({"docs/streams.md#1"})


async def test_a_resumed_run_seeds_what_was_delivered_before() -> None:
    searcher = FakeSearcher(excerpts=EXCERPTS)
    tool = KnowledgeSearchTool(searcher, max_injected_tokens=6000, delivered=["docs/streams.md#1"])
    result = await tool.execute('{"query": "streams"}')
    assert result.text == "docs/streams.md#2: streams can mirror other streams"


async def test_without_an_index_the_status_is_soft_and_names_the_fix() -> None:
    tool = KnowledgeSearchTool(None, max_injected_tokens=6000)
    result = await tool.execute('{"query": "streams"}')
    assert not result.is_error
    assert json.loads(result.text) == {
        "status": "index_not_built",
        "note": "the knowledge index has not been built yet; run: fiskai knowledge index",
    }


@pytest.mark.parametrize("arguments", ["", "{}", '{"query": ""}', '{"query": 3}', "[1]", "{bad json"])
async def test_bad_input_is_an_error_result_the_model_can_act_on(arguments: str) -> None:
    result = await KnowledgeSearchTool(FakeSearcher(), max_injected_tokens=10).execute(arguments)
    assert result.is_error
    assert result.text.startswith("invalid knowledge_search input:")


async def test_a_failing_index_is_an_error_result_not_a_crash() -> None:
    class Broken:
        def context(
            self,
            query: str,
            *,
            budget: int,
            fmt: Literal["text", "json", "jsonl"] = "text",
            exclude: Collection[str] = (),
        ) -> FakePack:
            raise OSError("database disk image is malformed")

    result = await KnowledgeSearchTool(Broken(), max_injected_tokens=10).execute('{"query": "x"}')
    assert result.is_error
    assert result.text == "knowledge_search: database disk image is malformed"
