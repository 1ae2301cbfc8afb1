"""The value every tool call produces, whatever happened."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ToolResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What a model sees after a tool call.

    A non-zero exit is a normal result carrying `exit_code`; `is_error` marks harness-side failures
    (arguments that cannot become an argv, a binary that cannot start, a timeout) whose `text` says what
    went wrong in words the model can act on.
    """

    text: str
    """The tool_result content: for a command, fisk-ai's JSON `{"command", "exit_code", "output"[, "truncated"]}`."""
    is_error: bool = False
    exit_code: int | None = None
    """The process exit code when a command ran; -1 when a signal not caused by fiskai killed it."""
