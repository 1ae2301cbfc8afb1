"""The hook steps of a call (reference 7.1), for every face: before `prepare_call` and after `run_call`.

`pre_tool_use` runs after the registry lookup and before argument validation and the gate; a denial is a
`Refusal` (nothing runs, no one is asked), a rewrite is prepared in place of the original call, and the
gate still fires when the original tool was gated (`keep_gate`), so a hook can add a gate but never strip
one. `post_tool_use` runs on the result before the face answers, so the caller, logs and telemetry see the
same output. With no hooks installed both steps are a dictionary lookup.

A server cannot abort a run the way the agent loop does when a hook rewrites to a tool it does not have:
the call is refused instead, naming the tool, and serving goes on.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Collection, Mapping
from typing import Any

from fiskai_core._exact_json import plain_json
from fiskai_core.errors import ArgumentsError
from fiskai_core.hooks import Decisions, Deny, Hooks, ToolOutput, ToolUse, post_tool_use, pre_tool_use
from fiskai_core.tools import Tool, ToolArguments, ToolResult, parse_arguments, trigger_tag

from ._prepare import Refusal, ToolCall, prepare_call

__all__ = ["HookedCall", "hooked_output", "hooked_prepare", "keep_gate"]


@dataclasses.dataclass(frozen=True, slots=True)
class HookedCall:
    """What the hooks left of a call: the prepared call (or its refusal) and whether they rewrote it."""

    call: ToolCall | Refusal
    tool: str
    """The tool that runs (a rewrite's target)."""
    arguments: Mapping[str, Any]
    """Its arguments as plain JSON (what `post_tool_use` is shown)."""
    rewritten: bool = False
    denied: bool = False


def keep_gate(call: ToolCall | Refusal, original: Tool, confirm_tags: Collection[str] = ()) -> ToolCall | Refusal:
    """The call, behind the original tool's gate when that one was gated: a hook can never strip a gate."""
    if isinstance(call, Refusal) or call.gate_tag is not None:
        return call
    tag = trigger_tag(original.tags, confirm_tags)
    return call if tag is None else dataclasses.replace(call, gate_tag=tag)


async def hooked_prepare(
    hooks: Hooks,
    tool: Tool,
    arguments: ToolArguments | str | bytes | None,
    *,
    lookup: Callable[[str], Tool | None],
    decisions: Decisions,
    confirm_tags: Collection[str] = (),
    tool_use_id: str = "",
    session_id: str = "",
) -> HookedCall:
    """`prepare_call` behind the `pre_tool_use` hooks.

    Args:
        hooks: The installed hooks (none: exactly `prepare_call`).
        tool: The tool the caller named (already looked up).
        arguments: As `prepare_call` takes them.
        lookup: The face's own registry, for a rewrite's target (a face serves only what it may).
        decisions: Collects what each hook decided, for the face's journal or log.
        confirm_tags: `harness.confirm_tags`.
        tool_use_id: The caller's id for the call, when it has one (shown to the hook).
        session_id: The session the call belongs to, when there is one (shown to the hook).
    """
    if not hooks.pre_tool_use and not hooks.post_tool_use:
        return HookedCall(prepare_call(tool, arguments, confirm_tags=confirm_tags), tool.name, {})
    try:
        decoded = arguments if isinstance(arguments, ToolArguments) else parse_arguments(arguments)
    except ArgumentsError:
        # Not an object: the hooks have nothing to judge, and prepare_call refuses it in fisk's words.
        return HookedCall(prepare_call(tool, arguments, confirm_tags=confirm_tags), tool.name, {})
    plain = plain_json(dict(decoded.values))
    assert isinstance(plain, dict)
    event = ToolUse(tool=tool.name, arguments=plain, tool_use_id=tool_use_id, session_id=session_id)  # pyright: ignore[reportUnknownArgumentType]
    if not hooks.pre_tool_use:
        return HookedCall(prepare_call(tool, decoded, confirm_tags=confirm_tags), tool.name, event.arguments)
    decided = await pre_tool_use(hooks, event, decisions)
    if isinstance(decided, Deny):
        denial = ToolResult(output=f"not run: denied by policy: {decided.reason}", is_error=True)
        return HookedCall(Refusal(result=denial, kind="denied"), tool.name, event.arguments, denied=True)
    if decided == event:
        return HookedCall(prepare_call(tool, decoded, confirm_tags=confirm_tags), tool.name, event.arguments)
    target = lookup(decided.tool)
    if target is None:
        denial = ToolResult(
            output=f'not run: a pre_tool_use hook rewrote "{tool.name}" to "{decided.tool}", which is not available here',
            is_error=True,
        )
        return HookedCall(Refusal(result=denial, kind="denied"), decided.tool, decided.arguments, True, True)
    rewritten = parse_arguments(json.dumps(dict(decided.arguments), ensure_ascii=False))
    call = keep_gate(prepare_call(target, rewritten, confirm_tags=confirm_tags), tool, confirm_tags)
    return HookedCall(call, target.name, decided.arguments, rewritten=True)


async def hooked_output(
    hooks: Hooks,
    hooked: HookedCall,
    result: ToolResult,
    *,
    decisions: Decisions,
    tool_use_id: str = "",
    session_id: str = "",
) -> ToolResult:
    """The result as the `post_tool_use` hooks leave it (unchanged when none is installed)."""
    if not hooks.post_tool_use:
        return result
    event = ToolOutput(
        tool=hooked.tool,
        arguments=hooked.arguments,
        output=result.output,
        is_error=result.is_error,
        exit_code=result.exit_code,
        tool_use_id=tool_use_id,
        session_id=session_id,
    )
    decided = await post_tool_use(hooks, event, decisions)
    return result if decided.output == result.output else dataclasses.replace(result, output=decided.output)
