"""Every driver decodes a call's arguments once and hands the command its numbers as written.

A client that sends `{"float": 1.50, "int": 1e2}` means `--float=1.50 --int=1e2` (fisk's ArgsFromJSON keeps
a JSON number's text, as Go's json.Number does); Python's decoders make that `1.5` and `100.0`. Each test
drives one face with the real transport (the CLI for `tools call`, the real MCP wire over HTTP and stdio,
a real nats-server for A2A) against the example's real fixturectl model, whose stand-in binary prints the
argv it was given. `DecodeCounter` counts the decodes fiskai code makes of the arguments' bytes; the
model's own run is tested in fiskai-agent (tests/test_exact_arguments.py).
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from click.testing import CliRunner

from fiskai_a2a import NatsContext, Server
from fiskai_a2a.nats_transport import connect, subject_for
from fiskai_a2a.protocol import TOOL_REQUEST, Identity, ToolReply, ToolRequest, decode, encode, request_header
from fiskai_a2a.transport import Route
from fiskai_cli._root import cli
from fiskai_core.exec.running import command_tools
from fiskai_core.fisk import load_application
from fiskai_core.testing import DecodeCounter
from fiskai_core.tools import loads_exact
from fiskai_mcp import build_server, serve_async

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "examples" / "fixturectl" / "agent.yaml"
ARGUMENTS = '{"float": 1.50, "int": 1e2}'
MARKER = b"1.50"
AS_WRITTEN = ("[--int=1e2]", "[--float=1.50]")


def _tools() -> Any:
    return command_tools(load_application(str(ROOT / "examples" / "fixturectl" / "fixturectl")))


def test_tools_call_runs_the_numbers_as_written_after_one_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    decodes = DecodeCounter(monkeypatch.setattr, MARKER)
    result = CliRunner().invoke(cli, ["-c", str(CONFIG), "tools", "call", "types", ARGUMENTS])
    assert result.exit_code == 0, result.output
    assert all(token in result.stdout for token in AS_WRITTEN), result.stdout
    assert decodes.seen == ["parse_arguments"]


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# Written by hand so the numbers go on the wire as a model wrote them (a JSON library would write 1.5).
_CALL = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"types","arguments":' + ARGUMENTS + "}}"


@asynccontextmanager
async def _served_over_http() -> AsyncGenerator[str]:
    ready: list[str] = []
    started = anyio.Event()

    def on_ready(url: str) -> None:
        ready.append(url)
        started.set()

    server = build_server(_tools(), log=lambda _line: None)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: serve_async(server, port=0, on_ready=on_ready))
        with anyio.fail_after(10):
            await started.wait()
        yield ready[0]
        tasks.cancel_scope.cancel()


def _sse_or_json(response: httpx2.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


async def test_mcp_over_http_runs_the_numbers_as_written_after_one_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with _served_over_http() as url, httpx2.AsyncClient(timeout=10) as http:
        opened = await http.post(url + "/", json=_INITIALIZE, headers=headers)
        assert opened.status_code == 200, opened.text
        session = {"mcp-session-id": opened.headers["mcp-session-id"]} if "mcp-session-id" in opened.headers else {}
        await http.post(url + "/", json=_INITIALIZED, headers={**headers, **session})
        decodes = DecodeCounter(monkeypatch.setattr, MARKER)
        answered = await http.post(url + "/", content=_CALL.encode(), headers={**headers, **session})
    reply = _sse_or_json(answered)
    output = reply["result"]["content"][0]["text"]
    assert all(token in output for token in AS_WRITTEN), output
    # The SDK parses the body for itself; fiskai reads the arguments out of it once, where it arrives.
    assert decodes.seen == ["loads_exact"]


def test_mcp_over_stdio_runs_the_numbers_as_written() -> None:
    lines = [json.dumps(_INITIALIZE), json.dumps(_INITIALIZED), _CALL]
    server = subprocess.Popen(
        [sys.executable, "-m", "fiskai_cli", "-c", str(CONFIG), "mcp", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("\n".join(lines) + "\n")
        server.stdin.flush()
        call: dict[str, Any] = {}
        deadline = time.monotonic() + 60
        while not call and time.monotonic() < deadline:
            ready, _, _ = select.select([server.stdout], [], [], 1)
            line = server.stdout.readline() if ready else ""
            if line.strip():
                reply = json.loads(line)
                call = reply if reply.get("id") == 2 else {}
        # Stdin stays open until the answer is read: end of input ends the session before it is written.
        server.stdin.close()
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=30)
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()
    output = call["result"]["content"][0]["text"]
    assert all(token in output for token in AS_WRITTEN), output


async def test_a2a_runs_a_peer_s_numbers_as_written_after_one_decode(
    nats_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Server(identity="fixturectl", version="1", tools=_tools())
    exact = loads_exact(ARGUMENTS)
    assert isinstance(exact, dict)
    header = request_header(TOOL_REQUEST, sender=Identity(name="caller", instance="i1"), recipient="fixturectl")
    payload = encode(ToolRequest(header=header, name="types"), exact_input=exact)
    assert MARKER in payload
    decodes = DecodeCounter(monkeypatch.setattr, MARKER)
    replies: list[bytes] = []
    async with connect(NatsContext.from_url(nats_server)) as transport:
        async with anyio.create_task_group() as tasks:
            await tasks.start(partial(transport.serve, identity="fixturectl", version="1", handler=server))
            subject = subject_for(Route(agent="fixturectl", kind="tool"))
            with anyio.fail_after(20):
                replies.append((await transport.client.request(subject, payload, timeout=15)).data)
            tasks.cancel_scope.cancel()
    decoded = list(decodes.seen)  # the reply's own decode below is the test's, not the server's
    reply = decode(replies[0])
    assert isinstance(reply, ToolReply) and not reply.is_error, reply
    assert all(token in (reply.output or "") for token in AS_WRITTEN), reply.output
    assert decoded == ["loads_exact"]
