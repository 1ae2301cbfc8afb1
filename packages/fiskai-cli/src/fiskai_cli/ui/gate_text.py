"""Gate decisions in an operator's words: the channel names and the line a denied call gets.

A call the gate refused never started, so its journal has no intent record: only the assistant turn
that asked for it and a result carrying the decision. Both session views (`session show --no-tui
--transcript` and the full-screen viewer) name it with this line, so a denial never reads as a bare
result.
"""

from __future__ import annotations

import json
from typing import cast

from fiskai_runstate.records import ToolResultRecord

__all__ = ["CHANNELS", "denial_line", "is_denial"]

CHANNELS = {
    "ungated": "not gated",
    "session": "session allow",
    "rule": "persisted rule",
    "prompt": "terminal prompt",
    "no_terminal": "no terminal",
    "policy": "policy",
    "elicitation": "MCP elicitation",
    "input_required": "MCP input required",
    "operator": "host-side approver",
}
"""Journal channel to the words an operator reads."""


def is_denial(result: ToolResultRecord) -> bool:
    """Whether the result is a gate decision that did not let the call run."""
    return result.gate is not None and result.gate.get("allowed") is not True


def denial_line(tool: str, result: ToolResultRecord) -> str:
    """`denied TOOL (terminal prompt, tag ai:confirm, argv 7eda908c242a): <the reason the model got>`.

    Not sanitized: callers print it through `fiskai_core.sanitize` like every journal text.
    """
    gate = result.gate or {}
    channel = str(gate.get("channel", ""))
    how = [CHANNELS.get(channel, channel) or "gate"]
    if isinstance(tag := gate.get("tag"), str):
        how.append(f"tag {tag}")
    if isinstance(digest := gate.get("digest"), str) and digest:
        how.append(f"argv {digest[:12]}")
    reason = _reason(result.result.get("content"))
    return f"denied {tool or result.tool_use_id} ({', '.join(how)})" + (f": {reason}" if reason else "")


def _reason(content: object) -> str:
    """The `reason` of a denial body (`{"allowed": false, "reason": ...}`), else the content as text."""
    if not isinstance(content, str):
        return json.dumps(content, ensure_ascii=False) if content is not None else ""
    try:
        body: object = json.loads(content)
    except ValueError:
        return content
    reason = cast("dict[str, object]", body).get("reason") if isinstance(body, dict) else None
    return reason if isinstance(reason, str) else content
