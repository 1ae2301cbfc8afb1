"""FISKAI_EFFECT_ID is fiskai's own idempotency key: one per call, stable across a crash (issue 36.10).

It used to be `<run id>/<tool_use id>`: a model reusing an id across turns (local models number them per
turn) gave two different calls one key, so a command deduplicating on it dropped the second; and the
model's own text reached the command's environment.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

import anyio
import pytest

from fiskai_agent import RunControl, RunOptions, SessionOptions, run
from fiskai_agent.llm import ToolResultBlock
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer, calls
from fiskai_core.config import LLMSettings
from fiskai_core.tools import TAG_IDEMPOTENT, CallContext, CallPlan, Tool, ToolArguments, ToolResult, ToolSet
from fiskai_runstate import FileJournalStore, fold
from fiskai_runstate.records import ToolIntentRecord, ToolResultRecord

pytestmark = pytest.mark.anyio

LLM = LLMSettings(model="claude-sonnet-4-6")
_EFFECT = re.compile(r"^FISKAI_EFFECT_ID=(.*)$", re.MULTILINE)


class App(Protocol):
    tools: list[Tool]

    def calls(self) -> list[str]: ...


def _effect_ids(provider: ScriptedProvider) -> list[str]:
    """The FISKAI_EFFECT_ID each command printed, in the order the model received the results."""
    found: list[str] = []
    for request in provider.requests:
        for block in request.messages[-1].content:
            if isinstance(block, ToolResultBlock):
                found.extend(_EFFECT.findall(json.loads(block.content)["output"]))
    return found


@pytest.mark.parametrize("journaled", [True, False])
async def test_one_tool_use_id_in_two_turns_gets_two_effect_ids(
    app: App, store: FileJournalStore, journaled: bool
) -> None:
    # calls() numbers ids per turn, as local models do: both turns call toolu_cluster_config_get_0.
    provider = ScriptedProvider.of(
        calls(("cluster_config_get", {"key": "a"})), calls(("cluster_config_get", {"key": "a"})), answer("done")
    )
    session = SessionOptions(store=store, checkpoint=True, name="twice") if journaled else None
    result = await run(RunOptions(prompt="x", llm=LLM, tools=ToolSet.of(app.tools), provider=provider, session=session))
    assert result.reason == "completed" and len(app.calls()) == 2
    uses = [use.id for request in provider.requests[1:] for use in request.messages[-2].tool_uses]
    assert uses == ["toolu_cluster_config_get_0"] * 2
    first, second = _effect_ids(provider)
    assert first != second
    assert "toolu" not in first + second
    if journaled:
        intents = [r for r in await store.load("twice") if isinstance(r.payload, ToolIntentRecord)]
        assert [f"twice/{r.seq}" for r in intents] == [first, second]
        assert [r.payload.effect_id for r in intents if isinstance(r.payload, ToolIntentRecord)] == [first, second]
    else:
        # A run without a journal numbers its calls under its own (ephemeral) run id.
        assert re.fullmatch(r"ephemeral-[0-9A-Za-z]{27}/1", first) and second == first[:-1] + "2"


async def test_effect_ids_of_two_runs_never_collide(app: App) -> None:
    seen: list[str] = []
    for _ in range(2):
        provider = ScriptedProvider.of(calls(("cluster_config_get", {"key": "a"})), answer("done"))
        await run(RunOptions(prompt="x", llm=LLM, tools=ToolSet.of(app.tools), provider=provider))
        seen.extend(_effect_ids(provider))
    assert len(set(seen)) == 2


class Effectful:
    """An idempotent custom tool that records the effect id of every call; the first call can abort the run."""

    name = "sync_cache"
    tags = (TAG_IDEMPOTENT,)
    description = "Sync the cache (safe to repeat)."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, control: RunControl | None = None) -> None:
        self.effect_ids: list[str] = []
        self._control = control

    def plan(self, arguments: ToolArguments) -> CallPlan:
        return CallPlan(arguments=arguments, display=self.name)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        self.effect_ids.append(context.effect_id)
        if self._control is not None:
            # The process dies mid-call: nothing after this point is journaled but the run's end.
            self._control.abort()
            await anyio.sleep_forever()
        return ToolResult(output="synced")


async def test_a_call_rerun_after_a_crash_gets_the_effect_id_of_its_first_attempt(store: FileJournalStore) -> None:
    """Steps:
    1. A checkpointed run journals the intent and starts the call; the run is killed during the call.
    2. The resumed run re-runs the interrupted call (the tool is ai:idempotent) with the same effect id,
       which is the intent record's, while a new call in a later turn gets a new one.
    """
    control = RunControl()
    crashing = Effectful(control)
    with anyio.fail_after(10):
        first = await run(
            RunOptions(
                prompt="sync",
                llm=LLM,
                tools=ToolSet.of([crashing], "custom"),
                provider=ScriptedProvider.of(calls(("sync_cache", {}))),
                control=control,
                session=SessionOptions(store=store, checkpoint=True, name="crash"),
            )
        )
    assert first.reason == "error"
    state = fold(await store.load("crash"))
    (interrupted,) = state.intents_without_results
    assert crashing.effect_ids == [interrupted.effect_id]

    resumed_tool = Effectful()
    events = RecordingEvents()
    provider = ScriptedProvider.of(calls(("sync_cache", {})), answer("synced twice"))
    resumed = await run(
        RunOptions(
            prompt="",
            llm=LLM,
            tools=ToolSet.of([resumed_tool], "custom"),
            provider=provider,
            events=events,
            session=SessionOptions(store=store, resume_id="crash"),
        )
    )
    assert resumed.answer == "synced twice"
    assert "intent_rerun" in events.advisory_kinds()
    rerun, later = resumed_tool.effect_ids
    assert rerun == interrupted.effect_id == crashing.effect_ids[0]
    assert later != rerun and "toolu" not in rerun + later
    records = await store.load("crash")
    intents = [r for r in records if isinstance(r.payload, ToolIntentRecord)]
    assert [f"crash/{r.seq}" for r in intents] == [rerun, later], "the re-run keeps the one intent record"
    results = [r.payload for r in records if isinstance(r.payload, ToolResultRecord)]
    assert [r.gate["channel"] if r.gate else None for r in results] == ["policy", None]
