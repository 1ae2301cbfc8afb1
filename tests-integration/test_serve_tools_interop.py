"""The 0.0.5 tool endpoint and the client that speaks both tool protocols, on a real nats-server.

Peers written by hand from the reference: a 0.0.5 caller (ack, keepalives, reply on its own inbox), a
pre-0.0.5 caller (a plain request taking the first message), a pre-0.0.5 server (one `tool.reply`) and a
0.0.5 server (ack, keepalive, reply; capacity refusal).
"""

import json
import signal
import subprocess
import sys
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from fiskai_a2a import A2AClient, AgentUnavailableError, NatsContext, Server
from fiskai_a2a.nats_service import NatsStreams, ServiceHost
from fiskai_a2a.nats_transport import NatsTransport, connect, flush_in_order
from fiskai_a2a.tool_endpoint import ToolEndpoint, default_max_concurrent
from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import command_tools

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

_ROOT = Path(__file__).resolve().parents[1]
_MODEL = _ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"
_AGENT = "fixturectl"
_NS = "io.choria.fisk-ai.v1"


def _tools(folder: Path) -> list[Any]:
    """fixturectl's real command model; a call prints its argv, `fail` exits with its code, `slow` sleeps 2 s."""
    app = folder / "fixturectl"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        'for arg in "$@"; do printf "[%s]\\n" "$arg"; done\n'
        'for arg in "$@"; do if [ "$arg" = "slow" ]; then exec sleep 2; fi; done\n'
        'if [ "$1" = "fail" ]; then for arg in "$@"; do case "$arg" in [0-9]*) exit "$arg";; esac; done; fi\n',
        encoding="utf-8",
    )
    app.chmod(0o755)
    return list(command_tools(load_application(str(app))))


@asynccontextmanager
async def endpoint(url: str, folder: Path, *, max_concurrent: int = 2) -> AsyncGenerator[ToolEndpoint]:
    """Our 0.0.5 tool endpoint serving fixturectl, with a 50 ms keepalive so a test sees several."""
    async with connect(NatsContext.from_url(url)) as transport:
        server = Server(identity=_AGENT, version="0.0.5", tools=_tools(folder), tool_timeout=15)
        tools = ToolEndpoint(server, max_concurrent=max_concurrent, keepalive=0.05)
        host = ServiceHost(transport, _AGENT)
        tools.add_to(host)
        async with anyio.create_task_group() as tasks:
            await tasks.start(host.serve)
            yield tools
            host.stop_intake()


@asynccontextmanager
async def raw(url: str) -> AsyncGenerator[NatsClient]:
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    try:
        yield nc
    finally:
        await nc.close()


async def _until(condition: Callable[[], bool]) -> None:
    """Poll `condition`; the caller's `fail_after` is the deadline."""
    while not condition():  # noqa: ASYNC110 - a counter owned by the server, nothing to wait on
        await anyio.sleep(0.01)


def _request(name: str, arguments: dict[str, Any], request: str = "req1") -> bytes:
    return json.dumps(
        {
            "protocol": f"{_NS}.tool.request",
            "id": request,
            "request": request,
            "conversation": request,
            "sequence": 0,
            "time": "2026-08-16T11:00:00Z",
            "sender": {"name": "peer1"},
            "name": name,
            "input": arguments,
        }
    ).encode()


async def _reply_set(nc: NatsClient, payload: bytes) -> list[dict[str, Any]]:
    """A 0.0.5 caller: its own inbox, every message until the tool.reply."""
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)  # pyright: ignore[reportUnknownMemberType]
    await nc.publish(f"choria.fisk-ai.tool.{_AGENT}", payload, reply=inbox)
    messages: list[dict[str, Any]] = []
    while not messages or messages[-1]["protocol"] != f"{_NS}.tool.reply":
        msg = await sub.next_msg(timeout=10)
        messages.append(json.loads(msg.data))
    await sub.unsubscribe()
    return messages


async def test_a_0_0_5_caller_gets_an_ack_keepalives_then_the_reply(nats_server: str, tmp_path: Path) -> None:
    async with endpoint(nats_server, tmp_path), raw(nats_server) as nc:
        with anyio.fail_after(10):
            messages = await _reply_set(nc, _request("cluster_config_get", {"key": "slow"}))
    ack, *beats, reply = messages
    assert (ack["protocol"], ack["accepted"], ack["sequence"], ack["request"]) == (f"{_NS}.ack", True, 1, "req1")
    assert beats and all(b["protocol"] == f"{_NS}.event.status" and b["request"] == "req1" for b in beats)
    assert [b["sequence"] for b in beats] == list(range(2, 2 + len(beats)))
    assert reply["request"] == "req1" and "code" not in reply and "[slow]" in reply["output"]
    assert reply["exec"]["command"].startswith("cluster config get")


async def test_a_call_over_capacity_is_refused_at_once_with_code_capacity(nats_server: str, tmp_path: Path) -> None:
    async with endpoint(nats_server, tmp_path, max_concurrent=1) as tools, raw(nats_server) as nc:
        slow: list[list[dict[str, Any]]] = []
        refused: list[dict[str, Any]] = []
        async with anyio.create_task_group() as tasks:

            async def first() -> None:
                slow.append(await _reply_set(nc, _request("cluster_config_get", {"key": "slow"}, "busy1")))

            tasks.start_soon(first)
            with anyio.fail_after(5):
                await _until(lambda: tools.running == 1)
                with anyio.fail_after(1):  # answered at once, while the first call still runs
                    refused = await _reply_set(nc, _request("fail", {"code": 1}, "busy2"))
                assert tools.running == 1
    ack, reply = refused
    assert ack["accepted"] is False and "busy" in ack["reason"]
    assert (reply["is_error"], reply["code"]) == (True, "capacity")
    assert slow[0][-1]["protocol"] == f"{_NS}.tool.reply" and "code" not in slow[0][-1]


async def test_a_pre_0_0_5_caller_takes_the_ack_as_its_answer(nats_server: str, tmp_path: Path) -> None:
    """Old caller -> new server is incompatible (reference 4.5): the single reply a plain request sees is the ack."""
    async with endpoint(nats_server, tmp_path), raw(nats_server) as nc:
        msg = await nc.request(f"choria.fisk-ai.tool.{_AGENT}", _request("fail", {"code": 3}), timeout=10)
    assert json.loads(msg.data)["protocol"] == f"{_NS}.ack"


async def test_a_malformed_request_is_refused_before_any_ack(nats_server: str, tmp_path: Path) -> None:
    async with endpoint(nats_server, tmp_path), raw(nats_server) as nc:
        msg = await nc.request(f"choria.fisk-ai.tool.{_AGENT}", b'{"protocol": 1}', timeout=10)
    headers = msg.headers or {}
    assert headers["Nats-Service-Error-Code"] == "400"
    assert headers["Nats-Service-Error"].startswith("the request is not a valid v1 message")


async def test_our_client_calls_our_endpoint(nats_server: str, tmp_path: Path) -> None:
    async with endpoint(nats_server, tmp_path), connect(NatsContext.from_url(nats_server)) as transport:
        client = _client(transport)
        with anyio.fail_after(10):
            slow = await client.call_tool(_AGENT, "cluster_config_get", {"key": "slow"})
            listed = await client.call_tool(_AGENT, "cluster_node_list", {"limit": 3})
            failed = await client.call_tool(_AGENT, "fail", {"code": 4})
    assert "[--limit=3]" in (listed.output or "") and listed.is_error is None
    assert "[slow]" in (slow.output or "")
    assert failed.exec is not None and failed.exec.exit_code == 4


def _client(transport: NatsTransport, **options: Any) -> A2AClient:
    return A2AClient(transport, identity="caller", timeout=10, streams=NatsStreams(transport), **options)


def _answer(request: dict[str, Any], protocol: str, sequence: int, **body: Any) -> bytes:
    header = {key: request[key] for key in ("request", "conversation")}
    return json.dumps(
        {
            "protocol": f"{_NS}.{protocol}",
            "id": f"{request['id']}-{sequence}",
            **header,
            "sequence": sequence,
            "time": "2026-08-16T11:00:01Z",
            "sender": {"name": _AGENT},
            "recipient": request["sender"],
            **body,
        }
    ).encode()


@asynccontextmanager
async def hand_written_server(url: str, answer: Any) -> AsyncGenerator[None]:
    """A peer serving `choria.fisk-ai.tool.<agent>` as `answer(nc, msg, request)` decides."""
    async with raw(url) as nc:

        async def on_request(msg: Msg) -> None:
            await answer(nc, msg, json.loads(msg.data))

        sub = await nc.subscribe(f"choria.fisk-ai.tool.{_AGENT}", queue=_AGENT, cb=on_request)  # pyright: ignore[reportUnknownMemberType]
        await flush_in_order(nc)
        try:
            yield
        finally:
            await sub.unsubscribe()


async def test_our_client_takes_a_pre_0_0_5_server_s_single_reply(nats_server: str) -> None:
    async def old(nc: NatsClient, msg: Msg, request: dict[str, Any]) -> None:
        await anyio.sleep(0.3)  # no ack, no keepalive: silence until the one reply
        exec_result = {"command": "fail 6", "exit_code": 6}
        await msg.respond(_answer(request, "tool.reply", 0, output="failed", exec=exec_result))

    async with hand_written_server(nats_server, old), connect(NatsContext.from_url(nats_server)) as transport:
        with anyio.fail_after(10):
            reply = await _client(transport).call_tool(_AGENT, "fail", {"code": 6})
    assert reply.exec is not None and (reply.exec.exit_code, reply.output) == (6, "failed")


async def test_our_client_waits_through_a_0_0_5_server_s_keepalives(nats_server: str) -> None:
    async def new(nc: NatsClient, msg: Msg, request: dict[str, Any]) -> None:
        await msg.respond(_answer(request, "ack", 1, accepted=True))
        for sequence in (2, 3, 4):  # each gap is under the caller's 0.5 s silence window, the whole is not
            await anyio.sleep(0.3)
            await nc.publish(msg.reply, _answer(request, "event.status", sequence, block={"phase": "running"}))
        await nc.publish(msg.reply, _answer(request, "tool.reply", 5, output="done", unknown_field="dropped"))

    async with hand_written_server(nats_server, new), connect(NatsContext.from_url(nats_server)) as transport:
        with anyio.fail_after(10):
            reply = await _client(transport, request_timeout=0.5).call_tool(_AGENT, "anything", {})
    assert (reply.output, reply.is_error) == ("done", None)


async def test_our_client_reports_a_0_0_5_capacity_refusal_as_an_error_reply(nats_server: str) -> None:
    async def full(nc: NatsClient, msg: Msg, request: dict[str, Any]) -> None:
        await msg.respond(_answer(request, "ack", 1, accepted=False, reason="busy"))
        await nc.publish(msg.reply, _answer(request, "tool.reply", 2, is_error=True, output="busy", code="capacity"))

    async with hand_written_server(nats_server, full), connect(NatsContext.from_url(nats_server)) as transport:
        with anyio.fail_after(10):
            reply = await _client(transport).call_tool(_AGENT, "anything", {})
    assert (reply.is_error, reply.output) == (True, "busy (code capacity)")


async def test_our_client_gives_up_on_a_0_0_5_server_silent_after_its_ack(nats_server: str) -> None:
    async def silent(nc: NatsClient, msg: Msg, request: dict[str, Any]) -> None:
        await msg.respond(_answer(request, "ack", 1, accepted=True))

    async with hand_written_server(nats_server, silent), connect(NatsContext.from_url(nats_server)) as transport:
        with anyio.fail_after(10), pytest.raises(AgentUnavailableError) as caught:
            await _client(transport, request_timeout=0.3).call_tool(_AGENT, "anything", {})
    assert "nothing on" in str(caught.value) and "for 0.3s" in str(caught.value)


def test_the_default_concurrency_is_the_cpu_quota_clamped_to_two_to_eight(tmp_path: Path) -> None:
    quota = tmp_path / "cpu.max"
    quota.write_text("100000 100000\n", encoding="utf-8")
    assert default_max_concurrent(quota) == 2
    quota.write_text("max 100000\n", encoding="utf-8")
    assert 2 <= default_max_concurrent(quota) <= 8


@contextmanager
def alias_process(config: Path, url: str) -> Generator[tuple[list[str], list[int]]]:
    """`fiskai a2a` as a process: yields its start-up lines (to `Serving ...`) and, after, its exit code."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "a2a", "--server", url],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[str] = []
    codes: list[int] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("Serving "):
                break
        yield seen, codes
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            codes.append(proc.wait(timeout=20))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _old_client_answer(data: bytes) -> str:
    """What a pre-0.0.5 caller does with the one reply it reads: anything but a `tool.reply` fails the call."""
    reply = json.loads(data)
    if reply.get("protocol") != f"{_NS}.tool.reply":
        return f"call failed: unexpected reply protocol {reply.get('protocol')}"
    return str(reply.get("output", ""))


async def test_a_pre_0_0_5_caller_against_the_fiskai_a2a_alias_fails_its_call_while_the_command_runs(
    nats_server: str, tmp_path: Path
) -> None:
    """Reference 4.5 (inferred, kept): the alias serves the 0.0.5 protocol, so an old caller reads the ack as
    its answer and fails the call; the command still runs (the rest of the reply set goes nowhere), and the
    endpoint keeps serving the next caller."""
    _tools(tmp_path)  # writes the fixturectl script
    marker = tmp_path / "ran"
    script = tmp_path / "fixturectl"
    body = script.read_text(encoding="utf-8")
    script.write_text(body + f'echo "$@" >> "{marker}"\n', encoding="utf-8")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"identity: {_AGENT}\napplication_path: {script}\nexpose: {{agent: {{a2a: {{serve_tools: true}}}}}}\n",
        encoding="utf-8",
    )
    with alias_process(config, nats_server) as (seen, codes):
        assert any("notice: fiskai a2a is now an alias of `fiskai serve`" in line for line in seen), seen
        async with raw(nats_server) as nc, connect(NatsContext.from_url(nats_server)) as transport:
            with anyio.fail_after(15):
                msg = await nc.request(
                    f"choria.fisk-ai.tool.{_AGENT}", _request("cluster_node_list", {"limit": 7}), timeout=10
                )
                assert _old_client_answer(msg.data) == f"call failed: unexpected reply protocol {_NS}.ack"
                await _until(lambda: marker.exists() and "--limit=7" in marker.read_text(encoding="utf-8"))
                after = await _client(transport).call_tool(_AGENT, "cluster_node_list", {"limit": 8})
        assert "[--limit=8]" in (after.output or "")
    assert codes == [0]
