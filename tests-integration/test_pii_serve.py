"""`harness.pii.mode` on a served conversation: `fiskai serve`'s prompts channel over a real nats-server.

A served turn reaches the agent loop the same way a run does, so the guard applies to its first prompt,
its follow-ups (which arrive with the resume) and its tool results; these tests prove it on the wire.
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
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from fiskai_a2a import NatsContext
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_a2a.prompts_client import send_turn
from fiskai_a2a.protocol import serve as wire
from fiskai_agent.testing import MessagesServer, Turn, text, tool_use

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

_MODEL = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "fixturectl.introspect.json"
_AGENT = "pii-agent"
EMAIL = "maria.gonzalez@northwind-traders.com"


def _config(folder: Path, mode: str) -> Path:
    app = folder / "fixturectl"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        f"echo 'owner: {EMAIL}'\n",
        encoding="utf-8",
    )
    app.chmod(0o755)
    config = folder / "agent.yaml"
    config.write_text(
        f"identity: {_AGENT}\n"
        f"application_path: {app}\n"
        "system_prompt: You operate the cluster.\n"
        "llm: {model: claude-sonnet-4-6}\n"
        f"harness: {{pii: {{mode: {mode}}}}}\n"
        "expose: {agent: {a2a: {prompts: {workers: 1}}}}\n",
        encoding="utf-8",
    )
    (folder / "runs").mkdir()
    return config


@contextmanager
def serving(config: Path, url: str, model: MessagesServer) -> Generator[list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_", "OTEL_"))}
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
        deadline = time.monotonic() + 30
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
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()


@asynccontextmanager
async def caller(url: str) -> AsyncGenerator[NatsStreams]:
    async with connect(NatsContext.from_url(url)) as transport:
        yield NatsStreams(transport)


async def _turn(streams: NatsStreams, **options: Any) -> tuple[list[wire.ServeMessage], wire.ServeMessage]:
    messages: list[wire.ServeMessage] = []
    with anyio.fail_after(60):
        terminal = await send_turn(streams, _AGENT, sender="tester", on_message=messages.append, **options)
    return messages, terminal


async def test_a_served_conversation_is_redacted_on_every_entry(nats_server: str, tmp_path: Path) -> None:
    config = _config(tmp_path, "redact")
    with MessagesServer() as model:
        model.add(
            Turn([tool_use("cluster_node_list", {"limit": 2}, id="toolu_list")]),
            Turn([text("one")]),
            Turn([text("two")]),
        )
        with serving(config, nats_server, model):
            async with caller(nats_server) as streams:
                first, result = await _turn(streams, prompt="mail the list to jane.roe@example.com")
                assert isinstance(result, wire.ResultReply) and result.text == "one"
                ack = first[0]
                assert isinstance(ack, wire.Ack) and ack.conversation_token
                _, result = await _turn(streams, prompt="my SSN is 536-22-1893", token=ack.conversation_token)
                assert isinstance(result, wire.ResultReply) and result.text == "two"
    streamed = [m.block for m in first if isinstance(m, wire.EventMessage) and m.kind == "tool_result"]
    assert "[REDACTED:EMAIL]" in json.dumps(streamed) and EMAIL not in json.dumps(streamed)
    sent = json.dumps(model.requests[-1].messages)
    assert "mail the list to [REDACTED:EMAIL]" in sent and "my SSN is [REDACTED:SSN]" in sent
    assert "jane.roe@example.com" not in sent and EMAIL not in sent and "536-22-1893" not in sent
    journals = b"".join(p.read_bytes() for p in (tmp_path / "runs").rglob("*") if p.is_file())
    assert b"[REDACTED:EMAIL]" in journals
    assert EMAIL.encode() not in journals and b"536-22-1893" not in journals


async def test_reject_refuses_a_served_prompt_and_a_follow_up(nats_server: str, tmp_path: Path) -> None:
    config = _config(tmp_path, "reject")
    with MessagesServer() as model:
        model.add(Turn([text("hello")]))
        with serving(config, nats_server, model):
            async with caller(nats_server) as streams:
                _, refused = await _turn(streams, prompt="card 4532015112830366 was declined")
                first, result = await _turn(streams, prompt="hi")
                ack = first[0]
                assert isinstance(ack, wire.Ack) and ack.conversation_token
                _, again = await _turn(streams, prompt="my SSN is 536-22-1893", token=ack.conversation_token)
    assert isinstance(refused, wire.ErrorReply)
    assert "prompt refused" in refused.error and "CREDIT_CARD" in refused.error
    assert isinstance(result, wire.ResultReply) and result.text == "hello"
    assert isinstance(again, wire.ErrorReply) and "prompt refused" in again.error and "SSN" in again.error
    assert len(model.requests) == 1
    assert "4532015112830366" not in json.dumps(model.requests[0].messages)
