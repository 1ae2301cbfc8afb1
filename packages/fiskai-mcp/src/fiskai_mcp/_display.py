"""What a call will run, worked out before anyone is asked to approve it.

For a tool that can say its exact argv (`Confirmable`), the approval shows that argv rendered by
`render_command_line`, so what a human approves is what runs; any other tool shows its name and
arguments. A call that cannot become an argv, or leaves out a required parameter, fails here with the
tool's own message, before an approval is asked for and before it takes a slot.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from fiskai_core.confirm import render_command_line
from fiskai_core.errors import ArgumentsError
from fiskai_core.fisk import missing_required_message
from fiskai_core.tools import ArgumentValidator, Confirmable, Tool, ToolResult

__all__ = ["PreparedCall", "prepare_call"]


# The core protocols are structural only; these make them checkable with isinstance, as the house style asks.
@runtime_checkable
class _Confirmable(Confirmable, Protocol): ...


@runtime_checkable
class _ArgumentValidator(ArgumentValidator, Protocol): ...


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedCall:
    """One call, ready to be approved and run."""

    argv: Sequence[str]
    """The exact argv for a `Confirmable` tool; otherwise the tool name and its arguments as JSON."""
    display: str
    """The line a human approves and the log shows."""


def prepare_call(tool: Tool, arguments: str) -> PreparedCall | ToolResult:
    """The call's argv and display line, or the error result that ends it before approval."""
    if isinstance(tool, _ArgumentValidator):
        missing = tool.missing_required(arguments)
        if missing:
            return ToolResult(text=missing_required_message(tool.name, tool.input_schema, missing), is_error=True)
    if isinstance(tool, _Confirmable):
        try:
            argv = list(tool.command_argv(arguments))
        except ArgumentsError as err:
            return ToolResult(text=str(err), is_error=True)
        return PreparedCall(argv=argv, display=render_command_line(argv))
    canonical = json.dumps(json.loads(arguments), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    argv = [tool.name, canonical]
    return PreparedCall(argv=argv, display=render_command_line(argv))
