"""knowledge_enumerate over a fake index, and the `harness.knowledge.citations` rewrite rules (reference 7.3)."""

from __future__ import annotations

import json
from typing import NamedTuple

import pytest

from fiskai_core.builtins import (
    KNOWLEDGE_ENUMERATE,
    KNOWLEDGE_ENUMERATE_NOTE,
    CitationRewriter,
    KnowledgeAccess,
    KnowledgeEnumerateTool,
    agent_tool_set,
    github_anchor,
    short_ref,
)
from fiskai_core.config import Mode, parse_config
from fiskai_core.errors import ConfigError
from fiskai_core.knowledge import KnowledgeEnumerator
from fiskai_core.testing import FakeSearcher, call_tool
from fiskai_core.tools import TAG_IDEMPOTENT

pytestmark = pytest.mark.anyio


class Doc(NamedTuple):
    path: str
    title: str
    sections: int
    first: int
    heading: str


class Result(NamedTuple):
    status: str
    documents: list[Doc]
    matched: int
    indexed_documents: int
    limit: int
    min_body_matches: int

    @property
    def truncated(self) -> bool:
        return self.matched > len(self.documents)


class FakeIndex:
    def __init__(self, result: Result) -> None:
        self.result = result
        self.calls: list[tuple[str, int | None, int]] = []

    def enumerate(self, query: str, *, limit: int | None = None, min_body_matches: int = 0) -> Result:
        self.calls.append((query, limit, min_body_matches))
        return self.result


_DOCS = [Doc("docs/set up/streams.md", "Streams", 2, 3, "Streams > Set up & run"), Doc("notes/kv.md", "KV", 1, 0, "")]


async def test_every_document_comes_back_with_its_citation_fields() -> None:
    index = FakeIndex(Result("ok", _DOCS, 7, 40, 2, 1))
    rules = parse_config(
        "harness: {knowledge: {citations: [{pattern: '^docs/(?P<page>.*)\\.md$', replace: 'https://x.test/${page}#${anchor}'}]}}",
        Mode.MCP,
    ).harness.knowledge.citations
    seam: KnowledgeEnumerator = index
    tool = KnowledgeEnumerateTool(seam, citations=CitationRewriter(rules))
    result = await call_tool(tool, '{"query": "stream -kv", "limit": 2, "min_body_matches": 1}')
    assert not result.is_error
    assert index.calls == [("stream -kv", 2, 1)]
    body = json.loads(result.text)
    assert (body["status"], body["matched"], body["truncated"], body["indexed_documents"]) == ("ok", 7, True, 40)
    first, second = body["documents"]
    assert first == {
        "citation": "https://x.test/set%20up/streams#set-up--run",
        "index_ref": "docs/set up/streams.md#3",
        "path": "docs/set up/streams.md",
        "ref": short_ref("docs/set up/streams.md#3"),
        "title": "Streams",
        "section": "Streams > Set up & run",
        "sections": 2,
    }
    assert second["citation"] == second["index_ref"] == "notes/kv.md#0"  # no rule matched: the raw ref
    assert len(second["ref"]) == 6


async def test_soft_statuses_and_no_index() -> None:
    none = await call_tool(KnowledgeEnumerateTool(None), '{"query": "x"}')
    assert json.loads(none.text)["status"] == "index_not_built" and not none.is_error
    # An index that only searches (no enumerate) cannot answer either.
    assert (
        json.loads((await call_tool(KnowledgeEnumerateTool(FakeSearcher()), '{"query": "x"}')).text)["status"]
        == "index_not_built"
    )
    empty = await call_tool(
        KnowledgeEnumerateTool(FakeIndex(Result("query_empty", [], 0, 3, 200, 0))), '{"query": "-x"}'
    )
    body = json.loads(empty.text)
    assert body["status"] == "query_empty" and "no word to match" in body["note"]


async def test_bad_arguments_are_refused() -> None:
    tool = KnowledgeEnumerateTool(FakeIndex(Result("ok", [], 0, 0, 200, 0)))
    for arguments in (
        '{"query": ""}',
        '{"query": 4}',
        '{"query": "x", "limit": "ten"}',
        '{"query": "x", "limit": 1.5}',
    ):
        result = await call_tool(tool, arguments)
        assert result.is_error and "knowledge_enumerate" in result.text, arguments


async def test_a_failing_index_is_an_error_result_not_a_crash() -> None:
    class Broken:
        def enumerate(self, query: str, *, limit: int | None = None, min_body_matches: int = 0) -> Result:
            raise RuntimeError("database disk image is malformed")

    result = await call_tool(KnowledgeEnumerateTool(Broken()), '{"query": "x"}')
    assert result.is_error and "malformed" in result.text


def test_it_is_offered_with_knowledge_search_and_told_to_the_model() -> None:
    tools = agent_tool_set(knowledge=KnowledgeAccess(None))
    names = [entry.tool.name for entry in tools.entries]
    assert names == ["knowledge_search", KNOWLEDGE_ENUMERATE]
    (note,) = tools.notes
    assert note.startswith("You have a searchable knowledge base") and note.endswith(KNOWLEDGE_ENUMERATE_NOTE)
    assert list(tools.entries[1].tool.tags) == [TAG_IDEMPOTENT]


@pytest.mark.parametrize(
    ("replace", "path", "expected"),
    [
        ("$1", "docs/a b.md", "a%20b"),
        ("${1}x", "docs/a.md", "ax"),
        ("$$1", "docs/a.md", "$1"),
        ("https://h/${ordinal}/${heading}", "docs/a.md", "https://h/4/Why%3F"),
        ("$name/$1", "docs/a.md", "a/a"),
    ],
)
def test_replace_expands_like_go(replace: str, path: str, expected: str) -> None:
    rules = parse_config(
        f"harness: {{knowledge: {{citations: [{{pattern: '^docs/(?P<name>[^.]*)', replace: '{replace}'}}]}}}}", Mode.MCP
    ).harness.knowledge.citations
    assert CitationRewriter(rules).citation(path, 4, "Top > Why?") == expected


def test_the_first_matching_rule_wins() -> None:
    rules = parse_config(
        "harness: {knowledge: {citations: [{pattern: '^api/', replace: 'API'}, {pattern: '.', replace: 'ANY'}]}}",
        Mode.MCP,
    ).harness.knowledge.citations
    rewriter = CitationRewriter(rules)
    assert (rewriter.citation("api/x.md", 0), rewriter.citation("docs/x.md", 0)) == ("API", "ANY")


def test_anchors_are_github_style() -> None:
    assert github_anchor("Set up & run") == "set-up--run"
    assert github_anchor("Über Straße 2.0!") == "über-straße-20"
    assert github_anchor("snake_case-name") == "snake_case-name"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("{pattern: '(', replace: x}", "is not a valid regular expression"),
        ("{pattern: '^(a)', replace: '$2'}", 'citations[0]: replace "$2" refers to ${2}'),
        ("{pattern: 'a', replace: '${page}'}", "refers to ${page}, which the pattern"),
        ("{pattern: 'a'}", "replace"),
    ],
)
def test_bad_rules_fail_at_load_naming_the_rule(rule: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(f"harness: {{knowledge: {{citations: [{rule}]}}}}", Mode.MCP)
    assert "harness.knowledge.citations" in str(caught.value) and message in str(caught.value)


class _Hit(NamedTuple):
    citation: str
    heading_path: str
    content: str


class _Search(NamedTuple):
    hits: list[_Hit]
    status: str = "ok"
    tier: str = "lexical"
    degraded: str | None = None


class _JsonIndex(FakeSearcher):
    def search(self, query: str, *, top_k: int | None = None) -> _Search:
        return _Search([_Hit("docs/a b.md#2", "A > Why?", "text"), _Hit("docs/c.md#4..#6", "", "span")])


async def test_json_search_results_carry_the_rewritten_citation_fields() -> None:
    from fiskai_core.builtins import KnowledgeSearchTool

    rules = parse_config(
        "harness: {knowledge: {citations: [{pattern: '^docs/(.*)\\.md$', replace: 'https://x.test/$1#${anchor}'}]}}",
        Mode.MCP,
    ).harness.knowledge.citations
    tool = KnowledgeSearchTool(
        _JsonIndex(), max_injected_tokens=1000, result_format="json", citations=CitationRewriter(rules)
    )
    result = await call_tool(tool, '{"query": "x"}')
    first, second = json.loads(result.text)["results"]
    assert first == {
        "citation": "https://x.test/a%20b#why",
        "index_ref": "docs/a b.md#2",
        "path": "docs/a b.md",
        "ref": short_ref("docs/a b.md#2"),
        "section": "A > Why?",
        "content": "text",
    }
    assert (second["citation"], second["index_ref"]) == ("https://x.test/c#", "docs/c.md#4..#6")
    assert result.citations == ("docs/a b.md#2", "docs/c.md#4..#6")  # delivered refs stay raw
    # Without rules the plain Go shape is kept.
    plain = KnowledgeSearchTool(
        _JsonIndex(), max_injected_tokens=1000, result_format="json", citations=CitationRewriter()
    )
    assert list(json.loads((await call_tool(plain, '{"query": "x"}')).text)["results"][0]) == [
        "citation",
        "section",
        "content",
    ]


async def test_its_span_carries_the_reference_attributes_and_not_the_query() -> None:
    from collections.abc import Generator, Mapping
    from contextlib import contextmanager

    from fiskai_core.telemetry import NoTelemetry, using

    spans: list[tuple[str, dict[str, object]]] = []

    class Recorded:
        recording = True

        def __init__(self, attributes: dict[str, object]) -> None:
            self.attributes = attributes

        def set(self, key: str, value: object) -> None:
            self.attributes[key] = value

        def event(self, name: str, attributes: Mapping[str, object]) -> None: ...

        def error(self, error_type: str) -> None:
            self.attributes["error.type"] = error_type

    class Recording(NoTelemetry):
        @contextmanager
        def span(self, name: str, attributes: Mapping[str, object] | None = None) -> Generator[Recorded]:
            recorded = Recorded(dict(attributes or {}))
            yield recorded
            spans.append((name, recorded.attributes))

    tool = KnowledgeEnumerateTool(FakeIndex(Result("ok", _DOCS, 7, 40, 2, 1)))
    with using(Recording()):
        await call_tool(tool, '{"query": "secret words"}')
    ((name, attributes),) = spans
    assert name == "knowledge_enumerate"
    assert attributes == {
        "gen_ai.operation.name": "retrieval",
        "fisk.knowledge.enumerate.status": "ok",
        "fisk.knowledge.matched": 7,
        "fisk.knowledge.documents": 2,
        "fisk.knowledge.truncated": True,
        "fisk.knowledge.limit": 2,
        "fisk.knowledge.min_body_matches": 1,
        "fisk.knowledge.indexed_documents": 40,
    }
