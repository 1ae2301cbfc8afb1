"""One call through the real call path, as an ungated driver makes it (for tests of tools)."""

from __future__ import annotations

from fiskai_core.calls import Refusal, prepare_call, run_call
from fiskai_core.tools import CallContext, Tool, ToolArguments, ToolResult

__all__ = ["call_tool"]


async def call_tool(
    tool: Tool, arguments: ToolArguments | str | bytes | None, context: CallContext | None = None
) -> ToolResult:
    """`prepare_call` then `run_call`, no gate: the refusal's result when the call cannot go on.

    Tests of a tool use this rather than `invoke`, so they see what a model would: the one decode, the
    tool's own checks and the in-band errors of the call boundary.
    """
    call = prepare_call(tool, arguments)
    if isinstance(call, Refusal):
        return call.result
    return await run_call(call, context)
