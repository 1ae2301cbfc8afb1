"""`harness.hooks` on the faces that serve tools without a model: `fiskai mcp` (a real MCP client over
HTTP), the a2a tool endpoint (`fiskai a2a` on a real nats-server) and `fiskai tools call`.

The application is fixturectl's captured model behind a fake binary that records every argv it runs, so
each test checks on disk that a denied call never ran. The hooks are small Python programs reading the
event on stdin.
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
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from fiskai_a2a import A2AClient, A2ARemoteInvoker, NatsContext
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_core.testing import write_fake_app
from fiskai_core.tools import parse_arguments

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"

DENY_LIST = (
    'if event["tool"] == "cluster_node_list":\n'
    '    print(json.dumps({"decision": "deny", "reason": "node listings are private"}))\n'
)
TO_GATED = (
    'if event["tool"] == "cluster_config_get":\n'
    '    print(json.dumps({"decision": "rewrite", "tool": "cluster_config_set",\n'
    '                      "arguments": {"key": event["arguments"]["key"], "value": "x"}}))\n'
)
REDACT = 'print(json.dumps({"decision": "rewrite", "output": "[redacted by policy]"}))\n'


def hook(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(
        f"#!{sys.executable}\nimport json, sys\nevent = json.load(sys.stdin)\n"
        f"with open({str(tmp_path / (name + '.log'))!r}, 'a') as log:\n    log.write(json.dumps(event) + '\\n')\n"
        + body,
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def write_config(tmp_path: Path, hooks: str, extra: str = "") -> Path:
    app = write_fake_app(tmp_path, MODEL)
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"identity: fixturectl\napplication_path: {app}\nexclude:\n  tools: ['^fail$']\n"
        f"harness:\n  confirm_tags: [impact:rw]\n  hooks:\n{hooks}{extra}",
        encoding="utf-8",
    )
    return config


def calls(tmp_path: Path) -> str:
    log = tmp_path / "fakeapp.calls"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def fiskai(*args: str) -> list[str]:
    return [sys.executable, "-m", "fiskai_cli", *args]


@contextmanager
def process(
    argv: list[str], ready: str, env: dict[str, str] | None = None
) -> Generator[tuple[subprocess.Popen[str], list[str]]]:
    """A serving fiskai process, once a stderr line contains `ready`; its stderr lines so far (and later)."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    lines: list[str] = []
    seen: queue.Queue[str] = queue.Queue()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            seen.put(line)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if ready in seen.get(timeout=0.2):
                    break
            except queue.Empty:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{argv[3:]} did not start: {''.join(lines)}")
        yield proc, lines
    finally:
        proc.send_signal(signal.SIGINT if "mcp" in argv else signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)
        assert proc.stderr is not None
        proc.stderr.close()


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


pytestmark = pytest.mark.anyio


async def test_mcp_face_runs_the_hooks_deny_rewrite_and_the_gate_still_fires(tmp_path: Path) -> None:
    deny = hook(tmp_path, "deny", DENY_LIST)
    gated = hook(tmp_path, "gated", TO_GATED)
    redact = hook(tmp_path, "redact", REDACT)
    config = write_config(
        tmp_path,
        f"    pre_tool_use:\n      - command: [{deny}]\n      - command: [{gated}]\n"
        f"    post_tool_use:\n      - command: [{redact}]\n        tools: [types]\n",
        "expose:\n  agent:\n    mcp: {confirm_over_mcp: always}\n",
    )
    argv = fiskai("-c", str(config), "mcp", "--port", "0")
    with process(argv, "Serving ") as (_, lines):
        url = next(line for line in lines if line.startswith("Serving ")).split(" on ", 1)[1].split(" as ", 1)[0]
        # A client that cannot elicit: under `always` a gated call is refused, so the gate's firing is visible.
        async with Client(url, mode="legacy") as client:
            denied = await client.call_tool("cluster_node_list", {"limit": 2})
            rewritten = await client.call_tool("cluster_config_get", {"key": "replicas"})
            replaced = await client.call_tool("types", {})
        stderr = "".join(lines)

    assert denied.is_error is True
    assert _text(denied) == "not run: denied by policy: node listings are private"
    # cluster_config_get is ungated; the hook turned it into the gated cluster_config_set, so the gate asked.
    assert rewritten.is_error is True and "does not support elicitation" in _text(rewritten)
    assert json.loads(_text(replaced))["output"] == "[redacted by policy]"
    ran = calls(tmp_path)
    assert "node" not in ran and "config" not in ran
    assert "types" in ran
    assert 'Hook "deny" denied cluster_node_list (pre_tool_use): node listings are private' in stderr
    assert 'Hook "gated" rewrote cluster_config_get (pre_tool_use) to {"arguments": {"key": "replicas"' in stderr
    assert 'Hook "redact" replaced the output of types (post_tool_use)' in stderr


def _write_context(url: str) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hooks-test.json").write_text(json.dumps({"url": url}), encoding="utf-8")


@pytest.mark.nats
async def test_a2a_tool_endpoint_runs_the_hooks_on_a_real_nats_server(nats_server: str, tmp_path: Path) -> None:
    _write_context(nats_server)
    deny = hook(tmp_path, "deny", DENY_LIST)
    gated = hook(tmp_path, "gated", TO_GATED)
    config = write_config(
        tmp_path,
        f"    pre_tool_use:\n      - command: [{deny}]\n      - command: [{gated}]\n",
        "nats_context: hooks-test\nexpose:\n  agent:\n    agent_to_agent: true\n",
    )
    with process(fiskai("-c", str(config), "a2a"), "Serving ") as (_, lines):
        async with connect(NatsContext.from_url(nats_server)) as transport:
            client = A2AClient(transport, identity="caller", streams=NatsStreams(transport))
            invoker = A2ARemoteInvoker(client)
            with anyio.fail_after(30):
                denied = await invoker.invoke_tool("fixturectl", "cluster_node_list", parse_arguments('{"limit": 2}'))
                rewritten = await invoker.invoke_tool(
                    "fixturectl", "cluster_config_get", parse_arguments('{"key": "a"}')
                )
                allowed = await invoker.invoke_tool("fixturectl", "types", parse_arguments("{}"))
        stderr = "".join(lines)

    assert denied.is_error and denied.output == "not run: denied by policy: node listings are private"
    # The tool endpoint serves no gated tool, so a rewrite to one is refused, never run ungated.
    assert rewritten.is_error and '"cluster_config_set", which is not available here' in rewritten.output
    assert not allowed.is_error
    ran = calls(tmp_path)
    assert "node" not in ran and "config" not in ran and "types" in ran
    assert 'Hook "deny" denied cluster_node_list (pre_tool_use): node listings are private' in stderr


def test_tools_call_runs_the_hooks(tmp_path: Path) -> None:
    deny = hook(tmp_path, "deny", DENY_LIST)
    gated = hook(tmp_path, "gated", TO_GATED)
    config = write_config(tmp_path, f"    pre_tool_use:\n      - command: [{deny}]\n      - command: [{gated}]\n")

    def call(name: str, arguments: str) -> subprocess.CompletedProcess[str]:
        argv = fiskai("-c", str(config), "tools", "call", name, arguments, "--format", "json")
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)

    denied = call("cluster_node_list", '{"limit": 2}')
    rewritten = call("cluster_config_get", '{"key": "a"}')

    assert denied.returncode == 1
    assert "denied by policy: node listings are private" in denied.stdout
    assert 'Hook "deny" denied cluster_node_list (pre_tool_use)' in denied.stderr
    # The rewrite names a gated tool; with no terminal the gate denies it.
    assert rewritten.returncode == 1, rewritten.stdout + rewritten.stderr
    assert "cluster_config_set" in rewritten.stderr
    assert calls(tmp_path) == ""
    (event,) = [json.loads(line) for line in (tmp_path / "deny.log").read_text(encoding="utf-8").splitlines()[:1]]
    assert event == {"hook_event_name": "pre_tool_use", "tool": "cluster_node_list", "arguments": {"limit": 2}}


PROMPT_POLICY = (
    'if "secret" in event["prompt"]:\n'
    '    print(json.dumps({"decision": "deny", "reason": "secrets are not discussed"}))\n'
    'elif "4111" in event["prompt"]:\n'
    '    print(json.dumps({"decision": "rewrite", "prompt": event["prompt"].replace("4111", "****")}))\n'
)


@pytest.mark.nats
async def test_serve_prompts_meet_the_prompt_and_tool_hooks_and_the_journal_names_agent_and_caller(
    nats_server: str, tmp_path: Path
) -> None:
    """A served conversation (a real `fiskai serve`, the scripted Messages server): the first turn's prompt
    is rewritten and its tool call denied; the follow-up turn is denied before the model sees it. Then
    `fiskai session search` finds the session by agent and caller."""
    from fiskai_a2a.prompts_client import send_turn
    from fiskai_a2a.protocol import serve as wire
    from fiskai_agent.testing import MessagesServer, Turn, text, tool_use

    prompts = hook(tmp_path, "prompts", PROMPT_POLICY)
    deny = hook(tmp_path, "deny", DENY_LIST)
    config = write_config(
        tmp_path,
        f"    user_prompt_submit:\n      - command: [{prompts}]\n    pre_tool_use:\n      - command: [{deny}]\n",
        "system_prompt: You operate the cluster.\nllm: {model: claude-sonnet-4-6}\n"
        "expose: {agent: {a2a: {prompts: {workers: 1}}}}\n",
    )
    state = tmp_path / "runs"
    state.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    with MessagesServer() as model:
        model.add(Turn([tool_use("cluster_node_list", {"limit": 2}, id="toolu_list")]), Turn([text("one")]))
        env.update(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="test-key")
        argv = fiskai("-c", str(config), "serve", "--server", nats_server, "--state-dir", str(state))
        with process(argv, "Answering prompts over a2a", env=env):
            async with connect(NatsContext.from_url(nats_server)) as transport:
                streams = NatsStreams(transport)
                first: list[wire.ServeMessage] = []
                with anyio.fail_after(60):
                    answered = await send_turn(
                        streams, "fixturectl", prompt="card 4111: list nodes", sender="alice", on_message=first.append
                    )
                    ack = first[0]
                    assert isinstance(ack, wire.Ack) and ack.conversation_token
                    refused = await send_turn(
                        streams, "fixturectl", prompt="now the secret", token=ack.conversation_token, sender="alice"
                    )

    assert isinstance(answered, wire.ResultReply) and answered.text == "one"
    sent = json.dumps(model.requests[0].messages)
    assert "card ****: list nodes" in sent and "4111" not in sent
    (denial,) = model.requests[1].tool_results()
    assert "denied by policy: node listings are private" in str(denial["content"])
    assert len(model.requests) == 2  # the denied follow-up never reached the model
    assert not isinstance(refused, wire.ResultReply)
    assert "secrets are not discussed" in json.dumps(refused.model_dump(mode="json"))
    assert calls(tmp_path) == ""

    def cli(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            fiskai("session", "--state-dir", str(state), *args, "--json"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    (run,) = cli("search", "--identity", "fixturectl", "--caller", "alice")["runs"]
    assert (run["agent"], run["caller"], run["prompt"]) == ("fixturectl", "alice", "card ****: list nodes")
    assert cli("search", "--caller", "bob")["runs"] == []
    stats = cli("stats", run["run_id"])
    assert stats["agent"] == "fixturectl"
    assert all(response["time"] for response in stats["responses"])
    (listing,) = [tool for tool in stats["tools"] if tool["tool"] == "cluster_node_list"]
    assert (listing["timed"], listing["untimed"]) == (1, 0)
