"""The client-side tool finder through the real SDK and the scripted server's local-server mode.

A local Anthropic-compatible server refuses `defer_loading` and the tool-search tool (400) and caches
nothing. Over the NATS CLI (221 commands) a run then sends the `ai:no_defer` tools plus `find_tools`,
loads what `find_tools` answers, refuses a deferred tool the model never found, keeps the found set
across a resume, and falls back once when a server refuses a capability it was sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

import pytest

from fiskai_agent import RunControl, RunOptions, SessionOptions, SetupError, run
from fiskai_agent.llm import Capabilities, CapabilityOverrides, ProviderSettings, provider_capabilities
from fiskai_agent.testing import (
    Failure,
    MessagesServer,
    RecordedRequest,
    RecordingEvents,
    ScriptedProvider,
    Turn,
    answer,
    text,
    tool_use,
)
from fiskai_core.config import LLMSettings, Mode, ThinkingSettings, parse_config
from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import CommandTool, command_tools
from fiskai_core.testing import FakeTool, write_fake_app
from fiskai_core.tools import Tool, ToolSet
from fiskai_runstate import FileJournalStore
from fiskai_runstate.records import ToolIntentRecord, ToolResultRecord

pytestmark = pytest.mark.anyio


class App(Protocol):
    tools: list[Tool]


LOCAL = LLMSettings(model="qwen3:8b")
CLAUDE = LLMSettings(model="claude-sonnet-4-6")


@pytest.fixture
def nats(tmp_path: Path, natscli: Path) -> list[CommandTool]:
    """The NATS CLI's commands as tools over a fake `nats` that logs each call to `nats.calls`."""
    return command_tools(load_application(str(write_fake_app(tmp_path, natscli, name="nats"))))


def _calls(tmp_path: Path) -> str:
    log = tmp_path / "nats.calls"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def _found(request: RecordedRequest, use_id: str) -> list[str]:
    (result,) = [r for r in request.tool_results() if r["tool_use_id"] == use_id]
    assert not result.get("is_error"), result
    return [tool["name"] for tool in json.loads(str(result["content"]))["tools"]]


def _at(server: MessagesServer, llm: LLMSettings) -> ProviderSettings:
    """Provider settings for `llm`'s model at the scripted server (a local server needs no key)."""
    return ProviderSettings(model=llm.model, base_url=server.base_url)


def _pinned(tools: list[CommandTool]) -> list[str]:
    return [t.name for t in tools if "ai:no_defer" in t.tags]


async def test_a_local_server_run_finds_a_deferred_tool_then_calls_it(nats: list[CommandTool], tmp_path: Path) -> None:
    """Steps:
    1. The first request carries the ai:no_defer tools and find_tools, not the 221 commands.
    2. The model asks find_tools; the answer names stream_ls; the next request carries its definition last.
    3. The model calls stream_ls; the fake nats runs it; every request stayed under 20 tool definitions.
    """
    assert len(nats) >= 200
    events = RecordingEvents()
    with MessagesServer(local=True) as local:
        local.add(
            Turn([tool_use("find_tools", {"query": "list the streams"}, id="toolu_find")]),
            Turn([tool_use("stream_ls", {}, id="toolu_ls")]),
            Turn([text("There are no streams.")]),
        )
        result = await run(
            RunOptions(
                prompt="which streams exist?",
                llm=LOCAL,
                tools=ToolSet.of(nats),
                provider=_at(local, LOCAL),
                events=events,
            )
        )
        requests = local.requests

    assert (result.reason, result.answer) == ("completed", "There are no streams.")
    first, second, third = requests
    assert first.tool_names == [*_pinned(nats), "find_tools"]
    assert "stream_ls" in _found(second, "toolu_find")
    assert second.tool_names[: len(first.tool_names)] == first.tool_names
    assert "stream_ls" in second.tool_names[len(first.tool_names) :]
    assert third.tool_names == second.tool_names
    for request in requests:
        assert len(request.tools) < 20
        assert "defer_loading" not in request.raw.decode() and "cache_control" not in request.body
    assert any("find_tools" in block["text"] for block in first.body["system"])
    assert _calls(tmp_path).startswith("[stream]\n[ls]\n")
    assert events.info is not None and events.info.tool_finder and not events.info.tool_search
    assert events.info.deferred_tools == len(nats) - len(_pinned(nats))
    (finder,) = [a for a in events.advisories if a.kind == "tool_finder"]
    assert (
        finder.message.startswith(f"{len(nats)} tools are available, their definitions take about 44,")
        and "(over llm.tool_definition_budget, 4,096) and the model server has no tool search" in finder.message
    )
    assert events.info.total_tools == len(nats)
    assert [t.display for t in events.tool_calls][0] == 'find_tools("list the streams")'


async def test_a_deferred_tool_the_model_never_found_is_refused_in_band_and_nothing_runs(
    nats: list[CommandTool], tmp_path: Path
) -> None:
    store = FileJournalStore(tmp_path / "runs")
    events = RecordingEvents()
    with MessagesServer(local=True) as local:
        local.add(Turn([tool_use("stream_rm", {"stream": "ORDERS"}, id="toolu_rm")]), Turn([text("I could not.")]))
        result = await run(
            RunOptions(
                prompt="delete ORDERS",
                llm=LOCAL,
                tools=ToolSet.of(nats),
                provider=_at(local, LOCAL),
                events=events,
                session=SessionOptions(store=store, checkpoint=True, name="unfound"),
            )
        )
        (refused,) = local.requests[1].tool_results()

    assert result.reason == "completed"
    assert refused["is_error"] is True
    assert str(refused["content"]).startswith('tool "stream_rm" is not loaded, so nothing was run; call find_tools')
    assert _calls(tmp_path) == ""
    assert "tool_not_loaded" in events.advisory_kinds() and events.tool_calls == []
    records = [r.payload for r in await store.load("unfound")]
    assert not any(isinstance(p, ToolIntentRecord) for p in records)
    assert any(isinstance(p, ToolResultRecord) and p.tool_use_id == "toolu_rm" for p in records)


async def test_a_resumed_run_carries_the_tools_found_before_it_stopped(nats: list[CommandTool], tmp_path: Path) -> None:
    """Steps:
    1. A checkpointed run finds kv tools, then is suspended at the next loop boundary.
    2. The resumed run's first request carries the same found tools, in the same order, at the end.
    3. The model calls one of them without searching again; it runs.
    """
    store = FileJournalStore(tmp_path / "runs")
    control = RunControl()

    def find_then_suspend(request: RecordedRequest) -> Turn:
        control.request_suspend()
        return Turn([tool_use("find_tools", {"query": "list the key-value buckets"}, id="toolu_find")])

    with MessagesServer([find_then_suspend], local=True) as local:
        first = await run(
            RunOptions(
                prompt="which KV buckets exist?",
                llm=LOCAL,
                tools=ToolSet.of(nats),
                provider=_at(local, LOCAL),
                control=control,
                session=SessionOptions(store=store, checkpoint=True, name="kv"),
            )
        )
    assert first.reason == "suspended"
    records = [r.payload for r in await store.load("kv")]
    (journaled,) = [p for p in records if isinstance(p, ToolResultRecord)]
    found = [tool["name"] for tool in json.loads(str(journaled.result["content"]))["tools"]]
    assert "kv_ls" in found
    # find_tools has no effect to recover after a crash, so it leaves no intent record.
    assert not any(isinstance(p, ToolIntentRecord) for p in records)

    with MessagesServer(local=True) as local:
        local.add(Turn([tool_use("kv_ls", {}, id="toolu_kv")]), Turn([text("No buckets.")]))
        resumed = await run(
            RunOptions(
                prompt="",
                llm=LOCAL,
                tools=ToolSet.of(nats),
                provider=_at(local, LOCAL),
                session=SessionOptions(store=store, resume_id="kv"),
            )
        )
        requests = local.requests

    assert (resumed.reason, resumed.answer) == ("completed", "No buckets.")
    base = [*_pinned(nats), "find_tools"]
    assert requests[0].tool_names == base + found
    assert "[kv]\n[ls]\n" in _calls(tmp_path)


async def test_a_400_naming_a_capability_switches_the_run_to_the_fallback_once(
    nats: list[CommandTool], tmp_path: Path
) -> None:
    """A Claude model name keeps tool search on, but this server is local: its 400 on `defer_loading`
    moves the run to find_tools with one warning, and the same call is repeated without the field."""
    events = RecordingEvents()
    with MessagesServer(local=True) as local:
        local.add(
            Turn([tool_use("find_tools", {"query": "list streams"}, id="toolu_find")]),
            Turn([tool_use("stream_ls", {}, id="toolu_ls")]),
            Turn([text("none")]),
        )
        result = await run(
            RunOptions(
                prompt="streams?", llm=CLAUDE, tools=ToolSet.of(nats), provider=_at(local, CLAUDE), events=events
            )
        )
        requests = local.requests

    assert (result.reason, result.answer) == ("completed", "none")
    refused, *served = requests
    assert refused.deferred_tool_names and "tool_search_tool_bm25" in refused.tool_names
    assert len(served) == 3
    for request in served:
        assert len(request.tools) < 20 and "defer_loading" not in request.raw.decode()
        assert "cache_control" not in request.body and "thinking" not in request.body
    (fallback,) = [a for a in events.advisories if a.kind == "capabilities_fallback"]
    assert fallback.name == "tool_search"
    assert "defer_loading" in fallback.message and "find_tools" in fallback.message
    assert _calls(tmp_path).startswith("[stream]\n[ls]\n")


async def test_a_refused_thinking_turns_it_off_and_a_small_tool_set_keeps_every_tool(app: App) -> None:
    """Below the deferral threshold there is nothing to find: the fallback only drops the capabilities."""
    few = app.tools[:5]
    events = RecordingEvents()
    thinking = LLMSettings(model="claude-sonnet-4-6", thinking=ThinkingSettings(enabled=True))
    with MessagesServer(
        [Failure(400, "thinking.type: Input tag 'adaptive' is not supported", should_retry=False), Turn([text("ok")])]
    ) as server:
        result = await run(
            RunOptions(prompt="x", llm=thinking, tools=ToolSet.of(few), provider=_at(server, thinking), events=events)
        )
        refused, served = server.requests
    assert result.answer == "ok"
    assert "thinking" in refused.body and "cache_control" in refused.body
    assert "thinking" not in served.body and "cache_control" not in served.body
    assert served.tool_names == [t.name for t in few]
    (fallback,) = [a for a in events.advisories if a.kind == "capabilities_fallback"]
    assert fallback.name == "thinking" and fallback.message.startswith("the model server refused thinking (HTTP 400")


async def test_after_the_fallback_a_second_refusal_ends_the_run(nats: list[CommandTool]) -> None:
    with MessagesServer(local=True) as local:
        local.add(Failure(400, "thinking: unsupported for this model", should_retry=False))
        result = await run(
            RunOptions(prompt="streams?", llm=CLAUDE, tools=ToolSet.of(nats), provider=_at(local, CLAUDE))
        )
        assert len(local.requests) == 2
    assert result.reason == "error"
    assert result.error.startswith("llm call: HTTP 400") and "thinking: unsupported" in result.error


async def test_a_400_about_something_else_is_not_a_capability_refusal() -> None:
    tools = [FakeTool(name=f"t{i}", description="t") for i in range(3)]
    with MessagesServer([Failure(400, "messages.0.content: field required", should_retry=False)]) as server:
        result = await run(
            RunOptions(prompt="x", llm=CLAUDE, tools=ToolSet.of(tools, "custom"), provider=_at(server, CLAUDE))
        )
        assert len(server.requests) == 1
    assert result.reason == "error" and "field required" in result.error


async def test_an_application_tool_named_find_tools_stops_setup_when_the_finder_is_needed() -> None:
    provider = ScriptedProvider.of(answer("ok"), capabilities=Capabilities(provider="anthropic"))
    # Definitions over the default budget (4,096 tokens), so the finder is needed.
    tools = [FakeTool(name=f"t{i}", description="t" * 2000) for i in range(11)] + [FakeTool(name="find_tools")]
    with pytest.raises(SetupError) as caught:
        await run(RunOptions(prompt="x", llm=CLAUDE, tools=ToolSet.of(tools, "custom"), provider=provider))
    assert '"find_tools" clashes with the client-side tool finder' in str(caught.value)
    assert provider.requests == []


async def test_no_tool_search_keeps_the_original_behaviour_of_sending_every_tool(nats: list[CommandTool]) -> None:
    settings = LLMSettings(model="qwen3:8b", no_tool_search=True)
    with MessagesServer([Turn([text("ok")])], local=True) as local:
        await run(RunOptions(prompt="x", llm=settings, tools=ToolSet.of(nats), provider=_at(local, settings)))
        (request,) = local.requests
    assert len(request.tools) == len(nats) and "find_tools" not in request.tool_names


def _config(capabilities: str, model: str = "claude-sonnet-4-6") -> LLMSettings:
    text_ = f"system_prompt: p\nllm:\n  model: {model}\n  capabilities: {capabilities}\n"
    return parse_config(text_, Mode.AGENT).llm


async def test_agent_yaml_forces_capabilities_either_way(nats: list[CommandTool]) -> None:
    """`tool_search: off` for a Claude model uses the finder; `on` for a local model name sends deferral."""
    off = _config("{tool_search: off}")
    events = RecordingEvents()
    with MessagesServer([Turn([text("ok")])]) as server:
        await run(RunOptions(prompt="x", llm=off, tools=ToolSet.of(nats), provider=_at(server, off), events=events))
        (request,) = server.requests
    assert "find_tools" in request.tool_names and not request.deferred_tool_names
    assert "cache_control" in request.body
    assert events.info is not None
    assert (
        events.info.capabilities
        == "server tool search set in llm.capabilities; auto: claude-sonnet-4-6 is a Claude model"
    )
    assert events.advisory_kinds() == ["tool_finder"]

    forced_on = _config("{tool_search: on, prompt_cache: true}", model="qwen3:8b")
    events = RecordingEvents()
    with MessagesServer([Turn([text("ok")])]) as server:
        await run(
            RunOptions(
                prompt="x", llm=forced_on, tools=ToolSet.of(nats), provider=_at(server, forced_on), events=events
            )
        )
        (request,) = server.requests
    assert len(request.deferred_tool_names) >= 200 and "cache_control" in request.body
    assert events.info is not None and events.info.capabilities == (
        "server tool search, prompt cache set in llm.capabilities; "
        'auto: model "qwen3:8b" behind 127.0.0.1 is not a Claude model on Anthropic'
    )
    # Thinking is still off by the automatic choice, so the reduced-capability warning stays.
    assert "capabilities_reduced" in events.advisory_kinds()


_LOCAL_URL = "http://localhost:11434"


@pytest.mark.parametrize(
    ("model", "base_url", "overrides", "expected", "warned"),
    [
        ("claude-haiku-4-5", "http://127.0.0.1:11434", None, (True, True, True), False),
        ("qwen3", None, None, (True, True, True), False),
        ("qwen3", "https://api.anthropic.com", None, (True, True, True), False),
        ("qwen3", _LOCAL_URL, None, (False, False, False), True),
        ("qwen3", _LOCAL_URL, CapabilityOverrides(thinking=True), (False, False, True), True),
        (
            "qwen3",
            _LOCAL_URL,
            CapabilityOverrides(tool_search=False, prompt_cache=False, thinking=False),
            (False,) * 3,
            False,
        ),
        ("claude-x", None, CapabilityOverrides(tool_search=False, prompt_cache=False), (False, False, True), False),
    ],
)
async def test_capabilities_are_decided_per_run_without_the_sdk(
    model: str,
    base_url: str | None,
    overrides: CapabilityOverrides | None,
    expected: tuple[bool, bool, bool],
    warned: bool,
) -> None:
    caps = provider_capabilities("anthropic", model, base_url, overrides)
    assert (caps.tool_search, caps.prompt_cache, caps.thinking) == expected
    shown = caps.describe()
    assert shown.startswith("server tool search ") and ("(llm.capabilities)" in shown) is (overrides is not None)
    # A warning only for what the automatic choice turned off and the operator did not decide.
    assert bool(caps.reason) is warned


async def test_a_short_tool_list_is_sent_whole_however_many_tools_it_has() -> None:
    """The finder starts by size (llm.tool_definition_budget), not at 10 tools: 15 small tools are shown whole."""
    small = [FakeTool(name=f"t{i}", description="lists things") for i in range(15)]
    events = RecordingEvents()
    with MessagesServer([Turn([text("ok")])], local=True) as local:
        await run(
            RunOptions(
                prompt="x", llm=LOCAL, tools=ToolSet.of(small, "custom"), provider=_at(local, LOCAL), events=events
            )
        )
        (request,) = local.requests
    assert request.tool_names == [f"t{i}" for i in range(15)]
    assert "tool_finder" not in events.advisory_kinds()


async def test_the_budget_is_the_operators_to_lower() -> None:
    small = [FakeTool(name=f"t{i}", description="lists things") for i in range(3)]
    tight = LLMSettings(model="qwen3:8b", tool_definition_budget=20)
    events = RecordingEvents()
    with MessagesServer([Turn([text("ok")])], local=True) as local:
        await run(
            RunOptions(
                prompt="x", llm=tight, tools=ToolSet.of(small, "custom"), provider=_at(local, tight), events=events
            )
        )
        (request,) = local.requests
    assert request.tool_names == ["find_tools"]
    (finder,) = [a for a in events.advisories if a.kind == "tool_finder"]
    assert "(over llm.tool_definition_budget, 20)" in finder.message


async def test_vllms_missing_input_schema_400_is_recognised_as_refused_tool_search(nats: list[CommandTool]) -> None:
    """vLLM validates the tool-search tool against a model requiring input_schema; its 400 names the field."""
    vllm = (
        "1 validation error for AnthropicMessagesRequest\ntools.221.input_schema\n  Field required "
        "[type=missing, input_value={'type': 'x', 'name': 'x'}, input_type=dict]"
    )
    events = RecordingEvents()
    with MessagesServer([Failure(400, vllm, should_retry=False), Turn([text("ok")])]) as server:
        result = await run(
            RunOptions(prompt="x", llm=CLAUDE, tools=ToolSet.of(nats), provider=_at(server, CLAUDE), events=events)
        )
        refused, served = server.requests
    assert result.answer == "ok"
    assert refused.deferred_tool_names and not served.deferred_tool_names
    assert served.tool_names[-1] == "find_tools" and len(served.tools) < 20
    (fallback,) = [a for a in events.advisories if a.kind == "capabilities_fallback"]
    assert fallback.name == "tool_search" and "input_schema" in fallback.message


async def test_a_400_naming_input_schema_without_the_search_tool_is_not_a_refusal() -> None:
    few = [FakeTool(name=f"t{i}", description="t") for i in range(3)]
    failure = Failure(400, "tools.0.input_schema: Field required", should_retry=False)
    with MessagesServer([failure]) as server:
        result = await run(
            RunOptions(prompt="x", llm=CLAUDE, tools=ToolSet.of(few, "custom"), provider=_at(server, CLAUDE))
        )
        assert len(server.requests) == 1
    assert result.reason == "error" and "input_schema" in result.error
