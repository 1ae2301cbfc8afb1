"""Running one point's hooks in order, and the journal form of every decision they took."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ._api import (
    Abort,
    ControlHook,
    Deny,
    Hooks,
    PromptSubmit,
    ReplaceOutput,
    RewritePrompt,
    RewriteTool,
    ToolOutput,
    ToolUse,
    hook_name,
)

__all__ = ["Decisions", "control", "decision_line", "post_tool_use", "pre_tool_use", "user_prompt_submit"]


@dataclass(slots=True)
class Decisions:
    """What a point's hooks decided, in order, as journal objects (`{point, hook, decision, ...}`)."""

    records: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def add(self, point: str, hook: object, decision: str, **details: Any) -> None:
        self.records.append({"point": point, "hook": hook_name(hook), "decision": decision, **details})


def decision_line(record: dict[str, Any], tool: str = "") -> str:
    """One decision as a log line, for a face with no journal (`Hook "policy" denied stream_rm (pre_tool_use): why`)."""
    verb = {"deny": "denied", "rewrite": "rewrote", "replace": "replaced the output of", "abort": "aborted at"}
    decision = str(record.get("decision", ""))
    subject = tool
    line = f'Hook "{record.get("hook", "")}" {verb.get(decision, decision + "ed")}'
    line += f" {subject}" if subject else ""
    line += f" ({record.get('point', '')})"
    rewritten = record.get("rewritten")
    if isinstance(rewritten, dict):
        line += f" to {json.dumps(rewritten, ensure_ascii=False, sort_keys=True)[:300]}"
    if record.get("reason"):
        line += f": {record['reason']}"
    return line


def _tool_json(use: ToolUse) -> dict[str, Any]:
    return {"tool": use.tool, "arguments": dict(use.arguments)}


async def pre_tool_use(hooks: Hooks, use: ToolUse, decisions: Decisions) -> ToolUse | Deny:
    """The call as the hooks leave it (rewritten or not), or the first denial."""
    for hook in hooks.pre_tool_use:
        decision = await hook(use)
        if isinstance(decision, Deny):
            decisions.add("pre_tool_use", hook, "deny", reason=decision.reason)
            return decision
        if isinstance(decision, RewriteTool):
            rewritten = replace(
                use,
                tool=decision.tool or use.tool,
                arguments=dict(decision.arguments) if decision.arguments is not None else use.arguments,
            )
            details: dict[str, Any] = {"original": _tool_json(use), "rewritten": _tool_json(rewritten)}
            if decision.reason:
                details["reason"] = decision.reason
            decisions.add("pre_tool_use", hook, "rewrite", **details)
            use = rewritten
        else:
            decisions.add("pre_tool_use", hook, "allow")
    return use


async def post_tool_use(hooks: Hooks, output: ToolOutput, decisions: Decisions) -> ToolOutput:
    """The output as the hooks leave it."""
    for hook in hooks.post_tool_use:
        decision = await hook(output)
        if isinstance(decision, ReplaceOutput):
            details: dict[str, Any] = {"reason": decision.reason} if decision.reason else {}
            decisions.add("post_tool_use", hook, "replace", **details)
            output = replace(output, output=decision.output)
        else:
            decisions.add("post_tool_use", hook, "allow")
    return output


async def user_prompt_submit(hooks: Hooks, prompt: PromptSubmit, decisions: Decisions) -> PromptSubmit | Deny:
    """The prompt as the hooks leave it, or the first denial."""
    for hook in hooks.user_prompt_submit:
        decision = await hook(prompt)
        if isinstance(decision, Deny):
            decisions.add("user_prompt_submit", hook, "deny", reason=decision.reason)
            return decision
        if isinstance(decision, RewritePrompt):
            details: dict[str, Any] = {"original": prompt.prompt, "rewritten": decision.prompt}
            if decision.reason:
                details["reason"] = decision.reason
            decisions.add("user_prompt_submit", hook, "rewrite", **details)
            prompt = replace(prompt, prompt=decision.prompt)
        else:
            decisions.add("user_prompt_submit", hook, "allow")
    return prompt


async def control(point: str, hooks: Sequence[ControlHook], event: Any, decisions: Decisions) -> Abort | None:
    """A point that can only go on or abort (`run_start`, `pre_model_call`, `post_model_call`, `turn_end`)."""
    for hook in hooks:
        decision = await hook(event)
        if isinstance(decision, Abort):
            decisions.add(point, hook, "abort", reason=decision.reason)
            return decision
        decisions.add(point, hook, "allow")
    return None
