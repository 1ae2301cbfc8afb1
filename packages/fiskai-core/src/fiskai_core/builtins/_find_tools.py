"""`find_tools`: the harness tool a model uses to reach deferred tools when the server has no tool search.

The request carries the tools that are never deferred plus `find_tools`; the model describes what it
wants to do, gets back names and one-line descriptions, and from its next request on the harness sends
those tools' full definitions. The answer is JSON (`{"tools": [{"name", "description"}, ...]}`), which
is also what a journal keeps: `found_tool_names` reads the names back out of a journaled answer, so a
resumed run rebuilds the same loaded set without a record of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

from pydantic import JsonValue
from typing_extensions import override

from fiskai_core._gojson import DecodedValue, JsonNumber
from fiskai_core.errors import ArgumentsError
from fiskai_core.tools import TAG_IDEMPOTENT, CallContext, ToolArguments, ToolFinder, ToolResult

from ._base import BuiltinTool, json_result, quoted_trace

__all__ = ["FIND_TOOLS", "FindToolsAnswer", "FindToolsTool", "found_tool_names", "not_loaded_result"]

FIND_TOOLS = "find_tools"

DEFAULT_LIMIT = 5
MAX_LIMIT = 20
_MAX_QUERY_CHARS = 500

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


class FindToolsTool(BuiltinTool):
    """The `find_tools` harness tool over a `ToolFinder` of the deferred tools."""

    _name = FIND_TOOLS
    _description = _DESCRIPTION
    _schema = _SCHEMA
    _tags = (TAG_IDEMPOTENT,)

    def __init__(self, finder: ToolFinder) -> None:
        """Answer searches from `finder`."""
        self._finder = finder

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

    @override
    def check(self, arguments: ToolArguments) -> None:
        """A query of at most 500 characters and an optional limit of 1 to 20."""
        _parse(arguments)

    @override
    def display(self, arguments: ToolArguments) -> str:
        """`find_tools("<query>")`."""
        query = arguments.values.get("query")
        return quoted_trace(self._name, query if isinstance(query, str) else "")

    def find(self, arguments: ToolArguments) -> FindToolsAnswer:
        """Answer one call: what the model reads, and the tools to load from the next request on."""
        try:
            query, limit = _parse(arguments)
        except ArgumentsError as err:
            return FindToolsAnswer(ToolResult(output=str(err), is_error=True), ())
        matches = self._finder.find(query, limit=limit)
        body: dict[str, object] = {"tools": [{"name": m.name, "description": m.summary} for m in matches]}
        if not matches:
            body["hint"] = "no tool matched; search again with other words for the action and the thing it acts on"
        return FindToolsAnswer(json_result(body), tuple(m.name for m in matches))

    @override
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """The model-facing result of `find` (the loop, which loads what was found, calls `find` itself)."""
        return self.find(arguments).result


_USAGE = 'call find_tools with {"query": "<what you want to do>"} and optionally "limit" (1-20)'


def _parse(arguments: ToolArguments) -> tuple[str, int]:
    """The query and limit.

    Raises:
        ArgumentsError: the text a model can act on.
    """
    fields = arguments.values
    if not fields:
        raise ArgumentsError(f"find_tools needs a query; {_USAGE}")
    unknown = sorted(set(fields) - {"query", "limit"})
    if unknown:
        raise ArgumentsError(f"find_tools got unknown argument(s) {', '.join(map(repr, unknown))}; {_USAGE}")
    query = fields.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ArgumentsError(f'find_tools "query" must be a non-empty string; {_USAGE}')
    if len(query) > _MAX_QUERY_CHARS:
        raise ArgumentsError(
            f'find_tools "query" is too long ({len(query)} characters, at most {_MAX_QUERY_CHARS}); {_USAGE}'
        )
    return query, _limit(fields.get("limit"))


def _limit(raw: DecodedValue) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    # JSON true is not a count; 5.0 is a whole number a model may send.
    number = _whole(raw.text) if isinstance(raw, JsonNumber) else None
    if number is None or not 1 <= number <= MAX_LIMIT:
        raise ArgumentsError(f'find_tools "limit" must be an integer from 1 to {MAX_LIMIT}; {_USAGE}')
    return number


def _whole(text: str) -> int | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


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
        output=f"tool {json.dumps(name[:100])} is not loaded, so nothing was run; call find_tools with what you want "
        "to do, then call one of the tools it returns",
        is_error=True,
    )
