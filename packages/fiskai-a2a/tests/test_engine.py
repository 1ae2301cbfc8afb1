import hashlib
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import pytest
from pydantic import JsonValue
from typing_extensions import override

from fiskai_a2a import A2AClient, A2AError, AgentUnavailableError, RemoteAgentError, Server
from fiskai_a2a.client import _expect
from fiskai_a2a.invoker import A2ARemoteInvoker
from fiskai_a2a.protocol import (
    CANCEL,
    MAX_MESSAGE_BYTES,
    TOOL_REQUEST,
    Cancel,
    ErrorMessage,
    Event,
    Identity,
    StatusBlock,
    ToolReply,
    ToolRequest,
    decode,
    encode,
    reply_header,
    request_header,
)
from fiskai_a2a.testing import FakeTransport
from fiskai_a2a.transport import EventSink, Handler, Reply, Route, RouteKind, Transport
from fiskai_core.calls import ToolCall, prepare_call, run_call
from fiskai_core.remote import RemoteCallError, RemoteDescriptor, RemoteInvoker, RemoteTool
from fiskai_core.testing import FakeTool
from fiskai_core.tools import CallContext, CallPlan, ToolArguments, ToolResult, loads_exact, parse_arguments

pytestmark = pytest.mark.anyio


@dataclass(kw_only=True)
class GateTool:
    """A tool that runs until released, so tests control how long a call is in flight."""

    name: str = "slow"
    tags: tuple[str, ...] = ()
    description: str = "Waits until released."
    input_schema: dict[str, JsonValue] = field(default_factory=lambda: {"type": "object"})
    release: anyio.Event = field(default_factory=anyio.Event)
    started: int = 0
    running: int = 0
    peak: int = 0
    cancelled: int = 0
    entered: anyio.Event = field(default_factory=anyio.Event)

    def plan(self, arguments: ToolArguments) -> CallPlan:
        return CallPlan(arguments=arguments, display=self.name)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        self.started += 1
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.entered.set()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        finally:
            self.running -= 1
        return ToolResult(output="done", command="slow", exit_code=0)


def _command(output: str, exit_code: int, truncated: bool = False) -> ToolResult:
    return ToolResult(output=output, command="cluster node list", exit_code=exit_code, truncated=truncated)


class serving:
    """Serve `server` on a FakeTransport for the block; yields a client of it."""

    def __init__(self, server: Server, transport: FakeTransport | None = None) -> None:
        self.server = server
        self.transport = transport or FakeTransport()
        self.tasks = anyio.create_task_group()

    async def __aenter__(self) -> A2AClient:
        await self.tasks.__aenter__()
        serve = partial(self.transport.serve, identity=self.server.identity, version="1", handler=self.server)
        await self.tasks.start(serve)
        return A2AClient(self.transport, identity="caller", timeout=5, stall_timeout=5, cancel_timeout=0.2)

    async def __aexit__(self, *exc_info: Any) -> None:
        self.tasks.cancel_scope.cancel()
        await self.tasks.__aexit__(*exc_info)


def test_fake_transport_satisfies_transport() -> None:
    transport: Transport = FakeTransport()
    assert transport is not None


async def test_discovery_lists_served_tools_and_never_confirm_gated_ones() -> None:
    tools = [
        FakeTool(name="cluster_node_list", description="List nodes.\n\nTags: impact:ro", tags=("impact:ro",)),
        FakeTool(name="cluster_node_drain", description="Drain.", tags=("ai:confirm",)),
        FakeTool(name="cluster_config_set", description="Set.", tags=("impact:rw",)),
        FakeTool(name="undescribed", description=""),
        FakeTool(name="bad name", description="Spaces are not allowed."),
    ]
    server = Server(identity="fixturectl", version="1.2.3", tools=tools, confirm_tags=["impact:rw"])
    assert {s.name for s in server.skipped} == {"cluster_node_drain", "cluster_config_set", "undescribed", "bad name"}
    async with serving(server) as client:
        card = await client.discover("fixturectl")
    assert card.name == "fixturectl" and card.version == "1.2.3"
    assert card.protocols == ["io.choria.fisk-ai.v1"]
    assert [t.name for t in card.tools or []] == ["cluster_node_list"]
    assert card.header.sender.name == "fixturectl" and card.header.recipient == Identity(name="caller")


def test_nothing_to_serve_is_an_error() -> None:
    with pytest.raises(A2AError, match="confirmation-gated"):
        Server(identity="x", version="1", tools=[FakeTool(name="a", description="A", tags=("ai:confirm",))])
    with pytest.raises(A2AError, match="after filtering"):
        Server(identity="x", version="1", tools=[])


async def test_non_zero_exit_is_a_successful_reply_with_its_exit_code() -> None:
    tool = FakeTool(name="fail", description="Fails.", result=_command("boom\n", 3, truncated=True))
    async with serving(Server(identity="app", version="1", tools=[tool])) as client:
        reply = await client.call_tool("app", "fail", {"code": 3})
    assert reply.is_error is None
    assert reply.output == "boom\n"
    assert reply.exec is not None and reply.exec.exit_code == 3 and reply.exec.truncated is True
    assert reply.exec.command == "cluster node list"
    assert tool.calls == ['{"code":3}']


async def test_zero_exit_is_omitted_as_go_does() -> None:
    tool = FakeTool(name="ok", description="Works.", result=_command("fine", 0))
    async with serving(Server(identity="app", version="1", tools=[tool])) as client:
        reply = await client.call_tool("app", "ok")
    assert reply.exec is not None and reply.exec.exit_code is None and reply.exec.truncated is None
    assert tool.calls == ["{}"]


async def test_failures_are_in_band_errors() -> None:
    class Exploding(FakeTool):
        @override
        async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
            raise RuntimeError("tool bug")

    tools = [
        FakeTool(name="harness", description="H.", result=ToolResult(output="cannot start", is_error=True)),
        Exploding(name="explode", description="E."),
    ]
    async with serving(Server(identity="app", version="1", tools=tools)) as client:
        harness = await client.call_tool("app", "harness")
        explode = await client.call_tool("app", "explode")
        missing = await client.call_tool("app", "nope")
    assert harness.is_error and harness.output == "cannot start"
    assert explode.is_error
    assert explode.output == 'tool "explode" failed: RuntimeError: tool bug. The command may not have run.'
    assert missing.is_error and missing.output == 'tool "nope" is not available'


async def test_a_call_past_its_timeout_is_stopped_and_answered() -> None:
    tool = GateTool()
    async with serving(Server(identity="app", version="1", tools=[tool], tool_timeout=0.2)) as client:
        with anyio.fail_after(5):
            reply = await client.call_tool("app", "slow")
    assert reply.is_error and "did not finish within 0.2s and was stopped" in (reply.output or "")
    assert tool.cancelled == 1


async def test_cap_holds_and_a_call_that_finds_no_slot_in_time_is_busy() -> None:
    tool = GateTool()
    server = Server(identity="app", version="1", tools=[tool], max_concurrent=2, queue_timeout=0.2)
    results: list[str] = []
    busy = None
    async with serving(server) as client:
        async with anyio.create_task_group() as tasks:

            async def call() -> None:
                reply = await client.call_tool("app", "slow")
                results.append("busy" if reply.is_error and "busy" in (reply.output or "") else reply.output or "")

            for _ in range(2):
                tasks.start_soon(call)
            with anyio.fail_after(5):
                while tool.running < 2:
                    await anyio.wait_all_tasks_blocked()
            with anyio.fail_after(5):
                busy = await client.call_tool("app", "slow")
            tool.release.set()
    assert busy is not None and busy.is_error and "is busy" in (busy.output or "")
    assert results == ["done", "done"]
    assert tool.peak == 2


async def test_waiting_calls_run_when_a_slot_frees() -> None:
    tool = GateTool()
    server = Server(identity="app", version="1", tools=[tool], max_concurrent=1)
    replies: list[str] = []
    async with serving(server) as client:
        async with anyio.create_task_group() as tasks:

            async def call() -> None:
                replies.append((await client.call_tool("app", "slow")).output or "")

            for _ in range(3):
                tasks.start_soon(call)
            with anyio.fail_after(5):
                while server.in_flight < 3:
                    await anyio.wait_all_tasks_blocked()
            tool.release.set()
    assert replies == ["done"] * 3 and tool.peak == 1


async def test_waiting_room_overflow_is_answered_busy_at_once() -> None:
    tool = GateTool()
    server = Server(identity="app", version="1", tools=[tool], max_concurrent=1, max_waiting=0)
    busy = None
    async with serving(server) as client:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(client.call_tool, "app", "slow")
            with anyio.fail_after(5):
                await tool.entered.wait()
            busy = await client.call_tool("app", "slow")
            tool.release.set()
    assert busy is not None and busy.is_error and "is busy" in (busy.output or "")


async def test_only_the_requester_s_key_cancels_a_call() -> None:
    tool = GateTool()
    server = Server(identity="app", version="1", tools=[tool])
    transport = FakeTransport()
    replies: list[Reply] = []
    async with serving(server, transport) as client:
        header = request_header(TOOL_REQUEST, sender=client.me, recipient="app")
        payload = encode(ToolRequest(header=header, name="slow"))
        async with anyio.create_task_group() as tasks:

            async def call() -> None:
                tool_route = Route(agent="app", kind="tool")
                replies.append(await transport.round_trip(tool_route, payload, timeout=5, cancel_key="the-key"))

            tasks.start_soon(call)
            with anyio.fail_after(5):
                await tool.entered.wait()
            # A stranger that copies the declared sender name and the request id, with no key, a guessed
            # one, or the digest a request carries on the wire, gets no answer and stops nothing.
            forged = request_header(CANCEL, sender=Identity(name="caller"), recipient="app")
            forged = forged.model_copy(update={"request": header.request})
            seen_on_the_wire = hashlib.sha256(b"the-key").hexdigest()
            for key in ("", "guessed", seen_on_the_wire):
                with pytest.raises(AgentUnavailableError):
                    await transport.round_trip(
                        Route(agent="app", kind="control"), encode(Cancel(header=forged)), timeout=0.2, cancel_key=key
                    )
            stranger = A2AClient(transport, identity="caller", timeout=1, cancel_timeout=0.2)
            assert await stranger.cancel("app", header, reason="not mine") is False
            assert tool.running == 1
            assert await client.cancel("app", header, reason="operator said stop", key="the-key") is True
    reply = decode(replies[0].payload)
    assert tool.cancelled == 1
    assert getattr(reply, "is_error", None) is True
    assert getattr(reply, "output", "") == "tool call canceled by caller (operator said stop)"


async def test_a_caller_that_stops_waiting_cancels_the_remote_call() -> None:
    tool = GateTool()
    server = Server(identity="app", version="1", tools=[tool])
    async with serving(server) as client:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(client.call_tool, "app", "slow")
            with anyio.fail_after(5):
                await tool.entered.wait()
            tasks.cancel_scope.cancel()
        with anyio.fail_after(5):
            while server.in_flight:
                await anyio.wait_all_tasks_blocked()
    assert tool.cancelled == 1


async def test_progress_events_arrive_in_order() -> None:
    tool = GateTool()
    server = Server(identity="app", version="1", tools=[tool], heartbeat=0.05)
    events: list[Event] = []
    async with serving(server) as client:

        def on_progress(event: Event) -> None:
            events.append(event)
            if len(events) >= 3:
                tool.release.set()

        with anyio.fail_after(5):
            reply = await client.call_tool("app", "slow", on_progress=on_progress)
    assert reply.output == "done"
    assert [e.header.sequence for e in events] == list(range(1, len(events) + 1))
    assert all(isinstance(e.block, StatusBlock) for e in events)
    assert isinstance(events[0].block, StatusBlock) and events[0].block.phase == "executing-tool"
    assert {e.header.request for e in events} == {events[0].header.request}


async def test_a_server_that_goes_silent_mid_call_fails_the_call_quickly() -> None:
    transport = FakeTransport()

    async def silent_after_one_event(route: Route, payload: bytes, events: EventSink, digest: str = "") -> Reply | None:
        request = decode(payload)
        header = request_header(Event.PROTOCOL, sender=Identity(name="app")).model_copy(
            update={"request": request.header.request, "sequence": 1}
        )
        await events(encode(Event(header=header, block=StatusBlock(phase="executing-tool"))))
        await anyio.sleep_forever()
        return None

    client = A2AClient(transport, identity="caller", timeout=30, stall_timeout=0.2, cancel_timeout=0.2)
    message = ""
    async with anyio.create_task_group() as tasks:
        await tasks.start(partial(transport.serve, identity="app", version="1", handler=silent_after_one_event))
        with anyio.fail_after(5):
            try:
                await client.call_tool("app", "slow")
            except AgentUnavailableError as err:
                message = str(err)
        tasks.cancel_scope.cancel()
    assert "stopped answering" in message


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"{oops", "not JSON"),
        (b'{"protocol": "io.choria.fisk-ai.v9.tool.request"}', "unsupported protocol version"),
        (b'{"protocol": "com.example.other"}', "unknown protocol"),
        (b" " * (MAX_MESSAGE_BYTES + 1), "exceeds the 786432-byte limit"),
        (b"[" * 100_000, "JSON nested 100000 levels deep"),
    ],
)
@pytest.mark.parametrize("kind", ["tool", "discovery", "control"])
async def test_unusable_messages_get_error_replies_and_serving_goes_on(
    payload: bytes, expected: str, kind: RouteKind
) -> None:
    tool = FakeTool(name="ok", description="Works.", result=_command("fine", 0))
    transport = FakeTransport()
    async with serving(Server(identity="app", version="1", tools=[tool]), transport) as client:
        reply = await transport.round_trip(Route(agent="app", kind=kind), payload, timeout=5)
        assert reply.error_code == "400"
        message = decode(reply.payload)
        assert isinstance(message, ErrorMessage)
        assert expected in message.error and message.code == "400"
        assert (await client.call_tool("app", "ok")).output == "fine"


async def test_a_message_on_the_wrong_route_is_refused() -> None:
    tool = FakeTool(name="ok", description="Works.")
    transport = FakeTransport()
    async with serving(Server(identity="app", version="1", tools=[tool]), transport) as client:
        payload = encode(ToolRequest(header=request_header(TOOL_REQUEST, sender=client.me), name="ok"))
        reply = await transport.round_trip(Route(agent="app", kind="discovery"), payload, timeout=5)
        message = decode(reply.payload)
        assert isinstance(message, ErrorMessage) and "unexpected message protocol" in message.error
        assert message.header.request == decode(payload).header.request
        assert tool.calls == []
        with pytest.raises(RemoteAgentError) as caught:
            _expect(reply, "io.choria.fisk-ai.v1.discovery.reply", "app", "any")
        assert caught.value.code == "400"


async def test_no_server_is_agent_unavailable_and_an_error_result_for_a_remote_tool() -> None:
    client = A2AClient(FakeTransport(), identity="caller", cancel_timeout=0.1)
    with pytest.raises(AgentUnavailableError):
        await client.discover("nobody")
    with pytest.raises(AgentUnavailableError):
        await client.call_tool("nobody", "x")
    with pytest.raises(RemoteCallError):
        await A2ARemoteInvoker(client).invoke_tool("nobody", "x", parse_arguments(None))
    tool = RemoteTool.from_descriptor(
        RemoteDescriptor(name="x", description="X."), name="x", agent="nobody", invoker=A2ARemoteInvoker(client)
    )
    call = prepare_call(tool, "{}")
    assert isinstance(call, ToolCall)
    result = await run_call(call)
    assert result.is_error
    assert result.text == 'calling tool "x" on agent "nobody": remote agent unavailable: no agent "nobody" is serving'


async def test_stopping_answers_calls_in_flight_and_refuses_new_ones() -> None:
    tool = GateTool()
    server = Server(identity="app", version="1", tools=[tool])
    replies: list[str] = []
    refused = None
    async with serving(server) as client:
        async with anyio.create_task_group() as tasks:

            async def call() -> None:
                replies.append((await client.call_tool("app", "slow")).output or "")

            tasks.start_soon(call)
            with anyio.fail_after(5):
                await tool.entered.wait()
                await server.stop_calls('agent "app" is shutting down')
            refused = await client.call_tool("app", "slow")
    assert replies == ['tool call stopped: agent "app" is shutting down']
    assert tool.cancelled == 1 and server.in_flight == 0
    assert refused is not None and refused.is_error and refused.output == 'agent "app" is shutting down'


def test_the_engine_is_a_handler_and_the_invoker_a_remote_invoker() -> None:
    server = Server(identity="app", version="1", tools=[FakeTool(name="ok", description="Works.")])
    handler: Handler = server
    invoker: RemoteInvoker = A2ARemoteInvoker(A2AClient(FakeTransport(), identity="caller"))
    assert handler is server and invoker is not None


async def test_a_reply_for_another_request_is_refused() -> None:
    transport = FakeTransport()

    async def confused(route: Route, payload: bytes, events: EventSink, digest: str = "") -> Reply | None:
        other = request_header(TOOL_REQUEST, sender=Identity(name="someone"))
        reply = ToolReply(header=reply_header(ToolReply.PROTOCOL, other, sender=Identity(name="app")), output="x")
        return Reply(payload=encode(reply))

    client = A2AClient(transport, identity="caller", timeout=5)
    message = ""
    async with anyio.create_task_group() as tasks:
        await tasks.start(partial(transport.serve, identity="app", version="1", handler=confused))
        try:
            await client.call_tool("app", "x")
        except RemoteAgentError as err:
            message = str(err)
        tasks.cancel_scope.cancel()
    assert 'sent a reply for request "' in message


async def test_a_peer_s_numbers_reach_the_tool_as_written() -> None:
    """A2A used to re-serialise the input: `1.50` arrived as `1.5` and `1e2` as `100.0`."""
    tool = FakeTool(name="ok", description="Works.", result=_command("fine", 0))
    header = request_header(TOOL_REQUEST, sender=Identity(name="caller", instance="i1"), recipient="app")
    exact = loads_exact('{"ratio":1.50,"count":1e2,"n":[-0.0]}')
    assert isinstance(exact, dict)
    payload = encode(ToolRequest(header=header, name="ok"), exact_input=exact)
    assert b'"ratio":1.50' in payload
    server = Server(identity="app", version="1", tools=[tool])
    reply = await server(Route(agent="app", kind="tool"), payload, _no_events)
    assert reply is not None and b'"is_error"' not in reply.payload, reply
    assert tool.calls == ['{"ratio":1.50,"count":1e2,"n":[-0.0]}']


async def test_a_remote_call_sends_the_model_s_numbers_as_written() -> None:
    tool = FakeTool(name="ok", description="Works.", result=_command("fine", 0))
    async with serving(Server(identity="app", version="1", tools=[tool])) as client:
        await A2ARemoteInvoker(client).invoke_tool("app", "ok", parse_arguments('{"ratio": 1.50, "count": 1e2}'))
    assert tool.calls == ['{"ratio":1.50,"count":1e2}']


async def _no_events(_payload: bytes) -> None:
    return None
