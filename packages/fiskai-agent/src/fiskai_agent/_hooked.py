"""The tool hooks on the loop's call path (reference 7.1).

`pre_tool_use` runs before argument validation and the gate, `post_tool_use` after execution and before
the trace and the journal, and the PII guard after it (`_pii`).

A rewrite to a tool this run does not have aborts the run (`HookAbort`), as in the original: a policy
that names a tool that does not exist is broken, and guessing would run something nobody chose.
"""

from __future__ import annotations

import dataclasses

from fiskai_agent._pii import guard_result
from fiskai_agent._prepared import Setup
from fiskai_agent._telemetry import ToolSpan
from fiskai_agent._tools import Entry
from fiskai_agent.errors import AgentError
from fiskai_agent.llm import ToolUseBlock
from fiskai_core.calls import Refusal, ToolCall
from fiskai_core.hooks import Decisions, Deny, ToolOutput, ToolUse, post_tool_use, pre_tool_use
from fiskai_core.tools import ToolResult

__all__ = ["HookAbort", "after_tool", "before_tool", "gated_as_original"]


class HookAbort(AgentError):
    """A hook's answer ends the run (a rewrite to an unknown tool)."""


async def before_tool(
    s: Setup, use: ToolUseBlock, entry: Entry, decisions: Decisions, trace: ToolSpan
) -> tuple[ToolUseBlock, Entry] | ToolResult:
    """The call the hooks leave (the same one when none is installed), or the denial the model gets."""
    hooks = s.options.hooks
    if not hooks.pre_tool_use:
        return use, entry
    event = ToolUse(tool=use.name, arguments=use.input, tool_use_id=use.id, session_id=s.session_id or "")
    decided = await pre_tool_use(hooks, event, decisions)
    if isinstance(decided, Deny):
        trace.refused("policy_denied")
        return ToolResult(output=f"not run: denied by policy: {decided.reason}", is_error=True)
    if decided == event:
        return use, entry
    rewritten = s.entries.get(decided.tool)
    if rewritten is None:
        raise HookAbort(f'a pre_tool_use hook rewrote "{use.name}" to "{decided.tool}", which this run does not have')
    trace.span.set("fisk.tool.rewritten", True)
    # The memory and kind attributes describe the tool that actually runs.
    trace.known(rewritten.tool.name, rewritten.kind, dict(decided.arguments))
    return ToolUseBlock(id=use.id, name=decided.tool, input=dict(decided.arguments)), rewritten


def gated_as_original(call: ToolCall | Refusal, original: Entry) -> ToolCall | Refusal:
    """The call, behind the gate if the original tool was gated: a hook can never strip a gate."""
    if isinstance(call, Refusal) or call.gate_tag is not None or original.gate_tag is None:
        return call
    return dataclasses.replace(call, gate_tag=original.gate_tag)


async def after_tool(s: Setup, use: ToolUseBlock, result: ToolResult, decisions: Decisions) -> ToolResult:
    """The result as the `post_tool_use` hooks, then the PII guard, leave it (the guard runs last, 7.1)."""
    options = s.options
    if options.hooks.post_tool_use:
        result = await _post_hooks(s, use, result, decisions)
    return guard_result(options.pii_mode, use.name, result, decisions, options.events)


async def _post_hooks(s: Setup, use: ToolUseBlock, result: ToolResult, decisions: Decisions) -> ToolResult:
    event = ToolOutput(
        tool=use.name,
        arguments=use.input,
        output=result.output,
        is_error=result.is_error,
        exit_code=result.exit_code,
        tool_use_id=use.id,
        session_id=s.session_id or "",
    )
    decided = await post_tool_use(s.options.hooks, event, decisions)
    if decided.output == result.output:
        return result
    return dataclasses.replace(result, output=decided.output)
