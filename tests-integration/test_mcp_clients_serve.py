"""`fiskai serve` with `mcp_clients`: one connection set for the process, shared by every conversation.

A `fiskai serve` subprocess on a real nats-server, the scripted Messages server, and the test's own stdio
MCP server, which logs each start (one start = one session) and each call. Imported tools reach the
prompts channel's runs and never the tool endpoint (`serve_tools`): they are not served again.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from fiskai_a2a import A2AClient, NatsContext
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_a2a.prompts_client import send_turn
from fiskai_a2a.protocol import serve as wire
from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.testing import write_fake_app

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

ROOT = Path(__file__).resolve().parents[1]
AGENT = "notes-agent"

_NOTES_SERVER = """
import os
import sys

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

LOG = sys.argv[1]


def log(line):
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(line + "\\n")


async def list_tools(ctx, params):
    tool = types.Tool(
        name="note", description="read the note", input_schema={"type": "object"},
        annotations=types.ToolAnnotations(read_only_hint=True),
    )
    return types.ListToolsResult(tools=[tool])


async def call_tool(ctx, params):
    log("call")
    return types.CallToolResult(content=[types.TextContent(type="text", text="the note says hello")])


server = Server("notes", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    log(f"start {os.getpid()}")
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


def write_config(folder: Path) -> tuple[Path, Path]:
    """An agent with fixturectl's commands (served on the tool endpoint) and the notes server; its log."""
    app = write_fake_app(folder, ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json")
    server, log = folder / "notes_server.py", folder / "notes.log"
    server.write_text(_NOTES_SERVER, encoding="utf-8")
    config = folder / "agent.yaml"
    config.write_text(
        f"identity: {AGENT}\napplication_path: {app}\nsystem_prompt: You read notes.\n"
        "llm: {model: claude-sonnet-4-6}\n"
        "expose: {agent: {a2a: {serve_tools: true, prompts: {workers: 2}}}}\n"
        f"mcp_clients:\n  - name: notes\n    alias: kb\n    command: {sys.executable}\n    args: [{server}, {log}]\n",
        encoding="utf-8",
    )
    (folder / "runs").mkdir()
    return config, log


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie left for a non-reaping init counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextmanager
def serving(config: Path, url: str, model: MessagesServer) -> Generator[list[str]]:
    """`fiskai serve` until it answers prompts; its stderr lines so far. Drained (SIGTERM) at the end."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    env.update(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="test-key")
    args = ["-c", str(config), "serve", "--server", url, "--state-dir", str(config.parent / "runs")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fiskai_cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while not any("Answering prompts over a2a" in line for line in seen):
            try:
                seen.append(lines.get(timeout=0.2))
            except queue.Empty:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"fiskai serve did not start: {''.join(seen)}")
        yield seen
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()


async def test_two_conversations_share_one_session_and_the_tool_endpoint_does_not_serve_imported_tools(
    nats_server: str, tmp_path: Path
) -> None:
    """Steps:
    1. Two prompts, each a new conversation, call kb_note: both results reach the model.
    2. The notes server started once (one session for the process) and was called twice.
    3. The tool endpoint's card lists fixturectl's commands and no kb_ tool.
    4. After the drain the notes server's process is gone.
    """
    config, log = write_config(tmp_path)
    with MessagesServer() as model:
        model.add(
            Turn([tool_use("kb_note", {}, id="toolu_1")]),
            Turn([text("one")]),
            Turn([tool_use("kb_note", {}, id="toolu_2")]),
            Turn([text("two")]),
        )
        with serving(config, nats_server, model) as seen:
            async with connect(NatsContext.from_url(nats_server)) as transport:
                streams = NatsStreams(transport)
                answers: list[str] = []
                for prompt in ("read the note", "read it again"):
                    with anyio.fail_after(60):
                        reply = await send_turn(streams, AGENT, sender="tester", prompt=prompt)
                    assert isinstance(reply, wire.ResultReply), (reply, "".join(seen))
                    answers.append(reply.text or "")
                card = await A2AClient(transport, identity="caller", timeout=10).discover(AGENT)
        results = [request.tool_results() for request in model.requests if request.tool_results()]
    assert answers == ["one", "two"]
    assert len(results) == 2
    assert all("the note says hello" in json.dumps(blocks[0]["content"]) for blocks in results), results
    logged = log.read_text(encoding="utf-8").split("\n")
    starts = [line for line in logged if line.startswith("start ")]
    assert len(starts) == 1, logged
    assert logged.count("call") == 2
    served = [tool.name for tool in card.tools or []]
    assert "cluster_node_list" in served
    assert not [name for name in served if name.startswith("kb_")], served
    pid = int(starts[0].split()[1])
    assert not alive(pid)
