"""The command line a human approves, as exactly as the tool can say it."""

from __future__ import annotations

import json

from fiskai_core.tools import Tool, ToolResult

__all__ = ["command_display"]


def command_display(tool: Tool, arguments: str) -> str | ToolResult:
    """What the approval question shows for this call, or an error result when it cannot be built."""
    try:
        decoded: object = json.loads(arguments)
    except ValueError as err:
        return ToolResult(text=f"invalid arguments for tool {tool.name!r}: {err}", is_error=True)
    return f"{tool.name} {json.dumps(decoded, ensure_ascii=False, sort_keys=True, separators=(',', ':'))}"
