"""`harness.tool_timeout` bounds every tool call of a run; the model is told the call was stopped."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from fiskai_agent import RunOptions, run
from fiskai_agent.llm import ToolResultBlock
from fiskai_agent.testing import ScriptedProvider, answer, calls
from fiskai_core.config import LLMSettings
from fiskai_core.tools import CallContext, CallPlan, ToolArguments, ToolResult, ToolSet

pytestmark = pytest.mark.anyio


class SlowTool:
    """A custom tool that takes `seconds` to answer."""

    def __init__(self, seconds: float) -> None:
        self.name = "slow"
        self.tags: tuple[str, ...] = ()
        self.description = "A slow tool."
        self.input_schema: dict[str, Any] = {"type": "object", "properties": {}}
        self.seconds = seconds

    def plan(self, arguments: ToolArguments) -> CallPlan:
        return CallPlan(arguments=arguments, display=self.name)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        await anyio.sleep(self.seconds)
        return ToolResult(output="finished")


async def _first_result(tool_timeout: float | None, seconds: float) -> ToolResultBlock:
    provider = ScriptedProvider.of(calls(("slow", {})), answer("done"))
    with anyio.fail_after(5):
        result = await run(
            RunOptions(
                prompt="go",
                llm=LLMSettings(model="claude-sonnet-4-6"),
                tools=ToolSet.of([SlowTool(seconds)], "custom"),
                provider=provider,
                tool_timeout=tool_timeout,
            )
        )
    assert result.reason == "completed"
    (block,) = [b for b in provider.requests[1].messages[-1].content if isinstance(b, ToolResultBlock)]
    return block


async def test_a_call_over_the_tool_timeout_is_stopped_and_the_model_told_so() -> None:
    block = await _first_result(0.05, 30)
    assert block.is_error
    assert 'tool "slow" did not finish within 0.05s and was stopped' in str(block.content)


async def test_a_call_within_the_tool_timeout_or_with_no_limit_finishes() -> None:
    for limit in (2.0, None):
        block = await _first_result(limit, 0.01)
        assert (block.is_error, block.content) == (False, "finished")
