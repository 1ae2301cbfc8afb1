"""Step three of a call: invoke the planned call, bounded, with every failure in band."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from fiskai_core.tools import CallContext, ToolResult

from ._prepare import ToolCall
from ._slots import CallSlots, SlotsBusyError

__all__ = ["run_call"]


async def run_call(
    call: ToolCall,
    context: CallContext | None = None,
    *,
    time_limit: float | None = None,
    slots: CallSlots | None = None,
    on_start: Callable[[], None] | None = None,
) -> ToolResult:
    """Run a prepared (and, if gated, approved) call.

    Args:
        call: From `prepare_call`.
        context: The effect id and delivered citations the tool may use.
        time_limit: Seconds the call may run before it is stopped (its process group killed); None: no limit.
        slots: A bounded place to run in (servers); a call that cannot get one in time is answered busy.
        on_start: Told when the call really starts (it has its place), for a log line that must not lie.

    Returns:
        The tool's result, or an error result saying the call was stopped, failed or found no slot.
    """
    context = context or CallContext()
    if slots is None:
        if on_start is not None:
            on_start()
        return await _invoke(call, context, time_limit)
    try:
        async with slots.place():
            if on_start is not None:
                on_start()
            return await _invoke(call, context, time_limit)
    except SlotsBusyError as err:
        return ToolResult(output=str(err), is_error=True)


async def _invoke(call: ToolCall, context: CallContext, time_limit: float | None) -> ToolResult:
    name = call.name
    result: ToolResult | None = None
    with anyio.move_on_after(time_limit if time_limit else float("inf")):
        try:
            result = await call.tool.invoke(call.plan, context)
        # The call boundary: a tool must not raise, but one that does (a bug, a broken seam) still owes the
        # caller an in-band error result, and every other call goes on.
        except Exception as err:  # noqa: BLE001
            return ToolResult(
                output=f'tool "{name}" failed: {type(err).__name__}: {err}. The command may not have run.',
                is_error=True,
            )
    if result is None:
        return ToolResult(
            output=f'tool "{name}" did not finish within {time_limit:g}s and was stopped; its output is lost. '
            "Narrow the request or ask the operator to raise the tool timeout.",
            is_error=True,
        )
    return result
