import json
from collections.abc import Collection
from typing import Literal

import pytest

from fiskai_core.builtins import KNOWLEDGE_SEARCH, KnowledgeSearchTool
from fiskai_core.knowledge import KnowledgeSearcher
from fiskai_core.testing import FakePack, FakeSearcher, call_tool
from fiskai_core.tools import TAG_IDEMPOTENT, CallContext, Tool, trigger_tag

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


def test_knowledge_search_is_read_only_and_says_so() -> None:
    tool = KnowledgeSearchTool(FakeSearcher(), max_injected_tokens=100)
    assert list(tool.tags) == [TAG_IDEMPOTENT]
    assert trigger_tag(tool.tags, confirm_tags=[TAG_IDEMPOTENT]) == TAG_IDEMPOTENT  # only if an operator asks


async def test_knowledge_search_returns_the_pack_within_the_configured_budget() -> None:
    searcher = FakeSearcher(excerpts=EXCERPTS)
    tool = KnowledgeSearchTool(searcher, max_injected_tokens=6000)
    result = await call_tool(tool, '{"query": "streams"}')
    assert not result.is_error
    assert result.text.splitlines() == [
        "docs/streams.md#1: streams keep messages",
        "docs/streams.md#2: streams can mirror other streams",
    ]
    assert result.citations == ("docs/streams.md#1", "docs/streams.md#2")
    assert searcher.calls == [("streams", 6000, frozenset())]


async def test_later_searches_skip_what_the_caller_says_was_delivered() -> None:
    # Stateless: the run passes what the conversation already received, and learns what a result delivered.
    searcher = FakeSearcher(excerpts=EXCERPTS)
    tool = KnowledgeSearchTool(searcher, max_injected_tokens=13)
    first = await call_tool(tool, '{"query": "streams"}')
    second = await call_tool(tool, '{"query": "streams"}', CallContext(delivered=frozenset(first.citations)))
    assert first.text == "docs/streams.md#1: streams keep messages"
    assert first.citations == ("docs/streams.md#1",)
    assert second.text == "docs/streams.md#2: streams can mirror other streams"
    assert second.citations == ("docs/streams.md#2",)
    assert searcher.calls[1][2] == frozenset({"docs/streams.md#1"})
    # Nothing is remembered between calls: without a context the first excerpt comes back.
    again = await call_tool(tool, '{"query": "streams"}')
    assert again.citations == ("docs/streams.md#1",)


async def test_a_resumed_run_passes_what_was_delivered_before() -> None:
    searcher = FakeSearcher(excerpts=EXCERPTS)
    tool = KnowledgeSearchTool(searcher, max_injected_tokens=6000)
    result = await call_tool(tool, '{"query": "streams"}', CallContext(delivered=frozenset({"docs/streams.md#1"})))
    assert result.text == "docs/streams.md#2: streams can mirror other streams"


async def test_without_an_index_the_status_is_soft_and_names_the_fix() -> None:
    tool = KnowledgeSearchTool(None, max_injected_tokens=6000)
    result = await call_tool(tool, '{"query": "streams"}')
    assert not result.is_error
    assert result.citations == ()
    assert json.loads(result.text) == {
        "status": "index_not_built",
        "note": "the knowledge index has not been built yet; run: fiskai knowledge index",
    }


@pytest.mark.parametrize("arguments", ["", "{}", '{"query": ""}', '{"query": 3}'])
async def test_bad_input_is_an_error_result_the_model_can_act_on(arguments: str) -> None:
    searcher = FakeSearcher()
    result = await call_tool(KnowledgeSearchTool(searcher, max_injected_tokens=10), arguments)
    assert result.is_error
    assert result.text == (
        'invalid knowledge_search input: give {"query": "<what to look for>"} with a non-empty string'
    )
    assert searcher.calls == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("[1]", "invalid JSON arguments: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("{bad json", "invalid JSON arguments: invalid character 'b' looking for beginning of object key string"),
        ("null", 'arguments for tool "knowledge_search" must be a JSON object, got null; nothing was run'),
    ],
)
async def test_input_that_is_no_object_is_refused_before_the_search(arguments: str, message: str) -> None:
    searcher = FakeSearcher()
    result = await call_tool(KnowledgeSearchTool(searcher, max_injected_tokens=10), arguments)
    assert result.is_error and result.text == message
    assert searcher.calls == []


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

    result = await call_tool(KnowledgeSearchTool(Broken(), max_injected_tokens=10), '{"query": "x"}')
    assert result.is_error
    assert result.text == "knowledge_search: database disk image is malformed"
