"""`knowledge_enumerate`: every document of the knowledge index a match query selects (reference 7.3).

The tool form of `knowledge match`: where `knowledge_search` returns the best few excerpts, this returns
the complete set of matching documents, so a model can count, list, or establish that something is
absent. Offered with `knowledge_search` whenever knowledge is enabled. Its own `knowledge_enumerate`
span carries the reference's attributes; the query is content, so it is not one of them.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio.to_thread
from pydantic import JsonValue
from typing_extensions import override

from fiskai_core._gojson import JsonNumber
from fiskai_core.errors import ArgumentsError
from fiskai_core.knowledge import KnowledgeEnumeration, KnowledgeEnumerator
from fiskai_core.telemetry import current as current_telemetry
from fiskai_core.tools import TAG_IDEMPOTENT, CallContext, ToolArguments, ToolResult

from ._base import BuiltinTool, json_result, quoted_trace
from ._citations import CitationRewriter

__all__ = ["KNOWLEDGE_ENUMERATE", "KNOWLEDGE_ENUMERATE_NOTE", "KnowledgeEnumerateTool"]

KNOWLEDGE_ENUMERATE = "knowledge_enumerate"
KNOWLEDGE_ENUMERATE_NOTE = (
    "Before you say the knowledge base has nothing on a subject, or when you need every document that mentions "
    "something (to count or list them), call knowledge_enumerate: it returns the complete set of matching "
    "documents, not the best few. Then read what you need with knowledge_search."
)
_NOTES = {
    "index_not_built": "the knowledge index has not been built yet; run: fiskai knowledge index",
    "corpus_empty": "the knowledge index holds no documents",
    "query_empty": 'the query has no word to match; give words, a "quoted phrase", or body:/heading: words',
}

_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "query": {
            "type": "string",
            "description": 'Words that must all appear in a document; "quoted phrase" for adjacent words within one '
            "section; -word to exclude documents containing it; body:word or heading:word to match only section "
            "text or only headings. Matching is stemmed and case-insensitive.",
        },
        "limit": {
            "type": "integer",
            "description": "Most documents to list (default 200, at most 1000); the count of all matches is "
            "always given.",
        },
        "min_body_matches": {
            "type": "integer",
            "description": "Only documents with at least this many sections whose text (not heading) matches.",
        },
    },
    "required": ["query"],
}


class KnowledgeEnumerateTool(BuiltinTool):
    """`knowledge_enumerate` over an injected index (or `None` when none is built)."""

    _name = KNOWLEDGE_ENUMERATE
    _description = (
        "List every document in the operator's knowledge base that matches a query: the complete set, not a "
        "ranked top few. Each document comes with its citation, title and how many of its sections match. Use it "
        "before concluding the knowledge base lacks something, then read documents with knowledge_search."
    )
    _schema = _SCHEMA
    _tags = (TAG_IDEMPOTENT,)

    def __init__(self, index: object | None, *, citations: CitationRewriter | None = None) -> None:
        """Bind the tool to an index.

        Any `KnowledgeEnumerator`; None, or an index that cannot enumerate, answers `index_not_built`.
        """
        self._index = index if isinstance(index, KnowledgeEnumerator) else None
        self._cite = citations or CitationRewriter()

    @override
    def check(self, arguments: ToolArguments) -> None:
        """A string `query`; whole numbers for `limit` and `min_body_matches` when given."""
        _query(arguments)
        _count(arguments, "limit")
        _count(arguments, "min_body_matches")

    @override
    def display(self, arguments: ToolArguments) -> str:
        """`knowledge_enumerate("<query>")`."""
        query = arguments.values.get("query")
        return quoted_trace(self._name, query if isinstance(query, str) else "")

    @override
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """The matching documents; a soft status when there is nothing to enumerate."""
        query = _query(arguments)
        limit, floor = _count(arguments, "limit"), _count(arguments, "min_body_matches") or 0
        index = self._index
        with current_telemetry().span(KNOWLEDGE_ENUMERATE, {"gen_ai.operation.name": "retrieval"}) as span:
            if index is None:
                span.set("fisk.knowledge.enumerate.status", "index_not_built")
                return json_result({"status": "index_not_built", "note": _NOTES["index_not_built"], "documents": []})
            try:
                result: KnowledgeEnumeration = await anyio.to_thread.run_sync(
                    lambda: index.enumerate(query, limit=limit, min_body_matches=floor)
                )
            # An injected seam (a damaged index) fails as the model's error result, not the run's end.
            except Exception as err:  # noqa: BLE001
                span.error("enumerate")
                return ToolResult(output=f"knowledge_enumerate: {err}", is_error=True)
            documents = [self._document(doc) for doc in result.documents]
            for key, value in (
                ("fisk.knowledge.enumerate.status", result.status),
                ("fisk.knowledge.matched", result.matched),
                ("fisk.knowledge.documents", len(documents)),
                ("fisk.knowledge.truncated", result.truncated),
                ("fisk.knowledge.limit", result.limit),
                ("fisk.knowledge.min_body_matches", result.min_body_matches),
                ("fisk.knowledge.indexed_documents", result.indexed_documents),
            ):
                span.set(key, value)
        body: dict[str, Any] = {"status": result.status}
        if result.status in _NOTES:
            body["note"] = _NOTES[result.status]
        body.update(
            matched=result.matched,
            truncated=result.truncated,
            indexed_documents=result.indexed_documents,
            documents=documents,
        )
        return json_result(body)

    def _document(self, doc: Any) -> dict[str, object]:
        entry: dict[str, object] = dict(self._cite.cite(doc.path, doc.first, doc.heading))
        entry["title"] = doc.title
        if doc.heading:
            entry["section"] = doc.heading
        entry["sections"] = doc.sections
        return entry


def _query(arguments: ToolArguments) -> str:
    query = arguments.values.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ArgumentsError(
            'invalid knowledge_enumerate input: give {"query": "<words to match>"} with a non-empty string'
        )
    return query


def _count(arguments: ToolArguments, key: str) -> int | None:
    value = arguments.values.get(key)
    if value is None:
        return None
    number = None
    if isinstance(value, JsonNumber):
        with contextlib.suppress(ValueError):
            parsed = float(value.text)
            number = int(parsed) if parsed.is_integer() and abs(parsed) < 1 << 31 else None
    if number is None:
        raise ArgumentsError(f"invalid knowledge_enumerate input: {key} must be a whole number, such as 3")
    return number
