"""The loop's rules, driven by a ScriptedProvider over real fixturectl commands and a real file journal."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import pytest

from fiskai_agent import RunControl, RunOptions, SessionOptions, run
from fiskai_agent.errors import ProviderError
from fiskai_agent.llm import Request, Response, ToolResultBlock, ToolUseBlock
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer, calls, reply
from fiskai_core.builtins import KnowledgeAccess, agent_tool_set
from fiskai_core.config import BudgetSettings, LLMSettings
from fiskai_core.confirm import ConfirmGate
from fiskai_core.prompter import ConfirmChoice
from fiskai_core.remote import RemoteDescriptor, RemoteReply, RemoteTool
from fiskai_core.testing import FakeRemoteInvoker, FakeSearcher, ScriptedPrompter
from fiskai_core.tools import CallContext, CallPlan, Tool, ToolArguments, ToolEntry, ToolResult, ToolSet
from fiskai_runstate import FileJournalStore, fold
from fiskai_runstate.records import AssistantRecord, TerminalRecord, ToolIntentRecord, ToolResultRecord

pytestmark = pytest.mark.anyio


class App(Protocol):
    tools: list[Tool]

    def calls(self) -> list[str]: ...


class CallbackTool:
    """A custom tool whose call runs a test's coroutine."""

    def __init__(self, name: str, action: Callable[[], Awaitable[ToolResult]]) -> None:
        self.name = name
        self.tags: tuple[str, ...] = ()
        self.description = f"The {name} tool."
        self.input_schema: dict[str, Any] = {"type": "object", "properties": {}}
        self._action = action

    def plan(self, arguments: ToolArguments) -> CallPlan:
        return CallPlan(arguments=arguments, display=self.name)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        return await self._action()


def llm(**budget: Any) -> LLMSettings:
    """Settings for a Claude model with the given budget overrides."""
    return LLMSettings(model="claude-sonnet-4-6", budget=BudgetSettings(**budget))


def _results(provider: ScriptedProvider, call: int) -> list[ToolResultBlock]:
    """The tool results the model received in request `call` (0-based)."""
    last = provider.requests[call].messages[-1]
    return [b for b in last.content if isinstance(b, ToolResultBlock)]


async def test_a_multi_step_run_calls_real_commands_and_returns_the_answer(app: App) -> None:
    provider = ScriptedProvider.of(
        calls(("cluster_node_list", {"state": "up"}), text="Listing nodes first."),
        calls(("cluster_config_get", {"key": "region"})),
        answer("Two nodes are ready; region is unset."),
    )
    events = RecordingEvents()
    result = await run(
        RunOptions(prompt="report", llm=llm(), tools=ToolSet.of(app.tools), provider=provider, events=events)
    )
    assert result.reason == "completed"
    assert result.answer == "Two nodes are ready; region is unset."
    assert app.calls() == ["cluster node list --state=up", "cluster config get -- region"]
    first = json.loads(_results(provider, 1)[0].content)
    assert first["exit_code"] == 0 and "[--state=up]" in first["output"]
    assert events.advisory_kinds() == ["confirm_no_terminal"]
    assert [name for name in events.names if name != "warn"] == [
        "starting",
        "message",
        "tool_call",
        "tool_result",
        "message",
        "tool_call",
        "tool_result",
        "message",
    ]
    assert [t.display for t in events.tool_calls] == ["cluster node list --state=up", "cluster config get -- region"]
    assert result.stats.llm_calls == 3 and result.stats.tool_calls == 2
    assert result.stats.by_kind == {"application": 2}


async def test_the_turn_is_journaled_before_its_tool_runs_with_intent_and_effect_id(
    app: App, store: FileJournalStore
) -> None:
    provider = ScriptedProvider.of(calls(("cluster_config_get", {"key": "zone"})), answer("done"))
    result = await run(
        RunOptions(
            prompt="zone?",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=provider,
            session=SessionOptions(store=store, checkpoint=True, name="zone-run"),
        )
    )
    assert result.reason == "completed" and result.session_id == "zone-run"
    records = await store.load("zone-run")
    kinds = [type(r.payload).__name__ for r in records]
    assert kinds == [
        "MetaRecord",
        "AssistantRecord",
        "ToolIntentRecord",
        "ToolResultRecord",
        "AssistantRecord",
        "TerminalRecord",
    ]
    intent = records[2].payload
    assert isinstance(intent, ToolIntentRecord)
    # fiskai's own id: the run and the intent record's sequence number, never the model's tool_use id.
    assert intent.effect_id == f"zone-run/{records[2].seq}" == "zone-run/3"
    assert intent.argv is not None and intent.argv[1:] == ("cluster", "config", "get", "--", "zone")
    assert intent.gate is None
    output = json.loads(_results(provider, 1)[0].content)["output"]
    assert "FISKAI_EFFECT_ID=zone-run/3\n" in output
    terminal = records[-1].payload
    assert isinstance(terminal, TerminalRecord) and terminal.reason == "completed"


async def test_the_budget_counts_all_four_tiers_and_stops_before_the_turns_tools(app: App) -> None:
    turn = reply(
        ToolUseBlock(id="t1", name="cluster_node_list", input={}),
        input_tokens=10,
        output_tokens=10,
        cache_read_tokens=50,
        cache_create_tokens=30,
    )
    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="go",
            llm=llm(max_tokens=100),
            tools=ToolSet.of(app.tools),
            provider=ScriptedProvider.of(turn),
            events=events,
        )
    )
    assert result.reason == "budget"
    assert result.error == "token budget (100) exhausted after 1 iterations"
    assert app.calls() == []
    assert events.tool_calls == []


async def test_a_final_answer_is_delivered_even_over_budget(app: App) -> None:
    result = await run(
        RunOptions(
            prompt="go",
            llm=llm(max_tokens=10),
            tools=ToolSet.of(app.tools),
            provider=ScriptedProvider.of(answer("fine", input_tokens=500)),
        )
    )
    assert result.reason == "completed" and result.answer == "fine"


async def test_the_iteration_cap_ends_a_run_that_never_answers(app: App) -> None:
    provider = ScriptedProvider.of(*[calls(("cluster_node_list", {})) for _ in range(3)])
    result = await run(
        RunOptions(prompt="loop", llm=llm(max_iterations=2), tools=ToolSet.of(app.tools), provider=provider)
    )
    assert result.reason == "max_iterations"
    assert result.error == "max iterations (2) reached without a final answer"
    assert len(provider.requests) == 2
    assert len(app.calls()) == 2


async def test_a_max_tokens_stop_is_an_error_and_its_tool_call_never_runs(app: App) -> None:
    truncated = reply(ToolUseBlock(id="t1", name="cluster_node_list", input={}), stop_reason="max_tokens")
    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="go",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=ScriptedProvider.of(truncated),
            events=events,
        )
    )
    assert result.reason == "error"
    assert result.error == "model reply truncated at the output token limit; the answer is incomplete"
    assert app.calls() == []
    assert events.names[-1] == "message"
    assert events.events[-1][1] == (truncated, True)


async def test_pause_turn_continues_with_the_paused_turn_and_runs_nothing(app: App) -> None:
    paused = reply("searching...", stop_reason="pause_turn")
    provider = ScriptedProvider.of(paused, answer("found it"))
    result = await run(RunOptions(prompt="go", llm=llm(), tools=ToolSet.of(app.tools), provider=provider))
    assert result.reason == "completed" and result.answer == "found it"
    second = provider.requests[1].messages
    assert second[-1] == paused.message
    assert app.calls() == []


async def test_a_refusal_ends_the_run_as_an_error(app: App) -> None:
    result = await run(
        RunOptions(
            prompt="go",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=ScriptedProvider.of(reply("no", stop_reason="refusal")),
        )
    )
    assert (result.reason, result.error) == ("error", "model refused to respond")


async def test_a_failed_model_call_ends_the_run_as_an_error(app: App) -> None:
    result = await run(
        RunOptions(
            prompt="go",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=ScriptedProvider.of(ProviderError("HTTP 500 from the model API: boom")),
        )
    )
    assert (result.reason, result.error) == ("error", "llm call: HTTP 500 from the model API: boom")


async def test_missing_required_parameters_are_rejected_before_the_gate(app: App) -> None:
    prompter = ScriptedPrompter.of(ConfirmChoice.ONCE)
    provider = ScriptedProvider.of(calls(("cluster_node_drain", {"node": "n1"})), answer("ok"))
    events = RecordingEvents()
    await run(
        RunOptions(
            prompt="drain",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=provider,
            gate=ConfirmGate(prompter),
            events=events,
        )
    )
    (result,) = _results(provider, 1)
    assert result.is_error
    assert result.content.startswith('tool "cluster_node_drain" was called without required parameter(s): reason.')
    assert prompter.asked == []
    assert app.calls() == []
    assert events.advisory_kinds() == ["missing_required"]
    assert events.tool_calls == []


async def test_a_gated_command_is_denied_without_a_terminal_and_the_denial_is_journaled(
    app: App, store: FileJournalStore
) -> None:
    drain = {"node": "n1", "reason": "maintenance"}
    provider = ScriptedProvider.of(calls(("cluster_node_drain", drain)), answer("could not drain"))
    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="drain",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=provider,
            events=events,
            session=SessionOptions(store=store, checkpoint=True, name="deny"),
        )
    )
    assert result.reason == "completed"
    (denial,) = _results(provider, 1)
    assert not denial.is_error
    assert json.loads(denial.content) == {
        "allowed": False,
        "reason": "no interactive terminal is attached, so no operator could be asked",
    }
    assert app.calls() == []
    assert events.tool_calls == [] and events.tool_results == []
    assert "confirm_no_terminal" in events.advisory_kinds() and "confirm_denied" in events.advisory_kinds()
    records = await store.load("deny")
    assert not any(isinstance(r.payload, ToolIntentRecord) for r in records)
    (journaled,) = [r.payload for r in records if isinstance(r.payload, ToolResultRecord)]
    assert journaled.gate is not None
    assert journaled.gate["allowed"] is False and journaled.gate["channel"] == "no_terminal"
    assert journaled.gate["tag"] == "ai:confirm" and len(str(journaled.gate["digest"])) == 64


async def test_allow_for_the_session_is_asked_once_per_tool_and_journaled_with_its_channel(
    app: App, store: FileJournalStore
) -> None:
    prompter = ScriptedPrompter.of(ConfirmChoice.ALWAYS)
    provider = ScriptedProvider.of(
        calls(("cluster_config_set", {"key": "a", "value": "1"})),
        calls(("cluster_config_set", {"key": "b", "value": "2"})),
        answer("set both"),
    )
    await run(
        RunOptions(
            prompt="set",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=provider,
            gate=ConfirmGate(prompter),
            session=SessionOptions(store=store, checkpoint=True, name="allow"),
        )
    )
    assert len(prompter.asked) == 1
    assert app.calls() == ["cluster config set -- a 1", "cluster config set -- b 2"]
    intents = [r.payload for r in await store.load("allow") if isinstance(r.payload, ToolIntentRecord)]
    assert [i.gate["channel"] if i.gate else None for i in intents] == ["prompt", "session"]


async def test_confirm_tags_gate_like_ai_confirm_and_the_operator_can_refuse(app: App) -> None:
    prompter = ScriptedPrompter.of(ConfirmChoice.NO)
    provider = ScriptedProvider.of(calls(("args_basic", {"name": "x"})), answer("refused"))
    await run(
        RunOptions(
            prompt="go",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=provider,
            gate=ConfirmGate(prompter, confirm_tags=["impact:ro"]),
        )
    )
    (request,) = prompter.asked
    assert not isinstance(request, str) and request.tag == "impact:ro"
    assert request.display.endswith("args basic -- x")
    assert json.loads(_results(provider, 1)[0].content)["allowed"] is False
    assert app.calls() == []


async def test_an_unknown_tool_is_an_error_result_with_no_call_events(app: App) -> None:
    provider = ScriptedProvider.of(calls(("rm_rf", {})), answer("ok"))
    events = RecordingEvents()
    result = await run(
        RunOptions(prompt="go", llm=llm(), tools=ToolSet.of(app.tools), provider=provider, events=events)
    )
    (unknown,) = _results(provider, 1)
    assert unknown.is_error and unknown.content == 'unknown tool "rm_rf"'
    assert events.tool_calls == [] and result.stats.by_kind == {"unknown": 1}


async def test_suspend_stops_at_the_loop_boundary_and_resume_repeats_nothing(app: App, store: FileJournalStore) -> None:
    """Steps:
    1. A tool requests a suspend while it runs; the run finishes that tool, then stops before the next call.
    2. A fresh run resumes the session; it makes one model call and runs no tool again.
    """
    control = RunControl()

    async def suspend_on_call() -> ToolResult:
        control.request_suspend()
        return ToolResult(output="noted")

    marker = CallbackTool("note", suspend_on_call)
    first = ScriptedProvider.of(calls(("note", {})), answer("never reached"))
    result = await run(
        RunOptions(
            prompt="work",
            llm=llm(),
            tools=ToolSet.of([marker], "custom"),
            provider=first,
            control=control,
            session=SessionOptions(store=store, checkpoint=True, name="susp"),
        )
    )
    assert result.reason == "suspended" and len(first.requests) == 1
    state = fold(await store.load("susp"))
    assert state.terminal is not None and state.terminal.reason == "suspended" and state.pending is None

    second = ScriptedProvider.of(answer("resumed and done"))
    resumed = await run(
        RunOptions(
            prompt="",
            llm=llm(),
            tools=ToolSet.of([CallbackTool("note", suspend_on_call)], "custom"),
            provider=second,
            session=SessionOptions(store=store, resume_id="susp"),
        )
    )
    assert resumed.reason == "completed" and resumed.answer == "resumed and done"
    assert [m.role for m in second.requests[0].messages] == ["user", "assistant", "user"]
    assert second.requests[0].system[-1].startswith("This session was suspended and has now resumed.")
    assert resumed.stats.llm_calls == 2 and resumed.stats.tool_calls == 1


async def test_abort_kills_the_tool_and_journals_an_error(app: App, store: FileJournalStore) -> None:
    control = RunControl()

    async def hang() -> ToolResult:
        control.abort()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    tool = CallbackTool("wait", hang)
    with anyio.fail_after(5):
        result = await run(
            RunOptions(
                prompt="go",
                llm=llm(),
                tools=ToolSet.of([tool], "custom"),
                provider=ScriptedProvider.of(calls(("wait", {}))),
                control=control,
                session=SessionOptions(store=store, checkpoint=True, name="abort"),
            )
        )
    assert (result.reason, result.error) == ("error", "the run was interrupted by the operator")
    records = await store.load("abort")
    terminal = records[-1].payload
    assert isinstance(terminal, TerminalRecord) and terminal.reason == "error"
    assert isinstance(records[1].payload, AssistantRecord)


async def test_a_truncated_turns_tool_call_never_runs_even_on_resume(app: App, store: FileJournalStore) -> None:
    truncated = reply(ToolUseBlock(id="t1", name="cluster_node_list", input={}), stop_reason="max_tokens")
    session = SessionOptions(store=store, checkpoint=True, name="cut")
    first = await run(
        RunOptions(
            prompt="go",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=ScriptedProvider.of(truncated),
            session=session,
        )
    )
    assert first.reason == "error"
    provider = ScriptedProvider.of(answer("retrying differently"))
    resumed = await run(
        RunOptions(
            prompt="",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=provider,
            session=SessionOptions(store=store, resume_id="cut"),
        )
    )
    assert resumed.reason == "completed"
    assert app.calls() == []
    (result,) = _results(provider, 0)
    assert result.is_error and result.content.startswith("not run: the reply that asked for this call was cut off")


async def test_a_bug_in_a_tool_is_an_error_result_and_the_run_goes_on(app: App, store: FileJournalStore) -> None:
    # The call boundary (run_call) turns whatever a tool raises into an in-band result: one broken tool
    # must not end the run, and the model is told the command may not have run.
    async def broken() -> ToolResult:
        raise RuntimeError("bug")

    events = RecordingEvents()
    provider = ScriptedProvider.of(calls(("broken", {})), answer("the tool is broken"))
    result = await run(
        RunOptions(
            prompt="go",
            llm=llm(),
            tools=ToolSet.of([CallbackTool("broken", broken)], "custom"),
            provider=provider,
            events=events,
            session=SessionOptions(store=store, checkpoint=True, name="bug"),
        )
    )
    assert result.reason == "completed" and not result.internal_error
    (failed,) = _results(provider, 1)
    assert failed.is_error
    assert failed.content == 'tool "broken" failed: RuntimeError: bug. The command may not have run.'
    assert "panicked" not in events.names
    records = await store.load("bug")
    (journaled,) = [r.payload for r in records if isinstance(r.payload, ToolResultRecord)]
    assert journaled.result["content"] == failed.content and journaled.result["is_error"] is True


async def test_a_bug_in_the_loop_is_reported_as_an_internal_error_and_journaled(
    app: App, store: FileJournalStore
) -> None:
    def broken(request: Request) -> Response:
        raise RuntimeError("bug")

    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="go",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=ScriptedProvider.of(broken),
            events=events,
            session=SessionOptions(store=store, checkpoint=True, name="bug"),
        )
    )
    assert result.internal_error and result.reason is None
    assert result.error.startswith("internal error: fiskai crashed")
    assert events.names[-1] == "panicked"
    terminal = (await store.load("bug"))[-1].payload
    assert isinstance(terminal, TerminalRecord) and terminal.reason == "error"


async def test_the_start_line_facts_and_verbose_request_summaries(app: App, store: FileJournalStore) -> None:
    events = RecordingEvents()
    provider = ScriptedProvider.of(calls(("cluster_node_list", {})), answer("done"))
    await run(
        RunOptions(
            prompt="list the nodes please",
            llm=llm(),
            tools=ToolSet.of(app.tools),
            provider=provider,
            events=events,
            verbose=True,
            session=SessionOptions(store=store, checkpoint=True, name="info"),
        )
    )
    info = events.info
    assert (info.app_tools, info.total_tools, info.confirm_tools) == (len(app.tools), len(app.tools), 2)
    assert info.deferred_tools == len(app.tools) - 2, "the two ai:no_defer commands stay direct"
    assert info.tool_search and info.new_session and info.session_id == "info" and not info.resumed
    summaries = [payload for name, payload in events.events if name == "llm_request"]
    assert summaries[0] == '"list the nodes please" (msgs=1, 76 B)'
    assert str(summaries[1]).startswith("1 tool result (msgs=3, ")


async def test_remote_tools_are_traced_counted_and_journaled_as_remote(store: FileJournalStore) -> None:
    invoker = FakeRemoteInvoker(replies={("billing", "invoice_ls"): RemoteReply(output='{"invoices":[]}')})
    peer = RemoteTool.from_descriptor(
        RemoteDescriptor(name="invoice_ls", description="List invoices (remote)."),
        name="billing_invoice_ls",
        agent="billing",
        invoker=invoker,
    )
    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="invoices?",
            llm=llm(),
            tools=ToolSet((ToolEntry(tool=peer, kind="remote", origin="billing"),)),
            # A peer's tools carry no tags (the serving side never serves gated tools): no confirm tag matches.
            gate=ConfirmGate(ScriptedPrompter.of(), confirm_tags=["impact:ro"]),
            provider=ScriptedProvider.of(calls(("billing_invoice_ls", {"year": 2024.0})), answer("none")),
            events=events,
            session=SessionOptions(store=store, checkpoint=True, name="remote"),
        )
    )
    (trace,) = events.tool_calls
    assert (trace.presentation, trace.kind, trace.agent) == ("remote", "remote", "billing")
    assert result.stats.remote_tool_calls == 1 and events.info.confirm_tools == 0, "remote tools are not gated"
    assert result.stats.by_kind == {"remote": 1}
    assert invoker.calls == [("billing", "invoice_ls", '{"year":2024.0}')]
    records = await store.load("remote")
    (intent,) = [r.payload for r in records if isinstance(r.payload, ToolIntentRecord)]
    (journaled,) = [r.payload for r in records if isinstance(r.payload, ToolResultRecord)]
    assert intent.remote_target == "billing/invoice_ls" and journaled.remote
    assert intent.argv is None


async def test_knowledge_searches_in_one_run_skip_what_the_run_already_delivered(store: FileJournalStore) -> None:
    # knowledge_search keeps no state: the run passes what it delivered, and takes what a result delivered.
    searcher = FakeSearcher(excerpts={"ops.md#1": "streams are replicated", "ops.md#2": "streams have limits"})
    search = calls(("knowledge_search", {"query": "streams"}))
    tools = agent_tool_set(knowledge=KnowledgeAccess(searcher, max_injected_tokens=8), has_application=False)
    provider = ScriptedProvider.of(search, search, search, answer("done"))
    await run(
        RunOptions(
            prompt="streams?",
            llm=llm(),
            tools=tools,
            provider=provider,
            session=SessionOptions(store=store, checkpoint=True, name="k"),
        )
    )
    assert [excluded for _, _, excluded in searcher.calls] == [
        frozenset(),
        frozenset({"ops.md#1"}),
        frozenset({"ops.md#1", "ops.md#2"}),
    ]
    assert [_results(provider, n)[0].content for n in (1, 2)] == [
        "ops.md#1: streams are replicated",
        "ops.md#2: streams have limits",
    ]
    journaled = [r.payload for r in await store.load("k") if isinstance(r.payload, ToolResultRecord)]
    assert [r.result.get("citations") for r in journaled] == [["ops.md#1"], ["ops.md#2"], None]
