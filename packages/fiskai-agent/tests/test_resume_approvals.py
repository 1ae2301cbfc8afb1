"""Reference 8.3: "allow for the conversation" is journaled and honoured when the session resumes (a served
conversation resumes for every turn), and dropped by a forced resume."""

from __future__ import annotations

import pytest

from fiskai_agent import FollowUp, RunOptions, SessionOptions, run
from fiskai_agent.testing import ScriptedProvider, answer, calls
from fiskai_core.config import LLMSettings
from fiskai_core.confirm import ConfirmGate
from fiskai_core.prompter import ConfirmChoice
from fiskai_core.testing import FakeTool, ScriptedPrompter
from fiskai_core.tools import ToolSet
from fiskai_runstate import FileJournalStore
from fiskai_runstate.gate_log import gate_entries

pytestmark = pytest.mark.anyio

LLM = LLMSettings(model="claude-sonnet-4-6")


async def _end_turn(error: str) -> FollowUp | None:
    del error
    return None


async def _turn(
    store: FileJournalStore, tool: FakeTool, prompter: ScriptedPrompter, *, first: bool, force: bool = False
):
    session = (
        SessionOptions(store=store, checkpoint=True, name="conv")
        if first
        else SessionOptions(store=store, resume_id="conv", follow_up="and again", force=force)
    )
    return await run(
        RunOptions(
            prompt="drain it",
            llm=LLM,
            tools=ToolSet.of([tool], "custom"),
            provider=ScriptedProvider.of(calls(("drain", {})), answer("done")),
            gate=ConfirmGate(prompter),
            session=session,
            interactive=True,
            next_prompt=_end_turn,
        )
    )


async def test_allow_for_the_conversation_is_honoured_on_resume(store: FileJournalStore) -> None:
    tool = FakeTool(name="drain", tags=("ai:confirm",), description="Drain a node.")
    first = await _turn(store, tool, ScriptedPrompter.of(ConfirmChoice.ALWAYS), first=True)
    assert first.reason == "suspended" and len(tool.calls) == 1
    quiet = ScriptedPrompter.of()  # would decline if asked
    await _turn(store, tool, quiet, first=False)
    assert quiet.asked == [] and len(tool.calls) == 2
    channels = [entry.channel for entry in gate_entries(await store.load("conv"))]
    assert channels[-1] == "session", channels


async def test_once_is_not_remembered_and_force_drops_the_approval(store: FileJournalStore) -> None:
    tool = FakeTool(name="drain", tags=("ai:confirm",), description="Drain a node.")
    await _turn(store, tool, ScriptedPrompter.of(ConfirmChoice.ONCE), first=True)
    asked = ScriptedPrompter.of(ConfirmChoice.ALWAYS)
    await _turn(store, tool, asked, first=False)
    assert len(asked.asked) == 1, "once covers one call only"
    forced = ScriptedPrompter.of(ConfirmChoice.NO)
    await _turn(store, tool, forced, first=False, force=True)
    assert len(forced.asked) == 1, "a forced resume starts with no standing approvals"
    assert len(tool.calls) == 2
