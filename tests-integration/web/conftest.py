"""The web channel's test rig: a real `fiskai serve` process with `expose.agent.web`, the scripted model.

`web_worker(model, ...)` starts the worker on a free loopback port and returns a `WebWorker` (its base
URL, an httpx client with the allowed Origin, SSE parsing); `ui_stream_conformance` checks a Vercel AI
SDK UI message stream against that protocol's documentation (the "Stream Protocols" page: part types,
their exact fields, start/finish, text-start/-delta/-end, tool input before output, `[DONE]` last).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from fiskai_agent.testing import MessagesServer

_ROOT = Path(__file__).resolve().parents[2]
_MODEL = _ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"
ORIGIN = "http://page.example"
AGENT = "web-agent"


def write_config(folder: Path, *, listen: str = "127.0.0.1:0", extra: str = "") -> Path:
    """An agent over fixturectl's commands (each prints its argv, one `[arg]` a line) with a web block."""
    app = folder / "fixturectl"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        'for arg in "$@"; do printf "[%s]\\n" "$arg"; done\n',
        encoding="utf-8",
    )
    app.chmod(0o755)
    config = folder / "agent.yaml"
    config.write_text(
        f"identity: {AGENT}\n"
        f"application_path: {app}\n"
        "system_prompt: You operate the cluster.\n"
        "llm: {model: claude-sonnet-4-6}\n"
        "display_name: Cluster operator\n"
        "icon: '🛠'\n"
        "prompts: [List the nodes, Drain node n3]\n"
        "harness: {human_in_the_loop: {enabled: true}}\n"
        f"expose: {{agent: {{web: {{listen: '{listen}', origins: ['{ORIGIN}']}}}}}}\n" + extra,
        encoding="utf-8",
    )
    (folder / "runs").mkdir(exist_ok=True)
    return config


class WebWorker:
    """A running `fiskai serve` with the web channel."""

    def __init__(self, proc: subprocess.Popen[str], lines: queue.Queue[str], url: str, seen: list[str]) -> None:
        self.proc = proc
        self.lines = lines
        self.url = url
        """`http://127.0.0.1:PORT/fisk/v1`"""
        self.seen = seen
        self.client = httpx.Client(base_url=url, headers={"origin": ORIGIN}, timeout=30)

    def post(self, route: str, body: dict[str, Any], **headers: str) -> httpx.Response:
        return self.client.post(route, json=body, headers=headers)

    def events(self, route: str, body: dict[str, Any]) -> tuple[httpx.Response, list[Any]]:
        """POST a turn; the response and its SSE `data:` payloads (JSON, or the text `[DONE]`)."""
        response = self.post(route, body)
        return response, sse_data(response.text)

    def stderr(self) -> str:
        while True:
            try:
                self.seen.append(self.lines.get_nowait())
            except queue.Empty:
                return "".join(self.seen)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)


def sse_data(text: str) -> list[Any]:
    """The `data:` payload of each SSE event, JSON-decoded except the `[DONE]` marker."""
    payloads: list[Any] = []
    for event in text.split("\n\n"):
        data = "\n".join(line[6:] for line in event.split("\n") if line.startswith("data: "))
        if data:
            payloads.append(data if data == "[DONE]" else json.loads(data))
    return payloads


@pytest.fixture
def web_worker(tmp_path: Path) -> Iterator[Callable[..., WebWorker]]:
    started: list[WebWorker] = []
    readers: list[threading.Thread] = []

    def start(
        model: MessagesServer, *args: str, config: Path | None = None, env: dict[str, str] | None = None
    ) -> WebWorker:
        path = config or write_config(tmp_path)
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
        environ.update(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="test-key", **(env or {}))
        command = [
            sys.executable,
            "-m",
            "fiskai_cli",
            "-c",
            str(path),
            "serve",
            "--state-dir",
            str(path.parent / "runs"),
        ]
        proc = subprocess.Popen(
            [*command, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
        )
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
        reader.start()
        readers.append(reader)
        seen: list[str] = []
        deadline = time.monotonic() + 60
        while True:
            try:
                seen.append(lines.get(timeout=0.2))
            except queue.Empty:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail(f"fiskai serve did not start: {''.join(seen)}")
                continue
            found = re.search(r"Page: (http://\S+?)/?$", seen[-1].strip())
            if found:
                break
        worker = WebWorker(proc, lines, found.group(1), seen)
        started.append(worker)
        return worker

    yield start
    for worker, reader in zip(started, readers, strict=False):
        worker.client.close()
        if worker.proc.poll() is None:
            worker.proc.kill()
            worker.proc.wait(timeout=10)
        reader.join(timeout=10)
        if worker.proc.stderr is not None:
            worker.proc.stderr.close()


# --- the AI SDK UI message stream, from its documentation ---------------------------------------------

_PROVIDER = {"providerMetadata"}
_CHUNKS: dict[str, tuple[set[str], set[str]]] = {
    # type: (required keys, optional keys), besides "type"; every chunk is a strict object.
    "start": (set(), {"messageId", "messageMetadata"}),
    "finish": (set(), {"finishReason", "messageMetadata"}),
    "abort": (set(), {"reason"}),
    "message-metadata": ({"messageMetadata"}, set()),
    "start-step": (set(), set()),
    "finish-step": (set(), set()),
    "text-start": ({"id"}, _PROVIDER),
    "text-delta": ({"id", "delta"}, _PROVIDER),
    "text-end": ({"id"}, _PROVIDER),
    "reasoning-start": ({"id"}, _PROVIDER),
    "reasoning-delta": ({"id", "delta"}, _PROVIDER),
    "reasoning-end": ({"id"}, _PROVIDER),
    "error": ({"errorText"}, set()),
    "source-url": ({"sourceId", "url"}, {"title"} | _PROVIDER),
    "source-document": ({"sourceId", "mediaType", "title"}, {"filename"} | _PROVIDER),
    "file": ({"url", "mediaType"}, _PROVIDER),
    "tool-input-start": ({"toolCallId", "toolName"}, {"providerExecuted", "dynamic", "title"} | _PROVIDER),
    "tool-input-delta": ({"toolCallId", "inputTextDelta"}, set()),
    "tool-input-available": (
        {"toolCallId", "toolName", "input"},
        {"providerExecuted", "dynamic", "title"} | _PROVIDER,
    ),
    "tool-output-available": ({"toolCallId", "output"}, {"providerExecuted", "dynamic", "preliminary"}),
    "tool-output-error": ({"toolCallId", "errorText"}, {"providerExecuted", "dynamic"}),
    "tool-output-denied": ({"toolCallId"}, set()),
}
_FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "other"}


def check_ui_stream(payloads: Sequence[Any]) -> list[dict[str, Any]]:
    """Assert `payloads` is one well-formed UI message stream; returns its chunks (without `[DONE]`)."""
    assert payloads and payloads[-1] == "[DONE]", "the stream must end with data: [DONE]"
    chunks = list(payloads[:-1])
    assert "[DONE]" not in chunks, "[DONE] only once, last"
    assert chunks[0]["type"] == "start", "a message starts with a start part"
    assert chunks[-1]["type"] == "finish", "a message ends with a finish part"
    open_blocks: dict[str, str] = {}
    inputs: set[str] = set()
    outputs: set[str] = set()
    in_step = False
    for item in chunks:
        assert isinstance(item, dict), item
        chunk = cast("dict[str, Any]", item)
        kind = str(chunk["type"])
        keys = set(chunk) - {"type"}
        if kind.startswith("data-"):
            assert "data" in keys and keys <= {"id", "data", "transient"}, chunk
            continue
        assert kind in _CHUNKS, f"unknown part type {kind!r}"
        required, optional = _CHUNKS[kind]
        assert required <= keys, f"{kind} lacks {required - keys}"
        assert keys <= required | optional, (
            f"{kind} has keys the protocol does not define: {keys - required - optional}"
        )
        for key in ("id", "delta", "toolCallId", "toolName", "errorText", "messageId", "title"):
            if key in chunk:
                assert isinstance(chunk[key], str), (kind, key)
        if kind == "finish" and "finishReason" in chunk:
            assert chunk["finishReason"] in _FINISH_REASONS
        if kind == "start-step":
            assert not in_step, "start-step inside a step"
            in_step = True
        elif kind == "finish-step":
            assert in_step, "finish-step outside a step"
            in_step = False
        family = kind.split("-")[0]
        if kind in ("text-start", "reasoning-start"):
            assert chunk["id"] not in open_blocks, "a block id starts once"
            open_blocks[chunk["id"]] = family
        elif kind in ("text-delta", "reasoning-delta", "text-end", "reasoning-end"):
            assert open_blocks.get(chunk["id"]) == family, f"{kind} for a {family} block that is not open"
            if kind.endswith("-end"):
                del open_blocks[chunk["id"]]
        elif kind == "tool-input-available":
            inputs.add(chunk["toolCallId"])
        elif kind.startswith("tool-output"):
            assert chunk["toolCallId"] in inputs, "a tool output follows its input"
            assert chunk["toolCallId"] not in outputs, "one output per call"
            outputs.add(chunk["toolCallId"])
    assert not open_blocks, f"blocks never ended: {open_blocks}"
    assert not in_step, "the last step never finished"
    return chunks


@pytest.fixture
def ui_stream_conformance() -> Callable[[Sequence[Any]], list[dict[str, Any]]]:
    return check_ui_stream
