"""What a driver needs of a tool, and of a selection rule.

Structural: a tool kind satisfies `Tool` without importing it. The agent loop, the MCP server and the
A2A server all consume tools through this shape, so a fisk command, a built-in and a remote tool look
the same to them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from pydantic import JsonValue

from ._result import ToolResult

__all__ = ["ArgumentValidator", "Confirmable", "FilterRule", "Selectable", "Tool"]


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

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """Run the tool with the model's raw JSON arguments.

        Never raises for anything a model could cause: bad arguments, a non-zero exit or a failure to
        start become a `ToolResult`; only cancellation propagates.
        """
        ...


class FilterRule(Protocol):
    """An include or exclude rule: name regexes and exact tags (`""` matches untagged tools)."""

    @property
    def tools(self) -> Sequence[str]: ...

    @property
    def tags(self) -> Sequence[str]: ...


@runtime_checkable
class Confirmable(Protocol):
    """A tool that can say, before running, exactly what it would run (for a confirmation prompt).

    Called by a confirmation gate before `execute`, from the same task, with the same raw arguments.
    """

    def command_argv(self, arguments: str | bytes | None) -> Sequence[str]:
        """The exact argv `execute` would run for `arguments`, binary first.

        Raises:
            ArgumentsError: The arguments cannot become an argv (`execute` would return this as an
                error result and run nothing).
        """
        ...


@runtime_checkable
class ArgumentValidator(Protocol):
    """A tool that can name the required parameters a call leaves out (the agent runner's pre-check)."""

    def missing_required(self, arguments: str | bytes | None) -> Sequence[str]:
        """The required parameters `arguments` does not supply, in schema order.

        Presence counts, not value (`null`, `""`, `false`, `0`, `[]` all supply one). Empty or `null`
        input supplies nothing; input that is not exactly one JSON object reports nothing (execution
        then rejects it in the tool's own words).
        """
        ...
