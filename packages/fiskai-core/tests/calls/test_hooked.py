"""hooked_prepare / hooked_output: the hook steps every face shares around prepare_call and run_call."""

from __future__ import annotations

from typing import Any

import pytest

from fiskai_core.calls import Refusal, ToolCall, hooked_output, hooked_prepare, run_call
from fiskai_core.hooks import Allow, Decisions, Deny, Hooks, ReplaceOutput, RewriteTool, ToolOutput, ToolUse
from fiskai_core.testing import FakeTool

pytestmark = pytest.mark.anyio

READ = FakeTool(name="read")
WRITE = FakeTool(name="write", tags=("ai:confirm",))
TOOLS = {tool.name: tool for tool in (READ, WRITE)}


async def test_no_hooks_is_plain_prepare_call() -> None:
    decisions = Decisions()
    hooked = await hooked_prepare(Hooks(), READ, '{"n": 1.50}', lookup=TOOLS.get, decisions=decisions)
    assert isinstance(hooked.call, ToolCall) and hooked.call.plan.arguments.json() == '{"n":1.50}'
    assert decisions.records == [] and not hooked.rewritten


async def test_a_denial_is_a_refusal_and_nothing_is_prepared() -> None:
    seen: list[ToolUse] = []

    async def policy(use: ToolUse) -> Deny:
        seen.append(use)
        return Deny("no")

    decisions = Decisions()
    hooked = await hooked_prepare(
        Hooks(pre_tool_use=(policy,)), READ, '{"n": 2}', lookup=TOOLS.get, decisions=decisions, tool_use_id="t1"
    )
    assert isinstance(hooked.call, Refusal) and hooked.call.kind == "denied" and hooked.denied
    assert hooked.call.result.output == "not run: denied by policy: no"
    assert seen == [ToolUse(tool="read", arguments={"n": 2}, tool_use_id="t1")]
    assert [(r["decision"], r["reason"]) for r in decisions.records] == [("deny", "no")]


async def test_a_rewrite_to_an_ungated_tool_keeps_the_original_gate() -> None:
    async def demote(use: ToolUse) -> RewriteTool:
        return RewriteTool(tool="read", arguments={"safe": True})

    hooked = await hooked_prepare(Hooks(pre_tool_use=(demote,)), WRITE, "{}", lookup=TOOLS.get, decisions=Decisions())
    assert isinstance(hooked.call, ToolCall) and hooked.call.name == "read" and hooked.rewritten
    assert hooked.call.gate_tag == "ai:confirm"  # a hook never strips a gate
    assert hooked.call.plan.arguments.json() == '{"safe":true}'


async def test_a_rewrite_to_a_tool_the_face_lacks_is_refused() -> None:
    async def elsewhere(use: ToolUse) -> RewriteTool:
        return RewriteTool(tool="nope")

    hooked = await hooked_prepare(Hooks(pre_tool_use=(elsewhere,)), READ, "{}", lookup=TOOLS.get, decisions=Decisions())
    assert isinstance(hooked.call, Refusal) and '"nope", which is not available here' in hooked.call.result.output


async def test_post_tool_use_sees_the_arguments_and_replaces_the_output() -> None:
    seen: list[ToolOutput] = []

    async def redact(output: ToolOutput) -> ReplaceOutput:
        seen.append(output)
        return ReplaceOutput("hidden")

    async def allow(use: ToolUse) -> Allow:
        return Allow()

    hooks = Hooks(pre_tool_use=(allow,), post_tool_use=(redact,))
    hooked = await hooked_prepare(hooks, READ, '{"k": "v"}', lookup=TOOLS.get, decisions=Decisions())
    assert isinstance(hooked.call, ToolCall)
    decisions = Decisions()
    result = await hooked_output(hooks, hooked, await run_call(hooked.call), decisions=decisions)
    assert result.output == "hidden"
    assert seen[0].arguments == {"k": "v"} and seen[0].output == "ok"
    records: list[dict[str, Any]] = decisions.records
    assert [r["decision"] for r in records] == ["replace"]
