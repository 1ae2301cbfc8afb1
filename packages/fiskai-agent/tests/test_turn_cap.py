"""At most `max_tool_calls_per_turn` calls run from one model turn; the rest are answered, unrun (issue 36.11)."""

from __future__ import annotations

from typing import Protocol

import pytest

from fiskai_agent import RunOptions, SessionOptions, run
from fiskai_agent.llm import ToolResultBlock
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer, calls
from fiskai_core.config import LLMSettings
from fiskai_core.tools import Tool, ToolSet
from fiskai_runstate import FileJournalStore, Fingerprint, Record, fold
from fiskai_runstate.records import (
    AssistantRecord,
    JsonValue,
    MetaRecord,
    ToolIntentRecord,
    ToolResultRecord,
    args_digest,
)

pytestmark = pytest.mark.anyio

LLM = LLMSettings(model="claude-sonnet-4-6")


class App(Protocol):
    tools: list[Tool]

    def calls(self) -> list[str]: ...


def _not_run(asked: int, cap: int) -> str:
    return (
        f"not run: this turn asked for {asked} tool calls and at most {cap} run per turn; look at the results "
        "of the ones that ran, then call what is still needed in your next turn"
    )


def _results(provider: ScriptedProvider, request: int) -> list[ToolResultBlock]:
    return [b for b in provider.requests[request].messages[-1].content if isinstance(b, ToolResultBlock)]


async def test_a_turn_over_the_cap_runs_only_the_first_calls_and_answers_the_rest(
    app: App, store: FileJournalStore
) -> None:
    keys = ["a", "b", "c", "d", "e"]
    provider = ScriptedProvider.of(calls(*[("cluster_config_get", {"key": key}) for key in keys]), answer("done"))
    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="x",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            events=events,
            max_tool_calls_per_turn=3,
            session=SessionOptions(store=store, checkpoint=True, name="cap"),
        )
    )
    assert result.reason == "completed"
    assert app.calls() == ["cluster config get -- a", "cluster config get -- b", "cluster config get -- c"]
    sent = _results(provider, 1)
    assert [block.tool_use_id for block in sent] == [f"toolu_cluster_config_get_{n}" for n in range(5)]
    assert [block.is_error for block in sent] == [False, False, False, True, True]
    assert [block.content for block in sent[3:]] == [_not_run(5, 3)] * 2
    (capped,) = [a for a in events.advisories if a.kind == "tool_calls_capped"]
    assert capped.count == 2
    assert capped.message == "the model asked for 5 tool calls in one turn; only the first 3 ran"
    assert len(events.tool_calls) == 3
    assert result.stats.tool_calls == 5
    records = [r.payload for r in await store.load("cap")]
    assert len([p for p in records if isinstance(p, ToolIntentRecord)]) == 3
    assert len([p for p in records if isinstance(p, ToolResultRecord)]) == 5


@pytest.mark.parametrize(("cap", "ran"), [(0, 4), (4, 4), (64, 4)])
async def test_a_turn_within_the_cap_or_with_no_cap_runs_every_call(app: App, cap: int, ran: int) -> None:
    provider = ScriptedProvider.of(calls(*[("cluster_config_get", {"key": str(n)}) for n in range(4)]), answer("ok"))
    events = RecordingEvents()
    await run(
        RunOptions(
            prompt="x",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            events=events,
            max_tool_calls_per_turn=cap,
        )
    )
    assert len(app.calls()) == ran
    assert not any(block.is_error for block in _results(provider, 1))
    assert "tool_calls_capped" not in events.advisory_kinds()


def _use(use_id: str, key: str) -> JsonValue:
    return {"tool_use": {"id": use_id, "name": "cluster_config_get", "input": {"key": key}}}


async def test_a_resumed_turn_is_held_to_the_cap_too(app: App, store: FileJournalStore) -> None:
    """Steps:
    1. A run with a cap of 1 was killed after the first of three calls ran and its result was journaled.
    2. The resumed run reuses that result and answers the other two, unrun, as the live run would have.
    """
    meta = MetaRecord(
        run_id="crash",
        created="2026-12-01T01:00:00+00:00",
        fingerprint=Fingerprint(provider="anthropic", model=LLM.model),
        prompt="x",
    )
    journal = await store.create(meta)
    uses = [_use("t1", "a"), _use("t2", "b"), _use("t3", "c")]
    turn = AssistantRecord(iteration=0, message={"role": "assistant", "content": uses}, stop_reason="tool_use")
    done = ToolResultRecord(tool_use_id="t1", result={"tool_use_id": "t1", "content": "ran before the crash"})
    for record in (
        Record(seq=2, payload=turn),
        Record(
            seq=3,
            payload=ToolIntentRecord(
                tool_use_id="t1",
                tool_name="cluster_config_get",
                args_digest=args_digest({"key": "a"}),
                effect_id="crash/3",
            ),
        ),
        Record(seq=4, payload=done),
    ):
        await journal.append(record)
    await journal.aclose()

    provider = ScriptedProvider.of(answer("done"))
    await run(
        RunOptions(
            prompt="",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            max_tool_calls_per_turn=1,
            session=SessionOptions(store=store, resume_id="crash", force=True),
        )
    )
    assert app.calls() == []
    sent = _results(provider, 0)
    assert [(b.tool_use_id, b.content) for b in sent] == [
        ("t1", "ran before the crash"),
        ("t2", _not_run(3, 1)),
        ("t3", _not_run(3, 1)),
    ]
    state = fold(await store.load("crash"))
    assert state.pending is None and state.intents_without_results == ()
