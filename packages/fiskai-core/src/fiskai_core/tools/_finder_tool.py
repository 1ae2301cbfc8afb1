"""`find_tools`: the harness tool a model uses to reach deferred tools when the server has no tool search.

The request carries the tools that are never deferred plus `find_tools`; the model describes what it
wants to do, gets back names and one-line descriptions, and from its next request on the harness sends
those tools' full definitions. The answer is JSON (`{"tools": [{"name", "description"}, ...]}`), which
is also what a journal keeps: `found_tool_names` reads the names back out of a journaled answer, so a
resumed run rebuilds the same loaded set without a record of its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from pydantic import JsonValue

from ._finder import ToolFinder
from ._result import ToolResult

__all__ = ["FIND_TOOLS", "FindToolsAnswer", "FindToolsTool", "found_tool_names", "not_loaded_result"]

FIND_TOOLS = "find_tools"

DEFAULT_LIMIT = 5
MAX_LIMIT = 20
_MAX_QUERY_CHARS = 500
_MAX_ARGUMENT_BYTES = 16 * 1024
"""A query is a few words; anything this large is not one, and is refused before it is parsed."""

_DESCRIPTION = (
    "Search the application's tools that are not loaded yet. Only some tools are in your tool list; many "
    "more exist. Before you call a tool that is not in your list, call find_tools with a few words saying "
    "what you want to do (for example 'delete a stream' or 'list the consumers of a stream'). It returns "
    "matching tool names with one-line descriptions, best first; from your next turn those tools are in "
    "your list and you can call them. Never guess a tool name; search again with other words if nothing fits."
)

_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "query": {
            "type": "string",
            "description": "What you want to do, in a few words: the action and the thing it acts on.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": f"How many tools to return, best first (default {DEFAULT_LIMIT}).",
        },
    },
    "required": ["query"],
}


@dataclass(frozen=True, slots=True)
class FindToolsAnswer:
    """A `find_tools` call answered: what the model reads, and the tools to load from the next request on."""

    result: ToolResult
    found: tuple[str, ...]
    """Names returned, best first; empty for an error or no match."""


class FindToolsTool:
    """The `find_tools` harness tool over a `ToolFinder` of the deferred tools."""

    __slots__ = ("_finder",)

    def __init__(self, finder: ToolFinder) -> None:
        """Answer searches from `finder`."""
        self._finder = finder

    @property
    def name(self) -> str:
        """Always `find_tools`."""
        return FIND_TOOLS

    @property
    def tags(self) -> Sequence[str]:
        """Harness tools carry no tags."""
        return ()

    @property
    def description(self) -> str:
        """Tells the model to search before calling a tool it has not been given."""
        return _DESCRIPTION

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        """`{"query": string, "limit"?: integer 1-20}`; shared, never mutate it."""
        return _SCHEMA

    @property
    def system_note(self) -> str:
        """A system-prompt block for runs that use `find_tools`.

        Local models follow the search-first rule more reliably when the system prompt says it too.
        """
        return (
            f"Only some of your tools are loaded: {len(self._finder)} more are available through the find_tools "
            "tool. When no loaded tool fits the task, call find_tools with a few words for the action and the "
            "thing it acts on, then call a tool it returns. Do not call a tool that is neither loaded nor returned "
            "by find_tools."
        )

    def answer(self, arguments: str | bytes | None) -> FindToolsAnswer:
        """Answer one call; malformed arguments give an error result, never an exception."""
        parsed = _parse(arguments)
        if isinstance(parsed, str):
            return FindToolsAnswer(ToolResult(text=parsed, is_error=True), ())
        query, limit = parsed
        matches = self._finder.find(query, limit=limit)
        body: dict[str, object] = {"tools": [{"name": m.name, "description": m.summary} for m in matches]}
        if not matches:
            body["hint"] = "no tool matched; search again with other words for the action and the thing it acts on"
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        return FindToolsAnswer(ToolResult(text=text), tuple(m.name for m in matches))

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """The model-facing result of `answer` (a driver that loads found tools calls `answer` itself)."""
        return self.answer(arguments).result


def _parse(arguments: str | bytes | None) -> tuple[str, int] | str:
    """The query and limit, or the error text a model can act on."""
    usage = 'call find_tools with {"query": "<what you want to do>"} and optionally "limit" (1-20)'
    if arguments is None or not arguments.strip():
        return f"find_tools needs a query; {usage}"
    if len(arguments) > _MAX_ARGUMENT_BYTES:
        return f"find_tools arguments are too large ({len(arguments)} bytes); {usage}"
    try:
        value: object = json.loads(arguments)
    except (ValueError, RecursionError):  # RecursionError: deeply nested input
        return f"find_tools arguments are not valid JSON; {usage}"
    if not isinstance(value, dict):
        return f"find_tools arguments must be a JSON object; {usage}"
    fields = cast("dict[str, object]", value)
    unknown = sorted(set(fields) - {"query", "limit"})
    if unknown:
        return f"find_tools got unknown argument(s) {', '.join(map(repr, unknown))}; {usage}"
    query = fields.get("query")
    if not isinstance(query, str) or not query.strip():
        return f'find_tools "query" must be a non-empty string; {usage}'
    if len(query) > _MAX_QUERY_CHARS:
        return f'find_tools "query" is too long ({len(query)} characters, at most {_MAX_QUERY_CHARS}); {usage}'
    limit = fields.get("limit", DEFAULT_LIMIT)
    if limit is None:
        limit = DEFAULT_LIMIT
    # bool is an int in Python and JSON true is not a count; 5.0 is a whole number a model may send.
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return f'find_tools "limit" must be an integer from 1 to {MAX_LIMIT}; {usage}'
    return query, limit


def found_tool_names(text: str) -> tuple[str, ...]:
    """The tool names in a `find_tools` answer's text (from a journal); empty when it is not one."""
    try:
        value: object = json.loads(text)
    except (ValueError, RecursionError):
        return ()
    if not isinstance(value, dict):
        return ()
    tools = cast("dict[str, object]", value).get("tools")
    if not isinstance(tools, list):
        return ()
    names: list[str] = []
    for entry in cast("list[object]", tools):
        if isinstance(entry, dict):
            name = cast("dict[str, object]", entry).get("name")
            if isinstance(name, str):
                names.append(name)
    return tuple(names)


def not_loaded_result(name: str) -> ToolResult:
    """The in-band refusal of a call to a deferred tool the model never found: nothing runs."""
    return ToolResult(
        # The name is the model's own words: quoted as JSON and capped, so it cannot reshape the message.
        text=f"tool {json.dumps(name[:100])} is not loaded, so nothing was run; call find_tools with what you want "
        "to do, then call one of the tools it returns",
        is_error=True,
    )
