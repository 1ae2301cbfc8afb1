"""A journal claimed by another worker mid-run: the run stops before its next tool call and writes nothing more."""

from __future__ import annotations

from pathlib import Path

import pytest
from typing_extensions import override

from fiskai_agent import RunOptions, SessionOptions, run
from fiskai_agent.testing import ScriptedProvider, answer, calls
from fiskai_core.config import LLMSettings
from fiskai_core.testing import FakeTool
from fiskai_core.tools import CallContext, CallPlan, ToolResult, ToolSet
from fiskai_runstate import FileJournalStore, fold
from fiskai_runstate.errors import JournalClaimedError

pytestmark = pytest.mark.anyio


class _ClaimingTool(FakeTool):
    """While it runs, another worker claims the session (a redelivered job reaching the same journal)."""

    store: FileJournalStore | None = None

    @override
    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        assert self.store is not None
        await self.store.claim("claimed-run")
        return await super().invoke(plan, context)


async def test_a_claimed_run_stops_before_its_next_tool_call(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path / "runs")
    first = _ClaimingTool(name="step_one", description="first step")
    first.store = store
    second = FakeTool(name="step_two", description="second step")
    provider = ScriptedProvider.of(calls(("step_one", {})), calls(("step_two", {})), answer("done"))
    with pytest.raises(JournalClaimedError):
        await run(
            RunOptions(
                prompt="do both steps",
                llm=LLMSettings(model="claude-sonnet-4-6"),
                tools=ToolSet.of([first, second], "custom"),
                provider=provider,
                session=SessionOptions(store=store, checkpoint=True, name="claimed-run"),
            )
        )
    assert first.calls == ["{}"] and second.calls == []
    state = fold(await store.load("claimed-run"))
    assert state.terminal is None  # the claimant writes the end
    assert [intent.tool_name for intent in state.intents_without_results] == ["step_one"]
    reopened = await store.open("claimed-run")  # the lock was let go
    await reopened.aclose()
