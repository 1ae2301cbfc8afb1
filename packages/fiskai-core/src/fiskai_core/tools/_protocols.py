"""What a driver needs of a tool, and of a selection rule.

Structural: a tool kind satisfies `Tool` without importing it. Every driver (the agent loop, the MCP
server, the A2A server, `fiskai tools call`) consumes tools through this shape and the one call path
(`fiskai_core.calls`), so a fisk command, a built-in and a remote tool look the same to them: the path
decodes the arguments once, asks the tool to `plan` the call (check it and say exactly what it will do),
puts the plan to the gate, and `invoke`s it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import JsonValue

from ._arguments import ToolArguments
from ._result import ToolResult

__all__ = ["CallContext", "CallPlan", "FilterRule", "Selectable", "Tool"]


class Selectable(Protocol):
    """What selection rules look at: a name and tags (a tool, or a command before it is bound to a binary)."""

    @property
    def name(self) -> str:
        """The model-facing name (for a fisk command, its path joined with `_`)."""
        ...

    @property
    def tags(self) -> Sequence[str]:
        """Tags in declaration order; see `fiskai_core.tools` for the reserved ones."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPlan:
    """What one call will do, worked out before anyone is asked to approve it. Pure data."""

    arguments: ToolArguments
    """The decoded arguments (numbers as written)."""
    argv: tuple[str, ...] | None = None
    """The exact command line it runs, binary first; None for a tool that runs no command."""
    display: str
    """The call as one line, safe for a terminal (the full command line, or `name("query")`)."""
    display_short: str = ""
    """The same line with long values elided; empty means `display`."""
    gate_argv: tuple[str, ...] | None = None
    """For a tool that runs no command: what approvals and rules match on instead (the tool name, then one
    `--json.path=value` token per argument value); None: the name and the canonical arguments."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    """What the caller knows about one call beyond its arguments."""

    effect_id: str = ""
    """A stable id for the call's effect (an idempotency key), exported to commands as `FISKAI_EFFECT_ID`."""
    delivered: frozenset[str] = frozenset()
    """Knowledge citations this conversation already received (a search skips them)."""


class Tool(Selectable, Protocol):
    """A named, described, schema-bound action a model may call."""

    @property
    def description(self) -> str:
        """The description a model reads, ending with a `Tags: ...` line when the tool has tags."""
        ...

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        """The JSON Schema of the tool's arguments (an object schema). Never mutate it."""
        ...

    def plan(self, arguments: ToolArguments) -> CallPlan:
        """Check a call and say exactly what it will do; runs nothing.

        Raises:
            MissingArgumentsError: required parameters are absent (checked first).
            ArgumentsError: the arguments do not fit the tool; the message is for the model.
        """
        ...

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        """Carry out a plan this tool made.

        Never raises for anything a model could cause: a non-zero exit or a failure to start is a
        `ToolResult`; only cancellation propagates.
        """
        ...


class FilterRule(Protocol):
    """An include or exclude rule: name regexes and exact tags (`""` matches untagged tools)."""

    @property
    def tools(self) -> Sequence[str]: ...

    @property
    def tags(self) -> Sequence[str]: ...
