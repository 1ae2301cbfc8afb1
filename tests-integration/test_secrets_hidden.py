"""No tool can read the harness's secrets from its process (issue 36.2).

Stripping a tool's own environment is not enough: a tool runs as the harness's user, and
`/proc/<fiskai pid>/environ` shows the environment block fiskai was started with, whatever Python later
removed from `os.environ`. Each test runs the real CLI in a subprocess over a tool that prints its parent's
block, as a tool driven by a model could. The machine and CI run as root, which reads any process's
`/proc` files: so the values must be gone from the block itself, not merely unreadable. A marker variable
that is no secret must still show, which proves the tool really read the block.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from fiskai_a2a import A2AClient, A2ARemoteInvoker, NatsContext
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.tools import parse_arguments

pytestmark = pytest.mark.anyio

_MODEL = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "fixturectl.introspect.json"
_MARKER = "FISKAI_PEEK_MARKER=visible"
_TOOL, _ARGUMENTS = "cluster_config_get", {"key": "replicas"}


def _secret(label: str) -> str:
    return f"{label}-{secrets.token_hex(12)}"


@pytest.fixture
def secret_env() -> dict[str, str]:
    """The secrets of each kind fiskai knows, with fresh values, and a marker that is no secret."""
    return {
        "ANTHROPIC_API_KEY": _secret("sk-ant"),  # the harness's own: always stripped
        "AWS_SECRET_ACCESS_KEY": _secret("aws"),  # the default list
        "GH_TOKEN": _secret("gh"),  # the default list (what the a2a report showed)
        "MYCORP_VAULT": _secret("vault"),  # harness.environment.strip: [MYCORP_*]
        "EMBED_KEY": _secret("embed"),  # harness.environment.strip, exact
    }


def _env(tmp_path: Path, extra: Mapping[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        NO_COLOR="1",
        FISKAI_PEEK_MARKER="visible",
    )
    base.update(extra)
    return base


def _write_config(tmp_path: Path, expose: str = "mcp: {}") -> Path:
    """A fisk application whose every command prints its parent's (fiskai's) environment block."""
    app = tmp_path / "peek"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        'echo "parent=$PPID"\n'
        "tr '\\0' '\\n' < /proc/$PPID/environ || echo 'environ unreadable'\n",
        encoding="utf-8",
    )
    app.chmod(0o755)
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"identity: peek\napplication_path: {app}\nnats_context: peek-test\nllm:\n  model: claude-sonnet-4-6\n"
        "harness:\n  environment:\n    strip: [MYCORP_*, EMBED_KEY]\n"
        f"expose:\n  agent:\n    {expose}\n",
        encoding="utf-8",
    )
    return config


def _assert_hidden(output: str, hidden: Mapping[str, str], fiskai_pid: int | None = None) -> None:
    """The tool read its parent's block (as root) or was refused (as any other user), and saw no secret."""
    assert "parent=" in output, output
    if fiskai_pid is not None:
        assert f"parent={fiskai_pid}\n" in output, output
    if os.geteuid() == 0:
        assert _MARKER in output, output
    else:  # non-dumpable: a process of the same user may not read it at all
        assert "environ unreadable" in output, output
    for name, value in hidden.items():
        assert value not in output, f"{name}'s value reached the tool:\n{output}"


def _fiskai(config: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "fiskai_cli", "-c", str(config), *args]


def test_tools_call_hides_every_kind_of_secret(tmp_path: Path, secret_env: dict[str, str]) -> None:
    config = _write_config(tmp_path)

    done = subprocess.run(
        _fiskai(config, "tools", "call", _TOOL, json.dumps(_ARGUMENTS)),
        env=_env(tmp_path, secret_env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    _assert_hidden(done.stdout, secret_env)


def test_a_run_uses_its_key_but_the_model_never_sees_it(tmp_path: Path, secret_env: dict[str, str]) -> None:
    config = _write_config(tmp_path)
    with MessagesServer() as server:
        server.add(Turn([tool_use(_TOOL, _ARGUMENTS, id="toolu_peek")]), Turn([text("done")]))
        done = subprocess.run(
            _fiskai(config, "run", "look around"),
            env=_env(tmp_path, {**secret_env, "ANTHROPIC_BASE_URL": server.base_url}),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        requests = server.requests

    assert done.returncode == 0, done.stderr
    # The harness still holds the key it hid: every model call carries it.
    sent = [f"{request.headers.get('x-api-key')} {request.headers.get('authorization')}" for request in requests]
    assert len(sent) == 2 and all(secret_env["ANTHROPIC_API_KEY"] in headers for headers in sent), sent
    (result,) = [block for block in requests[1].tool_results() if block["tool_use_id"] == "toolu_peek"]
    _assert_hidden(json.loads(result["content"])["output"], secret_env)


@contextmanager
def _serving(argv: list[str], env: Mapping[str, str]) -> Generator[tuple[subprocess.Popen[str], str]]:
    """A fiskai server process, once it printed its `Serving ...` line (yielded with it); stopped on exit."""
    proc = subprocess.Popen(
        argv, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while not (line := lines.get(timeout=max(0.1, deadline - time.monotonic()))).startswith("Serving "):
            assert proc.poll() is None, f"{argv} exited before serving"
        yield proc, line
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)
        if proc.stderr is not None:
            proc.stderr.close()


async def test_mcp_hides_its_bearer_token_and_the_rest(tmp_path: Path, secret_env: dict[str, str]) -> None:
    token = _secret("mcp-token")
    argv = _fiskai(_write_config(tmp_path), "mcp", "--port", "0", "--token-env", "MCP_TOKEN")

    with _serving(argv, _env(tmp_path, {**secret_env, "MCP_TOKEN": token})) as (proc, line):
        url = line.split(" on ", 1)[1].split(" as ", 1)[0]
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    result = await client.call_tool(_TOOL, _ARGUMENTS)

    block = result.content[0]
    assert isinstance(block, types.TextContent)
    _assert_hidden(json.loads(block.text)["output"], {**secret_env, "MCP_TOKEN": token}, proc.pid)


@pytest.mark.nats
async def test_a2a_hides_the_secrets_of_the_serving_process(
    nats_server: str, tmp_path: Path, secret_env: dict[str, str]
) -> None:
    contexts = tmp_path / "config" / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "peek-test.json").write_text(json.dumps({"url": nats_server}), encoding="utf-8")
    config = _write_config(tmp_path, "agent_to_agent: true\n    a2a: {tool_timeout: 15s}")

    with _serving(_fiskai(config, "a2a"), _env(tmp_path, secret_env)) as (proc, _line):
        with anyio.fail_after(30):
            async with connect(NatsContext.from_url(nats_server)) as transport:
                client = A2AClient(transport, identity="caller", streams=NatsStreams(transport))
                invoker = A2ARemoteInvoker(client)
                reply = await invoker.invoke_tool("peek", _TOOL, parse_arguments(json.dumps(_ARGUMENTS)))

    assert not reply.is_error, reply.output
    _assert_hidden(reply.output, secret_env, proc.pid)
