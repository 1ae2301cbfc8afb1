"""The run's tool table: every tool with its kind, how it is shown, and its optional capabilities.

Capabilities are structural: a tool that has `command_argv` can be put to an operator as an exact
command line (`Confirmable`); one that has `missing_required` is checked for required parameters
before the gate (`ArgumentValidator`); one that has `trace_line` renders its own one-line trace. A fisk
command tool also receives the call's effect id in its environment (`FISKAI_EFFECT_ID`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, cast

from pydantic import JsonValue

from fiskai_agent.events import Presentation, ToolKind
from fiskai_agent.llm import ToolDef
from fiskai_core.builtins import KNOWLEDGE_SEARCH
from fiskai_core.confirm import render_command_line
from fiskai_core.fisk import missing_required_message, trace_line, trace_line_short
from fiskai_core.fisk.execution import CommandTool
from fiskai_core.sanitize import sanitize_for_terminal
from fiskai_core.tools import FIND_TOOLS, TAG_NO_DEFER, Tool

__all__ = [
    "EFFECT_ID_ENV",
    "TAG_IDEMPOTENT",
    "Entry",
    "argv_of",
    "display_of",
    "missing_of",
    "tool_def",
    "tools_hash_input",
    "with_effect_id",
]

EFFECT_ID_ENV = "FISKAI_EFFECT_ID"
"""The variable a command tool's process finds its call's stable effect id in (an idempotency key)."""
TAG_IDEMPOTENT = "ai:idempotent"
"""A command safe to run twice: after a crash its unfinished call is re-run without asking."""
_READ_ONLY_BUILTINS = frozenset({"memory_list", "memory_read", KNOWLEDGE_SEARCH, FIND_TOOLS})
"""Built-ins with no side effect: safe to repeat after a crash without asking."""
_TRACE_MAX_RUNES = 200
_DISPLAY_MAX_RUNES = 2000


class _Confirmable(Protocol):
    def command_argv(self, arguments: str | bytes | None) -> Sequence[str]: ...


class _Validator(Protocol):
    def missing_required(self, arguments: str | bytes | None) -> Sequence[str]: ...


class _Traced(Protocol):
    def trace_line(self, arguments: str | bytes | None) -> str: ...


def _confirmable(tool: object) -> TypeGuard[_Confirmable]:
    return callable(getattr(tool, "command_argv", None))


def _validator(tool: object) -> TypeGuard[_Validator]:
    return callable(getattr(tool, "missing_required", None))


def _traced(tool: object) -> TypeGuard[_Traced]:
    return callable(getattr(tool, "trace_line", None))


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One callable tool in this run."""

    tool: Tool
    kind: ToolKind
    presentation: Presentation
    deferrable: bool
    gate_tag: str | None = None
    """The tag that puts it behind the confirm gate, if any."""
    agent: str = ""
    """The peer agent of a remote tool."""

    @property
    def idempotent(self) -> bool:
        """Safe to run twice: tagged `ai:idempotent`, or a read-only built-in."""
        if self.kind == "builtin":
            return self.tool.name in _READ_ONLY_BUILTINS
        return TAG_IDEMPOTENT in self.tool.tags

    @property
    def no_defer(self) -> bool:
        """Tagged `ai:no_defer`."""
        return TAG_NO_DEFER in self.tool.tags


def argv_of(tool: Tool, arguments: str) -> Sequence[str] | None:
    """The exact argv a Confirmable tool would run.

    Raises:
        fiskai_core.errors.ArgumentsError: The arguments cannot become an argv.
    """
    if not _confirmable(tool):
        return None
    return list(tool.command_argv(arguments))


def missing_of(tool: Tool, arguments: str) -> str | None:
    """The missing-required rejection text, or None when nothing required is missing (or not checkable)."""
    name, schema = tool.name, tool.input_schema
    if not _validator(tool):
        return None
    missing = list(tool.missing_required(arguments))
    if not missing:
        return None
    return missing_required_message(name, schema, missing)


def display_of(entry: Entry, arguments: str, argv: Sequence[str] | None) -> tuple[str, str]:
    """The full and the elided display line of a call (sanitized, safe to print)."""
    tool = entry.tool
    if isinstance(tool, CommandTool):
        tail = list(argv[1:]) if argv is not None else None
        return trace_line(tool.spec.path, tail), trace_line_short(tool.spec.path, tail)
    if argv is not None:
        line = sanitize_for_terminal(render_command_line(argv), _DISPLAY_MAX_RUNES)
        return line, line
    if _traced(tool):
        line = sanitize_for_terminal(tool.trace_line(arguments), _DISPLAY_MAX_RUNES)
        return line, line
    if tool.name in (KNOWLEDGE_SEARCH, FIND_TOOLS):
        line = _query_trace(tool.name, arguments)
        return line, line
    return tool.name, tool.name


def _query_trace(name: str, arguments: str) -> str:
    """`knowledge_search("...")` / `find_tools("...")`: the query a search tool was asked."""
    try:
        data: object = json.loads(arguments)
    except ValueError:
        data = None
    query = cast("dict[str, Any]", data).get("query") if isinstance(data, dict) else None
    shown = sanitize_for_terminal(query, _TRACE_MAX_RUNES) if isinstance(query, str) else ""
    return f'{name}("{shown}")'


def with_effect_id(tool: Tool, effect_id: str) -> Tool:
    """The tool to execute for one call: a command tool gets `FISKAI_EFFECT_ID` in its environment."""
    if isinstance(tool, CommandTool):
        return dataclasses.replace(tool, env={**tool.env, EFFECT_ID_ENV: effect_id})
    return tool


def tool_def(entry: Entry, *, defer: bool) -> ToolDef:
    """The definition the model receives."""
    tool = entry.tool
    return ToolDef(name=tool.name, description=tool.description, input_schema=tool.input_schema, defer_loading=defer)


def tools_hash_input(defs: Sequence[ToolDef]) -> list[Mapping[str, JsonValue]]:
    """What the fingerprint's `tools_hash` covers: every definition, in request order (the original's keys)."""
    return [
        {
            "Name": d.name,
            "Description": d.description,
            "InputSchema": cast("dict[str, JsonValue]", dict(d.input_schema)),
            "DeferLoading": d.defer_loading,
        }
        for d in defs
    ]
