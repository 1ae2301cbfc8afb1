"""`call`: one tool call through the real call path, for tests that exercise a tool directly."""

from __future__ import annotations

from fiskai_core.calls import Refusal, prepare_call, run_call
from fiskai_core.tools import CallContext, Tool, ToolResult

__all__ = ["call"]


async def call(tool: Tool, arguments: str | bytes | None = None, context: CallContext | None = None) -> ToolResult:
    """Prepare and run one ungated call of `tool` as a driver would; a refusal is its result."""
    prepared = prepare_call(tool, arguments)
    if isinstance(prepared, Refusal):
        return prepared.result
    return await run_call(prepared, context)
