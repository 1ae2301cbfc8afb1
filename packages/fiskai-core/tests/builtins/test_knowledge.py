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
            limit: int | None = None,
        ) -> FakePack:
            raise OSError("database disk image is malformed")

    result = await call_tool(KnowledgeSearchTool(Broken(), max_injected_tokens=10), '{"query": "x"}')
    assert result.is_error
    assert result.text == "knowledge_search: database disk image is malformed"


def test_the_schema_offers_top_k_as_the_go_agent_does() -> None:
    schema = KnowledgeSearchTool(FakeSearcher(), max_injected_tokens=100).input_schema
    properties = schema["properties"]
    assert isinstance(properties, dict)
    assert properties["top_k"] == {
        "type": "integer",
        "description": "Optional maximum number of sections to return; defaults to the configured value and is "
        "capped by it.",
    }
    assert schema["required"] == ["query"]


@pytest.mark.parametrize(
    ("arguments", "configured", "limit"),
    [
        ('{"query": "streams"}', 5, 5),  # the configured value by default
        ('{"query": "streams", "top_k": 1}', 5, 1),
        ('{"query": "streams", "top_k": 9}', 3, 3),  # capped by harness.knowledge.top_k
        ('{"query": "streams", "top_k": 0}', 4, 4),  # 0 reads as "the configured value", as in Go
        ('{"query": "streams", "top_k": 2.0}', 4, 2),
        ('{"query": "streams"}', None, None),  # no configured cap: the budget alone
    ],
)
async def test_top_k_is_the_models_capped_by_the_configured_one(
    arguments: str, configured: int | None, limit: int | None
) -> None:
    searcher = FakeSearcher(excerpts=EXCERPTS)
    tool = KnowledgeSearchTool(searcher, max_injected_tokens=6000, top_k=configured)
    result = await call_tool(tool, arguments)
    assert not result.is_error
    assert searcher.limits == [limit]
    assert len(result.citations) == min(limit or 2, 2)


async def test_a_top_k_that_is_not_a_whole_number_is_refused_before_the_search() -> None:
    searcher = FakeSearcher(excerpts=EXCERPTS)
    tool = KnowledgeSearchTool(searcher, max_injected_tokens=6000, top_k=5)
    for bad in ('"3"', "true", "1.5"):
        result = await call_tool(tool, f'{{"query": "streams", "top_k": {bad}}}')
        assert result.is_error
        assert "top_k must be a whole number" in result.text
    assert searcher.calls == []


def test_the_trace_names_top_k_when_asked() -> None:
    from fiskai_core.tools import parse_arguments

    tool = KnowledgeSearchTool(FakeSearcher(), max_injected_tokens=10)
    assert tool.display(parse_arguments('{"query": "streams", "top_k": 3}')) == 'knowledge_search("streams", top_k=3)'
    assert tool.display(parse_arguments('{"query": "streams"}')) == 'knowledge_search("streams")'


async def test_a_degraded_pack_says_the_query_was_lexical_only() -> None:
    class Degraded(FakeSearcher):
        def context(self, query: str, **kwargs: object) -> FakePack:  # type: ignore[override]
            return FakePack(text="docs/a.md#0: x", citations=("docs/a.md#0",), status="ok", degraded="refused")

    result = await call_tool(KnowledgeSearchTool(Degraded(), max_injected_tokens=100), '{"query": "x"}')
    assert result.text.splitlines()[0] == (
        "note: the embeddings server was unreachable, so this query used the lexical tier only (refused)"
    )


class _Hit:
    def __init__(self, citation: str, heading_path: str, content: str) -> None:
        self.citation, self.heading_path, self.content = citation, heading_path, content


class _Result:
    def __init__(self, hits: list[_Hit], status: str = "ok", degraded: str | None = None) -> None:
        self.hits, self.status, self.degraded = hits, status, degraded
        self.tier = "lexical (FTS5) - no embeddings configured" if degraded is None else "hybrid -> DEGRADED"


class _Index(FakeSearcher):
    result: _Result = _Result([])
    asked: list[int | None] = []

    def search(self, query: str, *, top_k: int | None = None) -> _Result:
        self.asked.append(top_k)
        return self.result


async def test_result_format_json_is_the_go_agents_shape_within_its_byte_budget() -> None:
    index = _Index()
    index.result = _Result(
        [_Hit("docs/a.md#0", "A > Intro", "x" * 30), _Hit("docs/b.md#1", "", "y" * 20), _Hit("docs/c.md#0", "", "z")]
    )
    tool = KnowledgeSearchTool(index, max_injected_tokens=10, top_k=5, result_format="json")  # 40 bytes

    result = await call_tool(tool, '{"query": "x", "top_k": 3}')

    assert json.loads(result.text) == {
        "tier": "lexical (FTS5) - no embeddings configured",
        "status": "ok",
        "results": [{"citation": "docs/a.md#0", "section": "A > Intro", "content": "x" * 30}],
    }
    assert list(json.loads(result.text)) == ["tier", "status", "results"]
    assert result.citations == ("docs/a.md#0",)
    assert index.asked[-1] == 3


async def test_result_format_json_notes_degraded_empty_and_missing_indexes() -> None:
    index = _Index()
    index.result = _Result([_Hit("docs/a.md#0", "", "a" * 500)], degraded="connection refused")
    tool = KnowledgeSearchTool(index, max_injected_tokens=10, result_format="json")
    degraded = json.loads((await call_tool(tool, '{"query": "x"}')).text)
    index.result = _Result([], status="index_empty")
    empty = json.loads((await call_tool(tool, '{"query": "x"}')).text)
    missing = json.loads(
        (
            await call_tool(KnowledgeSearchTool(None, max_injected_tokens=10, result_format="json"), '{"query": "x"}')
        ).text
    )

    assert degraded["note"] == "the embeddings server was unreachable, so this query used the lexical tier only"
    assert len(degraded["results"]) == 1  # the first hit always, even over the budget
    assert empty["note"] == "the knowledge index is empty or the query had no searchable terms"
    assert empty["results"] == []
    assert missing["status"] == "index_not_built" and missing["results"] == []
