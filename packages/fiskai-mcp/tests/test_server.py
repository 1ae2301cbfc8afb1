"""The server end to end through the real mcp client, in process, under both protocol eras.

`Client(server, mode="auto")` speaks 2026-07-28 (approval by an `InputRequiredResult` round trip);
`mode="legacy"` speaks 2025-11-25 over memory streams (approval by mid-call elicitation). The tools are
the real fixturectl commands, run through a recording fake binary, so "did not run" is checked on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import JsonValue
from typing_extensions import override

from fiskai_core.builtins import KnowledgeSearchTool
from fiskai_core.errors import ToolSelectionError
from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import CommandTool, command_tools
from fiskai_core.prompter import ConfirmChoice, GateRequest
from fiskai_core.testing import FakeSearcher, FakeTool, ScriptedPrompter, write_fake_app
from fiskai_core.tools import CallContext, CallPlan, ToolArguments, ToolEntry, ToolResult, ToolSet
from fiskai_mcp import ConfirmMode, ServerOptions, build_server, serve_async

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "fixturectl"
MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]
VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}


def _tools(tmp_path: Path, *, exit_code: int = 0) -> list[CommandTool]:
    app = write_fake_app(tmp_path, EXAMPLE / "fixturectl.introspect.json", exit_code=exit_code)
    return command_tools(load_application(str(app), global_flags=["output"]))


def _calls(tmp_path: Path) -> str:
    log = tmp_path / "fakeapp.calls"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def _text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def _answer(action: Literal["accept", "decline", "cancel"], content: dict[str, Any] | None = None):
    asked: list[str] = []

    async def callback(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content=content)

    return callback, asked


@pytest.mark.parametrize("mode", MODES)
async def test_lists_every_tool_with_its_own_schema_and_the_instructions(
    tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    tools = _tools(tmp_path)
    server = build_server(tools, ServerOptions(name="fixturectl", instructions="Prefer read-only commands."))

    async with Client(server, mode=mode) as client:
        assert client.protocol_version == VERSION[mode]
        assert client.instructions == "Prefer read-only commands."
        listed = (await client.list_tools()).tools

    assert [entry.name for entry in listed] == [tool.name for tool in tools]
    for entry, tool in zip(listed, tools, strict=True):
        assert entry.input_schema == tool.input_schema
        assert entry.description == tool.description


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_runs_the_command_and_a_non_zero_exit_is_a_result(
    tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    server = build_server(_tools(tmp_path, exit_code=3))

    async with Client(server, mode=mode) as client:
        result = await client.call_tool("cluster_config_get", {"key": "replicas", "output": "json"})

    assert result.is_error is False
    body = json.loads(_text(result))
    assert body["exit_code"] == 3
    assert body["command"] == "cluster config get --output=json -- replicas"
    assert "[replicas]" in body["output"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_execution_failure_is_an_in_band_error(tmp_path: Path, mode: Literal["auto", "legacy"]) -> None:
    tools = _tools(tmp_path)
    (tmp_path / "fakeapp").unlink()
    server = build_server(tools)

    async with Client(server, mode=mode) as client:
        missing = await client.call_tool("cluster_node_list", {})
        invalid = await client.call_tool("cluster_config_get", {"key": 5})

    assert missing.is_error is True
    assert "fakeapp" in _text(missing)
    assert invalid.is_error is True
    assert "do not match its schema" in _text(invalid)


class _Progress:
    """Wakes a waiter whenever a counter it watches changes (no polling, no sleeps)."""

    def __init__(self) -> None:
        self._changed = anyio.Event()

    def bump(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def until(self, condition: Callable[[], bool]) -> None:
        with anyio.fail_after(10):
            while not condition():
                await self._changed.wait()


class _Parked:
    """A tool that parks every call until released, counting how many run at once."""

    def __init__(self, name: str = "parked", progress: _Progress | None = None) -> None:
        self.progress = progress or _Progress()
        self.name = name
        self.tags: Sequence[str] = ()
        self.description = "Waits until released."
        self.input_schema: Mapping[str, JsonValue] = {"type": "object"}
        self.release = anyio.Event()
        self.running = 0
        self.peak = 0
        self.started = 0

    def plan(self, arguments: ToolArguments) -> CallPlan:
        return CallPlan(arguments=arguments, display=self.name)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        self.started += 1
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.progress.bump()
        try:
            await self.release.wait()
        finally:
            self.running -= 1
        return ToolResult(output=f"done {plan.arguments.json()}")


class _Arrivals:
    """Server middleware counting tools/call requests that reached the server."""

    def __init__(self, progress: _Progress) -> None:
        self.count = 0
        self.progress = progress

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call":
            self.count += 1
            self.progress.bump()
        return await call_next(ctx)


@pytest.mark.parametrize(("mode", "cap"), [("auto", 0), ("legacy", 0), ("auto", 5)])
async def test_twenty_parallel_calls_never_run_more_than_the_cap(mode: Literal["auto", "legacy"], cap: int) -> None:
    tool = _Parked()
    server = build_server([tool], ServerOptions(max_concurrent=cap))
    arrivals = _Arrivals(tool.progress)
    server.middleware.append(arrivals)
    expected = cap or 2
    results: list[types.CallToolResult] = []

    async with Client(server, mode=mode) as client:

        async def one(index: int) -> None:
            results.append(await client.call_tool("parked", {"i": index}))

        async with anyio.create_task_group() as tasks:
            for index in range(20):
                tasks.start_soon(one, index)
            await tool.progress.until(lambda: arrivals.count == 20 and tool.started == expected)
            assert tool.running == expected
            tool.release.set()

    assert tool.peak == expected
    assert tool.started == 20
    assert sorted(_text(result) for result in results) == sorted(f'done {{"i":{i}}}' for i in range(20))


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_that_outlives_the_timeout_is_stopped_with_an_error(mode: Literal["auto", "legacy"]) -> None:
    tool = _Parked()
    server = build_server([tool], ServerOptions(tool_timeout=0.05))

    async with Client(server, mode=mode) as client:
        result = await client.call_tool("parked", {})

    assert result.is_error is True
    assert _text(result).startswith('tool "parked" did not finish within 0.05s and was stopped')
    assert tool.running == 0


@pytest.mark.parametrize("mode", MODES)
async def test_an_accepted_approval_runs_the_gated_command(tmp_path: Path, mode: Literal["auto", "legacy"]) -> None:
    log: list[str] = []
    server = build_server(_tools(tmp_path), ServerOptions(name="fixturectl"), log=log.append)
    callback, asked = _answer("accept", {"approve": True})

    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool("cluster_config_set", {"key": "replicas", "value": "3"})

    assert result.is_error is False
    assert json.loads(_text(result))["exit_code"] == 0
    assert "[replicas]" in _calls(tmp_path)
    assert len(asked) == 1
    assert asked[0].startswith("fixturectl wants to run a command that requires your approval.")
    assert "Gated by: ai:confirm" in asked[0]
    channel = "input_required" if mode == "auto" else "elicitation"
    assert any(line.startswith("Approval approved") and f"via {channel}" in line for line in log)


DENIALS: list[tuple[Literal["accept", "decline", "cancel"], dict[str, Any] | None, str]] = [
    ("decline", None, "Not approved: the user declined to run"),
    ("cancel", None, "Approval not completed: the user dismissed the approval prompt"),
    ("accept", {"approve": False}, "Not approved: the user reviewed"),
    ("accept", {"approve": "true"}, "Not approved: the user reviewed"),
    ("accept", None, "Not approved: the user reviewed"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("action", "content", "expected"), DENIALS)
async def test_anything_but_an_explicit_accept_is_a_denial_and_nothing_runs(
    tmp_path: Path,
    mode: Literal["auto", "legacy"],
    action: Literal["accept", "decline", "cancel"],
    content: dict[str, Any] | None,
    expected: str,
) -> None:
    server = build_server(_tools(tmp_path), log=lambda _line: None)
    callback, asked = _answer(action, content)

    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool("cluster_node_drain", {"node": "n1", "reason": "upgrade"})

    assert result.is_error is True
    assert _text(result).startswith(expected)
    assert len(asked) == 1
    assert _calls(tmp_path) == ""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("confirm", "runs", "expected"),
    [
        (ConfirmMode.AUTO, True, None),
        (ConfirmMode.ALWAYS, False, "Not approved: running"),
        (ConfirmMode.NEVER, True, None),
    ],
)
async def test_a_client_that_cannot_elicit_follows_the_confirm_mode(
    tmp_path: Path, mode: Literal["auto", "legacy"], confirm: ConfirmMode, runs: bool, expected: str | None
) -> None:
    log: list[str] = []
    server = build_server(
        _tools(tmp_path), ServerOptions(confirm_mode=confirm, confirm_tags=["impact:rw"]), log=log.append
    )

    async with Client(server, mode=mode) as client:
        result = await client.call_tool("cluster_config_set", {"key": "k", "value": "v"})

    assert result.is_error is (not runs)
    assert ("[k]" in _calls(tmp_path)) is runs
    if expected is not None:
        assert _text(result).startswith(expected)
        assert "it does not support elicitation" in _text(result)
    if confirm is ConfirmMode.AUTO:
        assert any("ungated: gated by ai:confirm but the client cannot elicit" in line for line in log)


@pytest.mark.parametrize("mode", MODES)
async def test_by_default_a_client_that_cannot_elicit_is_refused_a_gated_call(
    tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    """Unlike the Go agent (`auto`), nobody approving is a denial unless the operator chose otherwise."""
    log: list[str] = []
    server = build_server(_tools(tmp_path), log=log.append)

    async with Client(server, mode=mode) as client:
        gated = await client.call_tool("cluster_node_drain", {"node": "n1", "reason": "upgrade"})
        ungated = await client.call_tool("cluster_config_get", {"key": "k"})

    assert gated.is_error is True
    assert _text(gated).startswith('Not approved: running "')
    assert "it does not support elicitation" in _text(gated)
    assert ungated.is_error is False
    assert "[n1]" not in _calls(tmp_path)
    assert not any("ungated" in line for line in log)


@pytest.mark.parametrize("mode", MODES)
async def test_never_mode_does_not_ask_even_a_client_that_can(tmp_path: Path, mode: Literal["auto", "legacy"]) -> None:
    server = build_server(_tools(tmp_path), ServerOptions(confirm_mode=ConfirmMode.NEVER), log=lambda _line: None)
    callback, asked = _answer("decline")

    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool("cluster_node_drain", {"node": "n1", "reason": "upgrade"})

    assert result.is_error is False
    assert asked == []
    assert "[n1]" in _calls(tmp_path)


@pytest.mark.parametrize("mode", MODES)
async def test_a_confirm_tags_tag_gates_like_ai_confirm(tmp_path: Path, mode: Literal["auto", "legacy"]) -> None:
    tool = FakeTool(name="wipe", tags=["impact:rw"])
    server = build_server([tool], ServerOptions(confirm_tags=["impact:rw"]), log=lambda _line: None)
    callback, asked = _answer("decline")

    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool("wipe", {})

    assert result.is_error is True
    assert "Gated by: impact:rw" in asked[0]
    assert tool.calls == []


async def _first_round(client: Client, name: str, arguments: dict[str, Any]) -> types.InputRequiredResult:
    first = await client.session.call_tool(name, arguments, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    assert first.request_state is not None
    assert first.input_requests is not None
    assert isinstance(first.input_requests["confirm"], types.ElicitRequest)
    return first


ACCEPT = {"confirm": types.ElicitResult(action="accept", content={"approve": True})}


async def _retry(
    client: Client,
    name: str,
    arguments: dict[str, Any],
    state: str | None,
    responses: Any = ACCEPT,
) -> types.CallToolResult:
    result = await client.session.call_tool(
        name, arguments, input_responses=responses, request_state=state, allow_input_required=True
    )
    assert isinstance(result, types.CallToolResult)
    return result


async def test_replayed_approval_state_is_refused(tmp_path: Path) -> None:
    """Steps: 1. ask; 2. answer accept with the state: it runs; 3. send the same answer and state again."""
    server = build_server(_tools(tmp_path), log=lambda _line: None)
    callback, _ = _answer("accept", {"approve": True})
    arguments = {"key": "replicas", "value": "3"}

    async with Client(server, elicitation_callback=callback) as client:
        first = await _first_round(client, "cluster_config_set", arguments)
        approved = await _retry(client, "cluster_config_set", arguments, first.request_state)
        replayed = await _retry(client, "cluster_config_set", arguments, first.request_state)

    assert approved.is_error is False
    assert replayed.is_error is True
    assert "could not be verified" in _text(replayed)
    assert _calls(tmp_path).count("[replicas]") == 1


async def test_fifty_concurrent_redemptions_of_one_approval_state_run_the_command_once(tmp_path: Path) -> None:
    """Over real HTTP, 50 retries racing with the same accepted state: one runs, 49 are refused."""
    server = build_server(_tools(tmp_path), log=lambda _line: None)
    callback, _ = _answer("accept", {"approve": True})
    arguments = {"key": "replicas", "value": "3"}
    results: list[types.CallToolResult] = []

    async with _over_http(server) as url, Client(url, elicitation_callback=callback) as client:
        state = (await _first_round(client, "cluster_config_set", arguments)).request_state

        async def redeem() -> None:
            results.append(await _retry(client, "cluster_config_set", arguments, state))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tasks:
                for _ in range(50):
                    tasks.start_soon(redeem)

    assert sorted(result.is_error for result in results) == [False] + [True] * 49
    assert all("could not be verified" in _text(result) for result in results if result.is_error)
    assert _calls(tmp_path).count("[replicas]") == 1


async def test_approval_state_for_other_arguments_another_tool_or_altered_is_refused(tmp_path: Path) -> None:
    server = build_server(_tools(tmp_path), log=lambda _line: None)
    callback, _ = _answer("accept", {"approve": True})
    arguments = {"key": "replicas", "value": "3"}

    async with Client(server, elicitation_callback=callback) as client:
        state = (await _first_round(client, "cluster_config_set", arguments)).request_state
        other_args = await _retry(client, "cluster_config_set", {"key": "replicas", "value": "300"}, state)
        state = (await _first_round(client, "cluster_config_set", arguments)).request_state
        other_tool = await _retry(client, "cluster_node_drain", {"node": "replicas", "reason": "r"}, state)
        state = (await _first_round(client, "cluster_config_set", arguments)).request_state
        assert state is not None
        altered = await _retry(
            client, "cluster_config_set", arguments, state[:-2] + ("AA" if state[-2:] != "AA" else "BB")
        )
        forged = await _retry(client, "cluster_config_set", arguments, None)
        no_answer = await _retry(
            client,
            "cluster_config_set",
            arguments,
            (await _first_round(client, "cluster_config_set", arguments)).request_state,
            {},
        )

    for result in (other_args, other_tool, altered, forged):
        assert result.is_error is True
        assert "could not be verified" in _text(result)
    assert no_answer.is_error is True
    assert "no answer" in _text(no_answer)
    assert _calls(tmp_path) == ""


async def test_an_elicitation_that_fails_is_a_denial(tmp_path: Path) -> None:
    async def broken(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ErrorData:
        return types.ErrorData(code=types.INTERNAL_ERROR, message="the approval window crashed")

    server = build_server(_tools(tmp_path), log=lambda _line: None)

    async with Client(server, mode="legacy", elicitation_callback=broken) as client:
        result = await client.call_tool("cluster_node_drain", {"node": "n1", "reason": "upgrade"})

    assert result.is_error is True
    assert _text(result).startswith('Not approved: requesting approval to run "')
    assert "the approval window crashed" in _text(result)
    assert _calls(tmp_path) == ""


@pytest.mark.parametrize("mode", MODES)
async def test_knowledge_search_is_served_only_when_asked(mode: Literal["auto", "legacy"]) -> None:
    searcher = FakeSearcher(excerpts={"docs/ops.md#1": "drain a node before upgrades"})
    plain = build_server([FakeTool(name="other")])
    served = build_server([FakeTool(name="other"), KnowledgeSearchTool(searcher, max_injected_tokens=100)])

    async with Client(plain, mode=mode) as client:
        assert [entry.name for entry in (await client.list_tools()).tools] == ["other"]
    async with Client(served, mode=mode) as client:
        assert [entry.name for entry in (await client.list_tools()).tools] == ["other", "knowledge_search"]
        first = await client.call_tool("knowledge_search", {"query": "drain"})
        again = await client.call_tool("knowledge_search", {"query": "drain"})

    assert _text(first) == "docs/ops.md#1: drain a node before upgrades"
    # No memory across calls: another client (or this one) gets the same evidence again.
    assert _text(again) == _text(first)
    assert [call[1] for call in searcher.calls] == [100, 100]


def test_a_wrapped_command_named_knowledge_search_cannot_be_shadowed() -> None:
    searcher = FakeSearcher(excerpts={})
    with pytest.raises(ToolSelectionError, match="already has that name"):
        ToolSet(
            (
                ToolEntry(tool=FakeTool(name="knowledge_search"), kind="application"),
                ToolEntry(tool=KnowledgeSearchTool(searcher, max_injected_tokens=100), kind="builtin"),
            )
        )


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_tool_is_a_protocol_error(mode: Literal["auto", "legacy"]) -> None:
    server = build_server([FakeTool(name="other")])

    async with Client(server, mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("nope", {})

    assert raised.value.code == types.INVALID_PARAMS


@pytest.mark.parametrize(
    ("confirm", "elicit", "expected"),
    [
        (ConfirmMode.AUTO, True, "elicitation supported, confirm-tagged tools will request approval"),
        (
            ConfirmMode.AUTO,
            False,
            "elicitation unsupported, confirm-tagged tools run ungated with nobody asked (confirm_over_mcp=auto)",
        ),
        (
            ConfirmMode.ALWAYS,
            False,
            "elicitation unsupported, confirm-tagged tools will be refused (confirm_over_mcp=always)",
        ),
        (ConfirmMode.NEVER, True, "confirm-tagged tools run ungated (confirm_over_mcp=never)"),
    ],
)
async def test_a_connecting_client_is_logged_with_how_it_will_be_asked(
    confirm: ConfirmMode, elicit: bool, expected: str
) -> None:
    log: list[str] = []
    server = build_server([FakeTool(name="other")], ServerOptions(confirm_mode=confirm), log=log.append)
    callback, _ = _answer("accept", {"approve": True})

    async with Client(
        server,
        mode="legacy",
        elicitation_callback=callback if elicit else None,
        client_info=types.Implementation(name="probe", version="1"),
    ):
        pass

    assert log == [f'Client "probe" connected: {expected}']


@pytest.mark.parametrize("mode", MODES)
async def test_the_operator_approves_on_the_host_and_the_client_is_never_asked(
    tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    """Steps: 1. once: runs; 2. no: refused; 3. always: runs; 4. same tool again: runs unasked (session)."""
    log: list[str] = []
    prompter = ScriptedPrompter.of(ConfirmChoice.ONCE, ConfirmChoice.NO, ConfirmChoice.ALWAYS)
    server = build_server(
        _tools(tmp_path), ServerOptions(confirm_tags=["impact:rw"]), approver=prompter, log=log.append
    )
    callback, asked = _answer("accept", {"approve": True})

    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        once = await client.call_tool("cluster_config_set", {"key": "k1", "value": "v"})
        refused = await client.call_tool("cluster_config_set", {"key": "k2", "value": "v"})
        always = await client.call_tool("cluster_node_drain", {"node": "n1", "reason": "r"})
        again = await client.call_tool("cluster_node_drain", {"node": "n2", "reason": "r"})

    assert asked == []
    assert [once.is_error, refused.is_error, always.is_error, again.is_error] == [False, True, False, False]
    assert "was put to the server operator and the operator declined" in _text(refused)
    ran = _calls(tmp_path)
    assert "[k1]" in ran and "[k2]" not in ran and "[n1]" in ran and "[n2]" in ran
    requests = [request for request in prompter.asked if isinstance(request, GateRequest)]
    assert [request.command for request in requests] == [
        "cluster_config_set",
        "cluster_config_set",
        "cluster_node_drain",
    ]
    assert requests[0].display == f"{tmp_path / 'fakeapp'} cluster config set -- k1 v"
    assert requests[0].tag == "ai:confirm"
    assert sum("via operator" in line for line in log) == 4


async def test_an_operator_who_cannot_be_asked_denies() -> None:
    tool = FakeTool(name="wipe", tags=["ai:confirm"])
    server = build_server([tool], approver=ScriptedPrompter.of(interactive=False), log=lambda _line: None)

    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("wipe", {"all": True})

    assert result.is_error is True
    assert "no interactive terminal" in _text(result)
    assert tool.calls == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_that_cannot_run_fails_before_anyone_is_asked(
    tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    server = build_server(_tools(tmp_path), log=lambda _line: None)
    callback, asked = _answer("accept", {"approve": True})

    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        missing = await client.call_tool("cluster_node_drain", {"node": "n1"})

    assert missing.is_error is True
    assert _text(missing).startswith('tool "cluster_node_drain" was called without required parameter(s): reason')
    assert asked == []
    assert _calls(tmp_path) == ""


async def test_the_approval_shows_the_exact_argv_quoted(tmp_path: Path) -> None:
    server = build_server(_tools(tmp_path), log=lambda _line: None)
    callback, asked = _answer("decline")

    async with Client(server, mode="legacy", elicitation_callback=callback) as client:
        await client.call_tool("cluster_config_set", {"key": "--force", "value": "a b\nc"})

    assert f"Command: {tmp_path / 'fakeapp'} cluster config set -- --force $'a b\\nc'\n" in asked[0]


class _Broken(FakeTool):
    @override
    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        raise RuntimeError("the seam broke")


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_that_raises_is_an_in_band_error_and_the_server_keeps_serving(
    mode: Literal["auto", "legacy"],
) -> None:
    server = build_server([_Broken(name="broken"), FakeTool(name="fine")], log=lambda _line: None)

    async with Client(server, mode=mode) as client:
        broken = await client.call_tool("broken", {})
        fine = await client.call_tool("fine", {})

    assert broken.is_error is True
    assert _text(broken) == 'tool "broken" failed: RuntimeError: the seam broke. The command may not have run.'
    assert fine.is_error is False


@contextlib.asynccontextmanager
async def _over_http(server: Server[Any]) -> AsyncGenerator[str]:
    """`server` on streamable HTTP on a free loopback port (real uvicorn, in this event loop); its URL."""
    ready: list[str] = []
    started = anyio.Event()

    def on_ready(url: str) -> None:
        ready.append(url)
        started.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: serve_async(server, port=0, on_ready=on_ready))
        with anyio.fail_after(10):
            await started.wait()
        yield ready[0]
        tasks.cancel_scope.cancel()


@pytest.mark.parametrize("mode", MODES)
async def test_over_http_twenty_parallel_calls_never_run_more_than_two(mode: Literal["auto", "legacy"]) -> None:
    tool = _Parked()
    server = build_server([tool], log=lambda _line: None)
    arrivals = _Arrivals(tool.progress)
    server.middleware.append(arrivals)
    results: list[types.CallToolResult] = []

    async with _over_http(server) as url, Client(url, mode=mode) as client:

        async def one(index: int) -> None:
            results.append(await client.call_tool("parked", {"i": index}))

        async with anyio.create_task_group() as tasks:
            for index in range(20):
                tasks.start_soon(one, index)
            await tool.progress.until(lambda: arrivals.count == 20 and tool.started == 2)
            assert tool.running == 2
            tool.release.set()

    assert tool.peak == 2
    assert len(results) == 20
    assert all(result.is_error is False for result in results)


@pytest.mark.parametrize("mode", MODES)
async def test_over_http_the_endpoint_is_also_at_slash_mcp(mode: Literal["auto", "legacy"]) -> None:
    """Clients that assume the SDKs' default path reach the same server; other paths are still 404."""
    tool = FakeTool(name="fine")
    server = build_server([tool], log=lambda _line: None)

    async with _over_http(server) as url:
        async with Client(f"{url}/mcp", mode=mode) as client:
            listed = [entry.name for entry in (await client.list_tools()).tools]
            result = await client.call_tool("fine", {"n": 1})
        async with httpx.AsyncClient(timeout=10) as raw:
            elsewhere = await raw.post(f"{url}/other", json={})

    assert listed == ["fine"]
    assert result.is_error is False
    assert elsewhere.status_code == 404


@pytest.mark.parametrize("mode", MODES)
async def test_over_http_a_call_that_outlives_the_timeout_is_stopped(mode: Literal["auto", "legacy"]) -> None:
    tool = _Parked()
    server = build_server([tool], ServerOptions(tool_timeout=0.05), log=lambda _line: None)

    async with _over_http(server) as url, Client(url, mode=mode) as client:
        result = await client.call_tool("parked", {})

    assert result.is_error is True
    assert "did not finish within 0.05s" in _text(result)


async def test_a_timed_out_command_is_killed_with_its_process_group(tmp_path: Path) -> None:
    """The real process behind a call is gone once the timeout result comes back, grandchildren included."""
    app = tmp_path / "slowapp"
    pids = tmp_path / "pids"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--fisk-introspect" ]; then exec cat {EXAMPLE / "fixturectl.introspect.json"}; fi\n'
        f"sleep 60 & echo $! >> {pids}\necho $$ >> {pids}\nwait\n",
        encoding="utf-8",
    )
    app.chmod(0o755)
    server = build_server(
        command_tools(load_application(str(app))), ServerOptions(tool_timeout=0.5), log=lambda _line: None
    )

    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("cluster_node_list", {})

    assert result.is_error is True
    assert "did not finish within 0.5s" in _text(result)
    started = [int(pid) for pid in pids.read_text(encoding="utf-8").split()]
    assert len(started) == 2

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        # A zombie has exited; only its parent's wait is missing.
        stat = Path(f"/proc/{pid}/stat")
        return not (stat.exists() and stat.read_text(encoding="utf-8").split()[2] == "Z")

    def survivors() -> list[int]:
        # SIGKILL lands asynchronously: poll under a deadline rather than asserting the very instant.
        deadline = time.monotonic() + 10
        while (left := [pid for pid in started if alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.01)
        return left

    assert await anyio.to_thread.run_sync(survivors) == []


async def test_client_supplied_text_cannot_drive_the_operators_terminal() -> None:
    log: list[str] = []
    server = build_server([FakeTool(name="other")], log=log.append)

    async with Client(server, mode="legacy", client_info=types.Implementation(name="evil\x1b[2J\nname", version="1")):
        pass

    assert log == [
        'Client "evil\\nname" connected: elicitation unsupported, confirm-tagged tools will be refused '
        "(confirm_over_mcp=always)"
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_a_queued_call_whose_client_gives_up_never_starts(mode: Literal["auto", "legacy"]) -> None:
    """Steps (issue 36: abandoned calls still started):
    1. One slot: A runs (parked), B arrives and waits for the slot.
    2. B's caller gives up (its task is cancelled: the client sends notifications/cancelled, or ends the stream).
    3. A is released and C is called: the slot is first-come, so a B still queued would run before C.
    4. Only A and C ever started.
    """
    tool = _Parked()
    logged: list[str] = []

    def log(line: str) -> None:
        logged.append(line)
        tool.progress.bump()

    server = build_server([tool], ServerOptions(max_concurrent=1), log=log)
    arrivals = _Arrivals(tool.progress)
    server.middleware.append(arrivals)

    async with _over_http(server) as url, Client(url, mode=mode) as client:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(client.call_tool, "parked", {"i": "a"})
            await tool.progress.until(lambda: tool.started == 1)
            abandoned = anyio.CancelScope()

            async def b() -> None:
                with abandoned:
                    await client.call_tool("parked", {"i": "b"})

            tasks.start_soon(b)
            await tool.progress.until(lambda: arrivals.count == 2)
            abandoned.cancel()
            # The client's notifications/cancelled (2025-11-25) or the end of its stream (2026-07-28) arrives.
            await tool.progress.until(lambda: any(line.startswith("Withdrawn parked") for line in logged))
            tool.release.set()
        after = await client.call_tool("parked", {"i": "c"})

    assert after.is_error is False
    assert tool.started == 2
    assert _text(after) == 'done {"i":"c"}'
    assert [line for line in logged if line.startswith(("Queued", "Running", "Withdrawn"))] == [
        "Running parked",
        "Queued parked: 1 calls running",
        "Withdrawn parked: the client gave up before it started",
        "Running parked",
    ]


async def test_a_call_past_the_bounded_queue_is_refused_at_once() -> None:
    """One slot and room for 16 waiting: the 18th call is told the server is busy, without waiting."""
    tool = _Parked()
    server = build_server([tool], ServerOptions(max_concurrent=1), log=lambda _line: None)
    arrivals = _Arrivals(tool.progress)
    server.middleware.append(arrivals)
    results: list[types.CallToolResult] = []
    refusals: list[types.CallToolResult] = []

    async with Client(server, mode="legacy") as client:

        async def one(index: int) -> None:
            results.append(await client.call_tool("parked", {"i": index}))

        async with anyio.create_task_group() as tasks:
            for index in range(17):
                tasks.start_soon(one, index)
            await tool.progress.until(lambda: arrivals.count == 17 and tool.started == 1)
            refusals.append(await client.call_tool("parked", {"i": 17}))
            tool.release.set()

    (refused,) = refusals
    assert refused.is_error is True
    assert "is busy: 1 calls running and 16 calls are already waiting; retry later" in _text(refused)
    assert tool.started == 17 and all(result.is_error is False for result in results)
