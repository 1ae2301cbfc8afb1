"""The value every tool call produces, whatever happened."""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["ToolResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What a call produced, as fields; `text` is what a model reads, derived from them.

    A call that ran a command carries `command`, `exit_code`, `output` and `truncated`, and its text is
    fisk-ai's JSON `{"command", "exit_code", "output"[, "truncated"]}`; any other result's text is its
    `output`. A non-zero exit is a normal result; `is_error` marks harness-side failures (arguments that
    cannot become an argv, a binary that cannot start, a timeout) whose `output` says what went wrong in
    words the model can act on. Transports that carry the fields themselves (A2A's `exec`) take them from
    here instead of parsing `text`.
    """

    output: str
    """A command's combined (capped) output, a built-in's answer, or what went wrong."""
    is_error: bool = False
    exit_code: int | None = None
    """The process exit code when a command ran; -1 when a signal not caused by fiskai killed it."""
    command: str | None = None
    """The command line that ran (capped, without the binary), when the call ran one."""
    truncated: bool = False
    """True when the middle of `output` was dropped by the output cap."""
    citations: tuple[str, ...] = ()
    """Knowledge sources this result delivered (journaled beside it, never shown to the model)."""

    @property
    def text(self) -> str:
        """The tool_result content a model receives."""
        if self.command is None:
            return self.output
        body: dict[str, object] = {"command": self.command, "exit_code": self.exit_code or 0, "output": self.output}
        if self.truncated:
            body["truncated"] = True
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
