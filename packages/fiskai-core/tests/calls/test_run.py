"""run_call: the call boundary, where a failure, a time-out or a full queue is an answer, never an exception."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from typing_extensions import override

from fiskai_core.calls import CallSlots, ToolCall, prepare_call, run_call
from fiskai_core.exec.running import CommandTool, command_tools
from fiskai_core.fisk import load_application
from fiskai_core.testing import FakeTool, write_fake_app
from fiskai_core.tools import CallContext, CallPlan, ToolResult

pytestmark = pytest.mark.anyio


class GatedTool(FakeTool):
    """A FakeTool whose invoke waits until the test opens `gate`, and can fail instead."""

    def __init__(self, name: str, *, error: Exception | None = None) -> None:
        super().__init__(name=name)
        self.started = anyio.Event()
        self.gate = anyio.Event()
        self.error = error

    @override
    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        self.started.set()
        await self.gate.wait()
        if self.error is not None:
            raise self.error
        return await super().invoke(plan, context)


def _call(tool: FakeTool, arguments: str = "{}") -> ToolCall:
    call = prepare_call(tool, arguments)
    assert isinstance(call, ToolCall)
    return call


async def test_the_context_reaches_the_tool_and_defaults_to_empty() -> None:
    tool = FakeTool(name="note")
    await run_call(_call(tool), CallContext(effect_id="run/3", delivered=frozenset({"a.md#1"})))
    await run_call(_call(tool))
    assert tool.contexts == [CallContext(effect_id="run/3", delivered=frozenset({"a.md#1"})), CallContext()]


async def test_a_tool_that_raises_is_an_error_result_saying_it_may_not_have_run() -> None:
    tool = GatedTool("broken", error=OSError("disk gone"))
    tool.gate.set()
    result = await run_call(_call(tool))
    assert result.is_error
    assert result.text == 'tool "broken" failed: OSError: disk gone. The command may not have run.'


async def test_cancellation_is_not_turned_into_a_result() -> None:
    tool = GatedTool("slow")
    with anyio.move_on_after(0) as scope:
        await run_call(_call(tool))
    assert scope.cancelled_caught


async def test_a_command_past_its_time_limit_is_stopped(captured_fixtures: Path, tmp_path: Path) -> None:
    model = captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json"
    application = load_application(str(write_fake_app(tmp_path, model)))
    tool: CommandTool = next(t for t in command_tools(application) if t.name == "cluster_node_list")
    # Killing the process group on cancellation is run_argv's (tests/exec/test_run.py); here, the answer.
    script = tmp_path / "sleeper"
    script.write_text("#!/bin/sh\nexec sleep 300\n", encoding="utf-8")
    script.chmod(0o755)
    call = prepare_call(dataclasses.replace(tool, app_path=str(script)), "{}")
    assert isinstance(call, ToolCall)
    with anyio.fail_after(30):
        result = await run_call(call, time_limit=0.5)
    assert result.is_error
    assert result.text == (
        'tool "cluster_node_list" did not finish within 0.5s and was stopped; its output is lost. '
        "Narrow the request or ask the operator to raise the tool timeout."
    )


async def test_a_full_place_queue_answers_busy_and_the_waiter_runs_in_turn() -> None:
    slots = CallSlots(1, waiting=1, queue_timeout=30, owner='agent "ops"')
    first, second, third = GatedTool("first"), GatedTool("second"), GatedTool("third")
    results: dict[str, ToolResult] = {}

    async def call(tool: GatedTool) -> None:
        results[tool.name] = await run_call(_call(tool), slots=slots)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(call, first)
            await first.started.wait()
            group.start_soon(call, second)
            while slots.waiting < 1:
                await anyio.lowlevel.checkpoint()
            await call(third)
            assert results["third"].is_error
            assert results["third"].text == (
                'agent "ops" is busy: 1 calls running and 1 calls are already waiting; retry later'
            )
            assert third.calls == []
            first.gate.set()
            await second.started.wait()
            second.gate.set()
    assert not results["first"].is_error and not results["second"].is_error


async def test_a_wait_past_the_queue_timeout_answers_busy() -> None:
    slots = CallSlots(1, queue_timeout=0.05)
    holder, late = GatedTool("holder"), FakeTool(name="late")
    busy = ToolResult(output="not answered")
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: run_call(_call(holder), slots=slots))
            await holder.started.wait()
            busy = await run_call(_call(late), slots=slots)
            holder.gate.set()
    assert busy.is_error
    assert busy.text == "the server is busy: 1 calls running and no place freed within 0.05s; retry later"
    assert late.calls == [] and slots.waiting == 0
