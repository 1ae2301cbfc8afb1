"""What every built-in tool shares: a fixed name, description and schema, its own argument checks, an answer.

A built-in runs no command: its plan has no argv, and its display line is its name (or, for a search,
`name("query")`). Tags say what the harness needs to know (`ai:idempotent`: safe to repeat after a
crash); built-ins are never gated.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from fiskai_core.errors import ArgumentsError
from fiskai_core.sanitize import sanitize_for_terminal
from fiskai_core.tools import CallContext, CallPlan, ToolArguments, ToolResult

__all__ = ["BuiltinTool", "json_result", "quoted_trace", "string_argument"]

_TRACE_MAX_RUNES = 200


class BuiltinTool(ABC):
    """Base of the built-in tools. Subclasses set the class attributes and write `answer`."""

    _name: str
    _description: str
    _schema: Mapping[str, JsonValue]
    _tags: tuple[str, ...] = ()
    asks_operator: bool = False
    """It puts a question to the operator itself (the UI shows the question, not a trace line)."""

    @property
    def name(self) -> str:
        """The tool name."""
        return self._name

    @property
    def tags(self) -> Sequence[str]:
        """What the harness needs to know about it (never a gating tag)."""
        return self._tags

    @property
    def description(self) -> str:
        """What the model reads about the tool."""
        return self._description

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        """The argument schema (shared; never mutate it)."""
        return self._schema

    def check(self, arguments: ToolArguments) -> None:  # noqa: B027 - a hook; accepting everything is the default
        """Refuse arguments the tool cannot use, in its own words (raise `ArgumentsError`). Default: accept."""

    def display(self, arguments: ToolArguments) -> str:
        """The call as one terminal-safe line; the name by default."""
        return self._name

    def plan(self, arguments: ToolArguments) -> CallPlan:
        """Check the arguments; a built-in's plan is its display line."""
        self.check(arguments)
        return CallPlan(arguments=arguments, display=self.display(arguments))

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        """Answer the planned call."""
        return await self.answer(plan.arguments, context)

    @abstractmethod
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """The tool's work; every outcome a model could cause is a result."""


def json_result(body: Mapping[str, object]) -> ToolResult:
    """A non-error result whose text is `body` as compact JSON."""
    return ToolResult(output=json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def string_argument(tool: str, arguments: ToolArguments, key: str, default: str = "") -> str:
    """A string argument, `default` when absent or null.

    Raises:
        ArgumentsError: `invalid <tool> input: "<key>" must be a string`.
    """
    value = arguments.values.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ArgumentsError(f'invalid {tool} input: "{key}" must be a string')
    return value


def quoted_trace(name: str, text: str) -> str:
    """`name("text")` with the text made terminal-safe and capped (a search's display line)."""
    return f'{name}("{sanitize_for_terminal(text, _TRACE_MAX_RUNES)}")'
