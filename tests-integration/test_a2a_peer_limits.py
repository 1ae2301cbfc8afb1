"""What a remote peer's card and replies can do to a fiskai agent, over a real nats-server.

The peer is a stand-in for a Go fisk-ai agent (raw NATS replies written from the v1 schemas, as in
test_a2a_nats.py) that advertises what the local limits refuse: a 300-character name, an input schema
of type string, a 10,000-character description, and a tool whose every result is 600 KB. `fiskai info`
and `fiskai run` are real subprocesses; the model is the scripted MessagesServer.
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import nats
import pytest
from nats.aio.msg import Msg

from fiskai_a2a import A2AClient, NatsContext, import_remote_tools
from fiskai_a2a.nats_transport import connect, flush_in_order
from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.config import RemoteToolHost
from fiskai_core.exec import MAX_TOOL_OUTPUT_BYTES
from fiskai_core.testing import call_tool

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

_ROOT = Path(__file__).resolve().parents[1]
_EXAMPLE = _ROOT / "examples" / "fixturectl" / "agent.yaml"
_PEER = "goagent"
_LONG_NAME = "n" * 300
_BIG_OUTPUT = "HEAD" + "x" * 600_000 + "TAIL"
_CARD_TOOLS: list[dict[str, Any]] = [
    {"name": "t00", "description": "Tool 0.\n\nTags: impact:ro, ai:no_defer", "input_schema": {"type": "object"}},
    *({"name": f"t{i:02}", "description": f"Tool {i}.", "input_schema": {"type": "object"}} for i in range(1, 11)),
    {"name": "dump", "description": "Dump everything.", "input_schema": {"type": "object"}},
    {"name": _LONG_NAME, "description": "A long name.", "input_schema": {"type": "object"}},
    {"name": "stringly", "description": "Takes a string.", "input_schema": {"type": "string"}},
    {"name": "wordy", "description": "Talks. " + "word " * 2_000, "input_schema": {"type": "object"}},
]


def _go_reply(request: dict[str, Any], protocol: str, **body: Any) -> bytes:
    header = {
        "protocol": protocol,
        "id": "2pQZr3m2oG7lQ0b9TQ8xQW2s9Zk",
        "request": request["request"],
        "conversation": request["conversation"],
        "sequence": 0,
        "time": "2026-07-24T10:15:02.987654321Z",
        "sender": {"name": _PEER},
        "recipient": {"name": request["sender"]["name"]},
    }
    return json.dumps({**header, **body}).encode()


@asynccontextmanager
async def hostile_peer(url: str) -> AsyncGenerator[None]:
    """Serve the card above as `goagent`; `dump` answers 600 KB, every other tool `ok`."""

    async def on_discovery(msg: Msg) -> None:
        request = json.loads(msg.data)
        card = _go_reply(request, "io.choria.fisk-ai.v1.discovery.reply", name=_PEER, version="1", tools=_CARD_TOOLS)
        await msg.respond(card)

    async def on_tool(msg: Msg) -> None:
        request = json.loads(msg.data)
        output = _BIG_OUTPUT if request["name"] == "dump" else "ok"
        exec_result = {"command": request["name"], "exit_code": 0}
        await msg.respond(_go_reply(request, "io.choria.fisk-ai.v1.tool.reply", output=output, exec=exec_result))

    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    try:
        await nc.subscribe(f"choria.fisk-ai.discovery.{_PEER}", cb=on_discovery)  # pyright: ignore[reportUnknownMemberType]
        await nc.subscribe(f"choria.fisk-ai.tool.{_PEER}", cb=on_tool)  # pyright: ignore[reportUnknownMemberType]
        await flush_in_order(nc)
        yield
    finally:
        await nc.close()


def _runner(folder: Path, url: str) -> Path:
    context = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    context.mkdir(parents=True, exist_ok=True)
    (context / "limits.json").write_text(json.dumps({"url": url}), encoding="utf-8")
    config = folder / "runner.yaml"
    config.write_text(
        "identity: runner\nnats_context: limits\nsystem_prompt: Use the remote tools.\n"
        f"remote_tools:\n  - name: {_PEER}\nllm: {{model: claude-sonnet-4-6}}\n",
        encoding="utf-8",
    )
    return config


def _fiskai(args: list[str], *, base_url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args],
        env={**env, "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test-key"},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_a_peer_s_names_schemas_descriptions_and_outputs_get_the_local_limits(nats_server: str) -> None:
    async with hostile_peer(nats_server), connect(NatsContext.from_url(nats_server)) as transport:
        client = A2AClient(transport, identity="runner", timeout=10)
        imported = await import_remote_tools([RemoteToolHost(name=_PEER)], client=client, taken=[], strict=False)
        by_name = {tool.name: tool for tool in imported.tools}
        assert _LONG_NAME not in by_name and "stringly" not in by_name
        (skipped,) = [w for w in imported.warnings if w.startswith(f'remote agent "{_PEER}": skipped')]
        assert "is 300 characters, over the 128 a tool name may have" in skipped
        assert 'its input schema has type "string", not an object schema' in skipped
        assert len(by_name["wordy"].description) == 4096
        assert by_name["t00"].tags == ("impact:ro", "ai:no_defer")
        body = json.loads((await call_tool(by_name["dump"], None)).text)
    assert body["truncated"] is True and body["output"].startswith("HEAD") and body["output"].endswith("TAIL")
    assert len(body["output"].encode()) <= MAX_TOOL_OUTPUT_BYTES + 64


def test_five_600_kb_remote_results_reach_the_model_capped(nats_server: str, tmp_path: Path) -> None:
    """Steps: 1. the model calls the peer's `dump` five times in one turn; 2. each result the model then
    receives is at most 64 KiB of output, head and tail kept, marked truncated."""
    runner = _runner(tmp_path, nats_server)

    async def scenario(base_url: str) -> subprocess.CompletedProcess[str]:
        async with hostile_peer(nats_server):
            args = ["-c", str(runner), "run", "dump"]
            return await anyio.to_thread.run_sync(lambda: _fiskai(args, base_url=base_url, cwd=tmp_path))

    with MessagesServer() as model:
        calls = [tool_use("dump", {}, id=f"toolu_{i}") for i in range(5)]
        model.add(Turn(calls), Turn([text("Dumped.")]))
        done = anyio.run(scenario, model.base_url)
        assert done.returncode == 0, done.stderr
        results = model.requests[1].tool_results()
    assert len(results) == 5
    for result in results:
        body = json.loads(str(result["content"]))
        assert body["truncated"] is True and body["output"].endswith("TAIL")
        assert len(str(result["content"]).encode()) < MAX_TOOL_OUTPUT_BYTES + 200


def test_info_and_the_run_agree_on_which_remote_tools_are_deferred(nats_server: str, tmp_path: Path) -> None:
    """Steps: 1. `info` on an agent whose only tools are the peer's; 2. `run` on the same agent; 3. the
    tools `info` marks deferred are exactly those the model is not shown up front, and the peer's
    `ai:no_defer` tool (tagged on its description's Tags line) is shown up front by both."""
    runner = _runner(tmp_path, nats_server)

    async def scenario(base_url: str) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
        async with hostile_peer(nats_server):
            info_args = ["-c", str(runner), "info", "--format", "json"]
            info = await anyio.to_thread.run_sync(lambda: _fiskai(info_args, base_url=base_url, cwd=tmp_path))
            run_args = ["-c", str(runner), "run", "hi"]
            run = await anyio.to_thread.run_sync(lambda: _fiskai(run_args, base_url=base_url, cwd=tmp_path))
            return info, run

    with MessagesServer() as model:
        model.add(Turn([text("Hello.")]))
        info, run = anyio.run(scenario, model.base_url)
        assert info.returncode == 0, info.stderr
        assert run.returncode == 0, run.stderr
        loaded = set(model.requests[0].loaded_tool_names)
    report = json.loads(info.stdout)
    remote = {tool["name"]: tool["deferred"] for tool in report["tools"] if tool["source"] == f"remote {_PEER}"}
    assert len(remote) == 13  # t00..t10, dump, wordy
    assert remote == {name: name not in loaded for name in remote}
    assert remote["t00"] is False and sum(remote.values()) == 12
    assert report["model"]["total_tools"] == 13 and report["model"]["deferred_tools"] == 12


def test_the_example_configuration_serves_over_a2a(nats_server: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fiskai_cli", "-c", str(_EXAMPLE), "a2a", "--server", nats_server],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
    reader.start()
    try:
        startup: list[str] = []
        while not startup or not startup[-1].startswith("Serving "):
            try:
                startup.append(lines.get(timeout=20))
            except queue.Empty:
                pytest.fail(f"fiskai a2a did not start serving the example: {''.join(startup)}")
        assert startup[-1].startswith("Serving 9 tools over a2a as fixturectl/"), "".join(startup)

        async def discover() -> list[str]:
            async with connect(NatsContext.from_url(nats_server)) as transport:
                card = await A2AClient(transport, identity="caller", timeout=10).discover("fixturectl")
                return [tool.name for tool in card.tools or []]

        names = anyio.run(discover)
        assert "cluster_node_list" in names and "cluster_node_drain" not in names
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        reader.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode == 0
