"""Resume after a crash: only unanswered calls run, and a call that may have had its effect is not repeated
unless it is idempotent or the operator says so. Journals are written through the real file store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

import pytest

from fiskai_agent import ResumeRefusedError, RunOptions, SessionOptions, run
from fiskai_agent.errors import ProviderError
from fiskai_agent.llm import ToolResultBlock
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer, calls
from fiskai_core.builtins import KnowledgeAccess, agent_tool_set
from fiskai_core.config import LLMSettings
from fiskai_core.confirm import ConfirmGate
from fiskai_core.testing import FakeSearcher, FakeTool, ScriptedPrompter
from fiskai_core.tools import Tool, ToolSet
from fiskai_memory import ToolAccess
from fiskai_memory.testing import InMemoryMemoryStore
from fiskai_runstate import FileJournalStore, Fingerprint, Record, fold
from fiskai_runstate.records import (
    AssistantRecord,
    JsonObject,
    JsonValue,
    MetaRecord,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    args_digest,
)

pytestmark = pytest.mark.anyio

LLM = LLMSettings(model="claude-sonnet-4-6")


class App(Protocol):
    tools: list[Tool]

    def calls(self) -> list[str]: ...


def _use(use_id: str, name: str, arguments: dict[str, Any]) -> JsonObject:
    return {"tool_use": {"id": use_id, "name": name, "input": arguments}}


async def _crashed(store: FileJournalStore, run_id: str, uses: list[JsonValue], after: list[Record]) -> None:
    """A journal as a process killed mid-batch leaves it: meta, the turn, then `after` (no terminal)."""
    meta = MetaRecord(
        run_id=run_id,
        created="2026-12-01T01:00:00+00:00",
        fingerprint=Fingerprint(provider="anthropic", model="claude-sonnet-4-6"),
        prompt="do it",
    )
    journal = await store.create(meta)
    turn = AssistantRecord(
        iteration=0, message={"role": "assistant", "content": uses}, stop_reason="tool_use", in_tokens=7, out_tokens=3
    )
    for record in [Record(seq=2, payload=turn), *after]:
        await journal.append(record)
    await journal.aclose()


def _intent(seq: int, use_id: str, name: str, arguments: dict[str, Any], *, run_id: str = "r") -> Record:
    return Record(
        seq=seq,
        payload=ToolIntentRecord(
            tool_use_id=use_id, tool_name=name, args_digest=args_digest(arguments), effect_id=f"{run_id}/{seq}"
        ),
    )


def _result(seq: int, use_id: str, content: str) -> Record:
    return Record(
        seq=seq, payload=ToolResultRecord(tool_use_id=use_id, result={"tool_use_id": use_id, "content": content})
    )


def _result_gate(records: list[Record]) -> tuple[object, object]:
    """(allowed, channel) of the crash decision journaled on the only tool_result."""
    (result,) = [r.payload for r in records if isinstance(r.payload, ToolResultRecord)]
    assert result.gate is not None
    return result.gate["allowed"], result.gate["channel"]


def _sent(provider: ScriptedProvider) -> list[ToolResultBlock]:
    last = provider.requests[0].messages[-1]
    return [b for b in last.content if isinstance(b, ToolResultBlock)]


async def test_resume_reuses_journaled_results_and_runs_only_unanswered_calls(
    app: App, store: FileJournalStore
) -> None:
    """Steps:
    1. The crashed turn asked for two calls; the first has its result journaled, the second never started.
    2. Resume runs only the second, then sends both results, in block order, to the model.
    """
    uses: list[JsonValue] = [_use("t1", "cluster_config_get", {"key": "a"}), _use("t2", "cluster_node_list", {})]
    await _crashed(
        store, "crash1", uses, [_intent(3, "t1", "cluster_config_get", {"key": "a"}), _result(4, "t1", "journaled")]
    )
    provider = ScriptedProvider.of(answer("done"))
    result = await run(
        RunOptions(
            prompt="",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            session=SessionOptions(store=store, resume_id="crash1", force=True),
        )
    )
    assert result.reason == "completed"
    assert app.calls() == ["cluster node list"]
    sent = _sent(provider)
    assert [b.tool_use_id for b in sent] == ["t1", "t2"]
    assert sent[0].content == "journaled"
    assert json.loads(sent[1].content)["exit_code"] == 0
    state = fold(await store.load("crash1"))
    assert state.completed and state.intents_without_results == ()
    assert result.stats.tool_calls == 2 and result.stats.llm_calls == 2


async def test_an_interrupted_call_is_not_rerun_without_an_operator(app: App, store: FileJournalStore) -> None:
    arguments = {"key": "a"}
    await _crashed(
        store,
        "crash2",
        [_use("t1", "cluster_config_get", arguments)],
        [_intent(3, "t1", "cluster_config_get", arguments)],
    )
    provider = ScriptedProvider.of(answer("I will check first"))
    events = RecordingEvents()
    await run(
        RunOptions(
            prompt="",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            events=events,
            session=SessionOptions(store=store, resume_id="crash2", force=True),
        )
    )
    assert app.calls() == []
    (refusal,) = _sent(provider)
    body = json.loads(refusal.content)
    assert body["allowed"] is False and "may already have taken effect" in body["reason"]
    assert not refusal.is_error
    assert "intent_declined" in events.advisory_kinds()
    assert _result_gate(await store.load("crash2")) == (False, "no_terminal")


async def test_an_interrupted_call_reruns_when_the_operator_approves(app: App, store: FileJournalStore) -> None:
    arguments = {"key": "a"}
    await _crashed(
        store,
        "crash3",
        [_use("t1", "cluster_config_get", arguments)],
        [_intent(3, "t1", "cluster_config_get", arguments, run_id="crash3")],
    )
    prompter = ScriptedPrompter.of(True)
    provider = ScriptedProvider.of(answer("ok"))
    await run(
        RunOptions(
            prompt="",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            gate=ConfirmGate(prompter),
            session=SessionOptions(store=store, resume_id="crash3", force=True),
        )
    )
    assert prompter.asked == [
        'The run crashed while "cluster_config_get" was running, so it may already have taken effect. Run it again?'
    ]
    assert app.calls() == ["cluster config get -- a"]
    records = await store.load("crash3")
    intents = [r for r in records if isinstance(r.payload, ToolIntentRecord)]
    assert len(intents) == 1, "a re-run keeps the original intent and effect id"
    (rerun,) = _sent(provider)
    assert "FISKAI_EFFECT_ID=crash3/3\n" in json.loads(rerun.content)["output"]
    assert _result_gate(records) == (True, "prompt")


async def test_an_idempotent_interrupted_call_reruns_without_asking(store: FileJournalStore) -> None:
    tool = FakeTool(name="sync_cache", tags=("ai:idempotent",), description="Sync the cache.")
    await _crashed(store, "crash4", [_use("t1", "sync_cache", {})], [_intent(3, "t1", "sync_cache", {})])
    prompter = ScriptedPrompter.of()
    events = RecordingEvents()
    await run(
        RunOptions(
            prompt="",
            llm=LLM,
            tools=ToolSet.of([tool], "custom"),
            provider=ScriptedProvider.of(answer("ok")),
            gate=ConfirmGate(prompter),
            events=events,
            session=SessionOptions(store=store, resume_id="crash4", force=True),
        )
    )
    assert tool.calls == ["{}"] and prompter.asked == []
    assert "intent_rerun" in events.advisory_kinds()
    assert _result_gate(await store.load("crash4")) == (True, "policy")


async def test_a_completed_session_cannot_be_resumed(store: FileJournalStore) -> None:
    await _crashed(store, "done1", [], [Record(seq=3, payload=TerminalRecord(reason="completed"))])
    with pytest.raises(ResumeRefusedError) as caught:
        await run(
            RunOptions(
                prompt="",
                llm=LLM,
                tools=ToolSet.of([FakeTool(name="x", description="x")], "custom"),
                provider=ScriptedProvider.of(),
                session=SessionOptions(store=store, resume_id="done1"),
            )
        )
    assert str(caught.value) == 'session "done1" has already completed and cannot be resumed'


async def test_configuration_drift_refuses_a_resume_unless_forced(store: FileJournalStore) -> None:
    await _crashed(store, "drift", [], [])
    options = RunOptions(
        prompt="",
        llm=LLM,
        tools=ToolSet.of([FakeTool(name="x", description="x")], "custom"),
        provider=ScriptedProvider.of(answer("resumed")),
        session=SessionOptions(store=store, resume_id="drift"),
    )
    with pytest.raises(ResumeRefusedError) as caught:
        await run(options)
    assert "--force" in str(caught.value) and "tool set" in str(caught.value)
    forced = RunOptions(
        prompt="",
        llm=LLM,
        tools=ToolSet.of([FakeTool(name="x", description="x")], "custom"),
        provider=ScriptedProvider.of(answer("resumed")),
        session=SessionOptions(store=store, resume_id="drift", force=True),
    )
    assert (await run(forced)).answer == "resumed"


async def test_an_unknown_session_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ResumeRefusedError) as caught:
        await run(
            RunOptions(
                prompt="",
                llm=LLM,
                tools=ToolSet.of([FakeTool(name="x", description="x")], "custom"),
                provider=ScriptedProvider.of(),
                session=SessionOptions(store=FileJournalStore(tmp_path), resume_id="nope"),
            )
        )
    assert str(caught.value).startswith('run not found: "nope"')


async def test_a_read_only_built_in_reruns_after_a_crash_without_asking(store: FileJournalStore) -> None:
    memory = InMemoryMemoryStore()
    await memory.write("k", "a note", "body")
    await _crashed(
        store, "crash5", [_use("t1", "memory_read", {"key": "k"})], [_intent(3, "t1", "memory_read", {"key": "k"})]
    )
    provider = ScriptedProvider.of(answer("ok"))
    prompter = ScriptedPrompter.of()
    await run(
        RunOptions(
            prompt="",
            llm=LLM,
            tools=agent_tool_set(memory=ToolAccess(memory), has_application=False),
            provider=provider,
            gate=ConfirmGate(prompter),
            session=SessionOptions(store=store, resume_id="crash5", force=True),
        )
    )
    (sent,) = _sent(provider)
    assert json.loads(sent.content)["found"] is True and prompter.asked == []


async def test_knowledge_citations_delivered_before_a_resume_are_not_delivered_again(store: FileJournalStore) -> None:
    """Steps:
    1. A checkpointed run searches the knowledge base, then its next model call fails.
    2. The resumed run searches again: the searcher is told to skip what the first search delivered.
    """
    searcher = FakeSearcher(excerpts={"ops.md#1": "streams are replicated", "ops.md#2": "streams have limits"})
    search = calls(("knowledge_search", {"query": "streams"}))
    tools = agent_tool_set(knowledge=KnowledgeAccess(searcher, max_injected_tokens=1000), has_application=False)
    first = await run(
        RunOptions(
            prompt="streams?",
            llm=LLM,
            tools=tools,
            provider=ScriptedProvider.of(search, ProviderError("HTTP 529 from the model API: overloaded")),
            session=SessionOptions(store=store, checkpoint=True, name="cites"),
        )
    )
    assert first.reason == "error"
    records = await store.load("cites")
    (journaled,) = [r.payload for r in records if isinstance(r.payload, ToolResultRecord)]
    assert journaled.result["citations"] == ["ops.md#1", "ops.md#2"]
    await run(
        RunOptions(
            prompt="",
            llm=LLM,
            tools=tools,
            provider=ScriptedProvider.of(search, answer("done")),
            session=SessionOptions(store=store, resume_id="cites"),
        )
    )
    assert [excluded for _, _, excluded in searcher.calls] == [frozenset(), frozenset({"ops.md#1", "ops.md#2"})]


async def test_a_journal_cut_short_is_refused_and_force_resumes_with_a_warning(store: FileJournalStore) -> None:
    """Steps:
    1. A checkpointed run calls a non-idempotent tool (intent and result journaled), then the model fails.
    2. The journal is cut back to before the intent, as a partial copy or an older restore leaves it.
    3. Resume refuses, naming the records the mark counts and the fix; the tool does not run again.
    4. With force the resume goes ahead (the operator's call) and a warning says the journal was cut short.
    """
    tool = FakeTool(name="restart_service", description="Restart the service.")

    def options(
        provider: ScriptedProvider, session: SessionOptions, events: RecordingEvents | None = None
    ) -> RunOptions:
        return RunOptions(
            prompt="restart it",
            llm=LLM,
            tools=ToolSet.of([tool], "custom"),
            provider=provider,
            session=session,
            events=events or RecordingEvents(),
        )

    failing = ScriptedProvider.of(calls(("restart_service", {})), ProviderError("HTTP 529 from the model API"))
    first = await run(options(failing, SessionOptions(store=store, checkpoint=True, name="cut")))
    assert first.reason == "error" and len(tool.calls) == 1
    path = store.journal_path("cut")
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 5
    path.write_bytes(b"".join(lines[:2]))

    with pytest.raises(ResumeRefusedError) as caught:
        await run(options(ScriptedProvider.of(answer("done")), SessionOptions(store=store, resume_id="cut")))
    assert "journal for run 'cut' is truncated" in str(caught.value)
    assert "counts 5 records but the journal holds 2" in str(caught.value)
    assert "--force" in str(caught.value)
    assert len(tool.calls) == 1

    events = RecordingEvents()
    forced = SessionOptions(store=store, resume_id="cut", force=True)
    assert (await run(options(ScriptedProvider.of(answer("done")), forced, events))).answer == "done"
    (warning,) = [a for a in events.advisories if a.kind == "resume_forced"]
    assert warning.message.startswith('resuming session "cut" although its journal is truncated: ')
    assert warning.message.endswith("(--force)")
    assert len(tool.calls) == 2


async def test_a_session_hashed_the_go_way_or_the_old_way_resumes_without_force(store: FileJournalStore) -> None:
    from fiskai_runstate import sha256_json
    from fiskai_runstate.go_hash import GoToolDef, go_system_hash, go_tools_hash

    tool = FakeTool(name="x", description="x <&> y")

    def options(resume: str | None = None) -> RunOptions:
        session = (
            SessionOptions(store=store, resume_id=resume)
            if resume
            else SessionOptions(store=store, checkpoint=True, name="hashes")
        )
        return RunOptions(
            prompt="go",
            llm=LLM,
            system_prompt="Report <all> & more.",
            tools=ToolSet.of([tool], "custom"),
            provider=ScriptedProvider.of(answer("paused")),
            session=session,
        )

    first = await run(options())
    meta = (await store.load("hashes"))[0].payload
    assert isinstance(meta, MetaRecord)
    # New sessions carry the Go agent's hashes (its encoding/json escapes <, > and &).
    assert meta.fingerprint.system_hash == go_system_hash(["Report <all> & more."])
    assert meta.fingerprint.tools_hash == go_tools_hash([GoToolDef("x", "x <&> y", tool.input_schema, False)])
    # A session fiskai recorded before carries the old hashes; it still resumes without --force.
    old = {"Name": "x", "Description": "x <&> y", "InputSchema": dict(tool.input_schema), "DeferLoading": False}
    legacy = MetaRecord(
        run_id="legacy",
        created="2026-12-01T01:00:00+00:00",
        fingerprint=Fingerprint(
            provider=meta.fingerprint.provider,
            model=meta.fingerprint.model,
            system_hash=sha256_json(["Report <all> & more."]),
            tools_hash=sha256_json([old]),
            thinking_mode=meta.fingerprint.thinking_mode,
            max_tokens=meta.fingerprint.max_tokens,
            max_iterations=meta.fingerprint.max_iterations,
        ),
        prompt="go",
    )
    journal = await store.create(legacy)
    await journal.append(Record(seq=2, payload=TerminalRecord(reason="suspended")))
    await journal.aclose()
    assert meta.fingerprint.system_hash != legacy.fingerprint.system_hash

    resumed = await run(options(resume="legacy"))

    assert first.answer == "paused"
    assert resumed.answer is not None
