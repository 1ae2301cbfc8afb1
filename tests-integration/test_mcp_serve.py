"""`fiskai mcp` as a user runs it: a real server process, the real mcp client over HTTP and over stdio.

The served application is fixturectl's captured model behind a recording fake binary, so every test can
check on disk whether a gated command ran.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from fiskai_core.testing import write_fake_app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fixturectl"
MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]
FIXTURECTL_TOOLS = [
    "types",
    "args_basic",
    "args_rest",
    "args_kv",
    "args_env",
    "args_choice",
    "args_typed",
    "cluster_node_list",
    "cluster_node_drain",
    "cluster_config_get",
    "cluster_config_set",
]


def write_config(tmp_path: Path, mcp_block: str = "{}") -> Path:
    """An agent.yaml like the fixturectl example, over a fake binary that records its calls."""
    app = write_fake_app(tmp_path, EXAMPLE / "fixturectl.introspect.json")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"identity: fixturectl\napplication_path: {app}\nexclude:\n  tools: ['^fail$']\nglobal_flags: [output]\n"
        f"harness:\n  confirm_tags: [impact:rw]\nexpose:\n  agent:\n    mcp: {mcp_block}\n",
        encoding="utf-8",
    )
    return config


def calls(tmp_path: Path) -> str:
    log = tmp_path / "fakeapp.calls"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def fiskai(*args: str) -> list[str]:
    return [sys.executable, "-m", "fiskai_cli", *args]


@dataclass
class Running:
    """A `fiskai mcp` process and what it has written to stderr so far."""

    process: subprocess.Popen[str]
    url: str = ""
    lines: list[str] = field(default_factory=list[str])
    ready: threading.Event = field(default_factory=threading.Event)
    drain: threading.Thread | None = None

    def stderr(self) -> str:
        return "".join(self.lines)


def _drain(running: Running) -> None:
    assert running.process.stderr is not None
    for line in running.process.stderr:
        running.lines.append(line)
        if line.startswith("Serving ") and " on http://" in line:
            running.url = line.split(" on ", 1)[1].split(" as ", 1)[0]
            running.ready.set()
    running.ready.set()


@pytest.fixture
def serve_http() -> Iterator[Any]:
    started: list[Running] = []

    def start(config: Path, *extra: str, env: dict[str, str] | None = None) -> Running:
        process = subprocess.Popen(
            fiskai("-c", str(config), "mcp", "--port", "0", *extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        running = Running(process)
        started.append(running)
        running.drain = threading.Thread(target=_drain, args=(running,), daemon=True)
        running.drain.start()
        assert running.ready.wait(30), "fiskai mcp did not report its address within 30 s"
        assert running.url, f"fiskai mcp did not start:\n{running.stderr()}"
        return running

    yield start
    for running in started:
        running.process.send_signal(signal.SIGINT)
        try:
            running.process.wait(10)
        except subprocess.TimeoutExpired:
            running.process.kill()
            running.process.wait()
        assert running.process.stdout is not None
        running.process.stdout.close()
        if running.drain is not None:
            running.drain.join(10)
        assert running.process.stderr is not None
        running.process.stderr.close()
        # A clean stop on SIGINT, said on stderr.
        assert running.stderr().endswith("MCP server stopped\n"), running.stderr()[-500:]


def _answer(action: Literal["accept", "decline", "cancel"], content: dict[str, Any] | None = None) -> Any:
    async def callback(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=action, content=content)

    return callback


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_http_lists_calls_and_asks_before_a_gated_command(
    tmp_path: Path, serve_http: Any, mode: Literal["auto", "legacy"]
) -> None:
    running = serve_http(write_config(tmp_path, "{instructions: 'Prefer read-only commands.'}"))
    assert running.url.startswith("http://127.0.0.1:")

    async with Client(running.url, mode=mode, elicitation_callback=_answer("accept", {"approve": True})) as client:
        assert client.instructions == "Prefer read-only commands."
        listed = [entry.name for entry in (await client.list_tools()).tools]
        listed_result = await client.call_tool("cluster_node_list", {"limit": 2})
        approved = await client.call_tool("cluster_config_set", {"key": "replicas", "value": "3"})
    async with Client(running.url, mode=mode, elicitation_callback=_answer("decline")) as client:
        declined = await client.call_tool("cluster_node_drain", {"node": "n9", "reason": "upgrade"})

    assert listed == FIXTURECTL_TOOLS
    assert json.loads(_text(listed_result))["command"] == "cluster node list --limit=2"
    assert approved.is_error is False
    assert declined.is_error is True
    assert "[replicas]" in calls(tmp_path)
    assert "[n9]" not in calls(tmp_path)
    channel = "input_required" if mode == "auto" else "elicitation"
    assert f"(gated by ai:confirm) via {channel}: the user approved" in running.stderr()


@pytest.mark.parametrize("mode", MODES)
async def test_http_is_served_at_slash_mcp_too(
    tmp_path: Path, serve_http: Any, mode: Literal["auto", "legacy"]
) -> None:
    """Clients that assume the SDKs' default path (the MCP Inspector 0.15 does) reach the same endpoint."""
    running = serve_http(write_config(tmp_path))

    async with Client(
        f"{running.url}/mcp", mode=mode, elicitation_callback=_answer("accept", {"approve": True})
    ) as client:
        listed = [entry.name for entry in (await client.list_tools()).tools]
        approved = await client.call_tool("cluster_config_set", {"key": "replicas", "value": "3"})

    assert listed == FIXTURECTL_TOOLS
    assert approved.is_error is False
    assert "[replicas]" in calls(tmp_path)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("block", ["{}", "{confirm_over_mcp: always}"], ids=["default", "always"])
async def test_http_refuses_a_client_that_cannot_elicit_by_default_and_under_always(
    tmp_path: Path, serve_http: Any, mode: Literal["auto", "legacy"], block: str
) -> None:
    """A client without elicitation, in either protocol era: a gated command is refused and never runs."""
    running = serve_http(write_config(tmp_path, block))

    async with Client(running.url, mode=mode) as client:
        refused = await client.call_tool("cluster_config_set", {"key": "k", "value": "v"})
        drained = await client.call_tool("cluster_node_drain", {"node": "n1", "reason": "r"})

    for result in (refused, drained):
        assert result.is_error is True
        assert "it does not support elicitation" in _text(result)
    assert calls(tmp_path) == ""
    assert "clients that do not are refused (confirm_over_mcp=always)" in running.stderr()
    assert "ungated" not in running.stderr()


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_lists_calls_and_asks_before_a_gated_command(
    tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    config = write_config(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=fiskai("-c", str(config), "mcp", "--stdio")[1:])
    errors = tmp_path / "stderr.txt"

    with errors.open("w", encoding="utf-8") as errlog:
        accept = _answer("accept", {"approve": True})
        async with Client(stdio_client(params, errlog=errlog), mode=mode, elicitation_callback=accept) as client:
            listed = [entry.name for entry in (await client.list_tools()).tools]
            read = await client.call_tool("cluster_config_get", {"key": "replicas"})
            approved = await client.call_tool("cluster_config_set", {"key": "replicas", "value": "3"})
        async with Client(
            stdio_client(params, errlog=errlog), mode=mode, elicitation_callback=_answer("cancel")
        ) as client:
            dismissed = await client.call_tool("cluster_node_drain", {"node": "n9", "reason": "upgrade"})

    assert listed == FIXTURECTL_TOOLS
    assert json.loads(_text(read))["exit_code"] == 0
    assert approved.is_error is False
    assert dismissed.is_error is True
    assert "[n9]" not in calls(tmp_path)
    logged = errors.read_text(encoding="utf-8")
    assert "Serving 11 tools over MCP on stdio as fixturectl/" in logged
    assert "(gated by ai:confirm) via " in logged


@pytest.mark.parametrize("path", ["", "/mcp"], ids=["root", "slash-mcp"])
def test_host_and_origin_are_checked_against_dns_rebinding(tmp_path: Path, serve_http: Any, path: str) -> None:
    running = serve_http(write_config(tmp_path))
    port = running.url.rsplit(":", 1)[1]
    url = running.url + path
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream"}

    good = httpx.post(url, json=body, headers=headers, timeout=10)
    rebound = httpx.post(url, json=body, headers={**headers, "Host": f"evil.example:{port}"}, timeout=10)
    foreign = httpx.post(url, json=body, headers={**headers, "Origin": "http://evil.example"}, timeout=10)
    local_origin = httpx.post(url, json=body, headers={**headers, "Origin": f"http://localhost:{port}"}, timeout=10)

    assert good.status_code == 200
    assert rebound.status_code == 421
    assert foreign.status_code == 403
    assert local_origin.status_code == 200


async def test_a_bearer_token_is_required_when_configured(tmp_path: Path, serve_http: Any) -> None:
    running = serve_http(
        write_config(tmp_path), "--token-env", "TEST_MCP_TOKEN", env={"TEST_MCP_TOKEN": "s3cret-token"}
    )

    async with httpx.AsyncClient(timeout=10) as raw:
        anonymous = await raw.post(running.url, json={})
        wrong = await raw.post(running.url, json={}, headers={"Authorization": "Bearer nope"})
        anonymous_at_mcp = await raw.post(f"{running.url}/mcp", json={})
    async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as http:
        async with Client(streamable_http_client(running.url, http_client=http)) as client:
            listed = await client.list_tools()
        async with Client(streamable_http_client(f"{running.url}/mcp", http_client=http)) as client:
            listed_at_mcp = await client.list_tools()

    assert anonymous.status_code == 401
    assert wrong.status_code == 401
    assert anonymous_at_mcp.status_code == 401
    assert len(listed.tools) == 11
    assert len(listed_at_mcp.tools) == 11
    assert "s3cret-token" not in running.stderr()
    assert '--header "Authorization: Bearer $TEST_MCP_TOKEN"' in running.stderr()


async def test_the_token_variable_never_reaches_a_command(tmp_path: Path, serve_http: Any) -> None:
    """A command's environment is scrubbed of the variable holding the bearer token."""
    script = tmp_path / "envapp"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--fisk-introspect" ]; then exec cat {EXAMPLE / "fixturectl.introspect.json"}; fi\n'
        'echo "token=[$TEST_MCP_TOKEN]"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    config = tmp_path / "agent.yaml"
    config.write_text(f"application_path: {script}\nexpose:\n  agent:\n    mcp: {{}}\n", encoding="utf-8")
    running = serve_http(config, "--token-env", "TEST_MCP_TOKEN", env={"TEST_MCP_TOKEN": "s3cret-token"})
    headers = {"Authorization": "Bearer s3cret-token"}

    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(running.url, http_client=http)) as client:
            output = json.loads(_text(await client.call_tool("cluster_config_get", {"key": "k"})))["output"]

    assert output.strip() == "token=[]"


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--address", "0.0.0.0"], {}, "needs a bearer token"),
        (["--address", "0.0.0.0", "--token-env", "UNSET_TOKEN_VAR"], {}, "UNSET_TOKEN_VAR is unset or empty"),
    ],
)
def test_a_non_loopback_bind_without_a_token_is_refused(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    config = write_config(tmp_path)
    done = subprocess.run(
        fiskai("-c", str(config), "mcp", *args), capture_output=True, text=True, timeout=60, env={**os.environ, **env}
    )

    assert done.returncode == 1
    assert message in done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


def test_a_configuration_without_an_mcp_block_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(f"application_path: {EXAMPLE / 'fixturectl'}\n", encoding="utf-8")

    done = subprocess.run(fiskai("-c", str(config), "mcp"), capture_output=True, text=True, timeout=60)

    assert done.returncode == 1
    assert "requires an expose.agent.mcp block" in done.stderr


def test_serving_never_imports_the_provider_sdk(tmp_path: Path) -> None:
    """`fiskai mcp --stdio` starts, serves until stdin closes, and never loads anthropic or the agent."""
    config = write_config(tmp_path)
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('LOADED=' + ','.join(sorted(m for m in ('anthropic', 'fiskai_agent', "
        "'fiskai_a2a', 'nats', 'apsw') if m in sys.modules)) + '\\n'))\n"
        f"sys.argv = ['fiskai', '-c', {str(config)!r}, 'mcp', '--stdio']\n"
        "from fiskai_cli._entry import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )

    assert "Serving 11 tools over MCP on stdio as fixturectl/" in done.stderr
    assert "LOADED=\n" in done.stderr
    assert done.stdout == ""


INSPECTOR_VERSION = "2.12.0"


def _inspector() -> list[str]:
    """The MCP Inspector CLI (installed by .ci/run when node is present), or a skip saying why not."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the MCP Inspector CLI needs Node 20 or later")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    if int(version.lstrip("v").split(".")[0] or 0) < 20:
        pytest.skip(f"node {version} is too old for the MCP Inspector CLI (needs 20 or later)")
    # Where .ci/run installs it by default; not under XDG_CACHE_HOME, which the suite points at a temp folder.
    folder = Path.home() / ".cache" / "fiskai" / f"mcp-inspector-{INSPECTOR_VERSION}"
    named = os.environ.get("FISKAI_MCP_INSPECTOR")
    binary = Path(named) if named else folder / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        pytest.skip(
            f"FISKAI_MCP_INSPECTOR names {binary}, which does not exist"
            if named
            else f"the MCP Inspector {INSPECTOR_VERSION} CLI is not at {binary}: set FISKAI_MCP_INSPECTOR to its "
            "mcp-inspector binary (.ci/run installs it and sets the variable)"
        )
    return [str(binary), "--cli"]


def _inspect(*args: str, exit_code: int = 0) -> dict[str, Any]:
    done = subprocess.run([*_inspector(), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == exit_code, done.stderr[-1000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_mcp_inspector_lists_and_calls_over_http(tmp_path: Path, serve_http: Any, era: str) -> None:
    running = serve_http(write_config(tmp_path))  # the default confirm_over_mcp
    target = [running.url, "--transport", "http", "--protocol-era", era]

    listed = _inspect(*target, "--method", "tools/list")
    listed_at_mcp = _inspect(f"{running.url}/mcp", *target[1:], "--method", "tools/list")
    called = _inspect(
        *target, "--method", "tools/call", "--tool-name", "cluster_config_get", "--tool-arg", "key=replicas"
    )
    gate = [
        "--method",
        "tools/call",
        "--tool-name",
        "cluster_config_set",
        "--tool-arg",
        "key=k",
        "--tool-arg",
        "value=v",
    ]
    gated = _inspect(*target, *gate, exit_code=5)  # 5: the Inspector's exit status for an isError result

    assert [tool["name"] for tool in listed["tools"]] == FIXTURECTL_TOOLS
    assert listed_at_mcp == listed
    assert called["isError"] is False
    assert json.loads(called["content"][0]["text"])["command"] == "cluster config get -- replicas"
    # The Inspector declares no elicitation: by default the gated command is refused and never runs.
    assert gated["isError"] is True
    assert "it does not support elicitation" in gated["content"][0]["text"]
    assert "[k]" not in calls(tmp_path)


def test_the_mcp_inspector_lists_and_calls_over_stdio(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    command = fiskai("-c", str(config), "mcp", "--stdio")

    listed = _inspect(*command, "--method", "tools/list")
    called = _inspect(*command, "--method", "tools/call", "--tool-name", "cluster_node_list", "--tool-arg", "limit=2")

    assert [tool["name"] for tool in listed["tools"]] == FIXTURECTL_TOOLS
    assert json.loads(called["content"][0]["text"])["command"] == "cluster node list --limit=2"


def _knowledge_config(tmp_path: Path, builtins: str) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Operations\n\n## Draining\n\nDrain a node before an upgrade.\n", encoding="utf-8")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"identity: ops\nharness:\n  knowledge:\n    enabled: true\n    directory: {tmp_path / 'store'}\n"
        f"    paths: [{docs}]\n    max_injected_tokens: 400\nexpose:\n  agent:\n    mcp: {{builtins: {builtins}}}\n",
        encoding="utf-8",
    )
    return config


@pytest.fixture
def indexed_knowledge(tmp_path: Path) -> Path:
    """A configuration serving only knowledge_search, its index built by `fiskai knowledge index`."""
    config = _knowledge_config(tmp_path, "[knowledge_search]")
    indexed = subprocess.run(
        fiskai("-c", str(config), "knowledge", "index"), capture_output=True, text=True, timeout=120
    )
    assert indexed.returncode == 0, indexed.stderr
    return config


@pytest.mark.parametrize("mode", MODES)
async def test_knowledge_search_is_served_read_only_when_allowlisted(
    tmp_path: Path, indexed_knowledge: Path, mode: Literal["auto", "legacy"]
) -> None:
    config = indexed_knowledge
    params = StdioServerParameters(command=sys.executable, args=fiskai("-c", str(config), "mcp", "--stdio")[1:])
    errors = tmp_path / "stderr.txt"

    with errors.open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            listed = [entry.name for entry in (await client.list_tools()).tools]
            first = await client.call_tool("knowledge_search", {"query": "drain upgrade"})
            again = await client.call_tool("knowledge_search", {"query": "drain upgrade"})

    logged = errors.read_text(encoding="utf-8")
    assert listed == ["knowledge_search", "knowledge_enumerate"]  # served together (reference 7.3)
    assert "note: no wrapped application configured" in logged
    assert first.is_error is False
    assert "ops.md#" in _text(first)
    assert "Drain a node before an upgrade." in _text(first)
    assert _text(again) == _text(first)  # no memory across calls: clients do not hide evidence from each other


def test_knowledge_enabled_but_not_allowlisted_is_not_served(tmp_path: Path) -> None:
    config = _knowledge_config(tmp_path, "[]")

    done = subprocess.run(fiskai("-c", str(config), "mcp", "--stdio"), capture_output=True, text=True, timeout=60)

    assert done.returncode == 1
    assert "note: knowledge is enabled but not exposed over MCP" in done.stderr
    assert "no tools available to expose over MCP" in done.stderr


class Terminal:
    """`fiskai mcp` on a pseudo-terminal of its own: what it prints there, and a way to type answers."""

    def __init__(self, argv: list[str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal, stdin, stdout and stderr
            os.execv(argv[0], argv)
        self.screen = ""
        self.exited = False
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                chunk = b""
            with self._changed:
                self.screen += chunk.decode(errors="replace")
                self._changed.notify_all()
            if not chunk:
                return

    def wait_for(self, text: str, start: int = 0) -> int:
        with self._changed:
            assert self._changed.wait_for(lambda: text in self.screen[start:], timeout=30), self.screen[-2000:]
            return self.screen.index(text, start) + len(text)

    def type(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())

    def press(self, keys: str) -> None:
        """Keys without Enter: they wait in the terminal's line editor."""
        os.write(self.fd, keys.encode())

    def interrupt(self) -> bool:
        """Ctrl-C, as the operator stops the server; whether it exited within 30 s (else it is killed)."""
        if self.exited:
            return True
        watch = os.pidfd_open(self.pid)
        try:
            os.kill(self.pid, signal.SIGINT)
            stopped = bool(select.select([watch], [], [], 30)[0])
        finally:
            os.close(watch)
        if not stopped:
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self.exited = True
        return stopped

    def stop(self) -> None:
        stopped = self.interrupt()
        os.close(self.fd)
        assert stopped, f"fiskai mcp did not stop within 30 s of SIGINT: {self.screen[-1000:]}"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    session = Terminal(
        [
            sys.executable,
            "-m",
            "fiskai_cli",
            "-c",
            str(write_config(tmp_path)),
            "mcp",
            "--port",
            "0",
            "--approve-on-tty",
        ]
    )
    yield session
    session.stop()


async def test_approve_on_tty_asks_the_operator_not_the_client(tmp_path: Path, terminal: Terminal) -> None:
    """Steps: 1. a gated call waits for the terminal; 2. "2" runs it once; 3. "1" refuses the next."""
    start = terminal.wait_for("Serving 11 tools over MCP on http://")
    url = terminal.screen[start - len("http://") :].split(" as ", 1)[0]
    terminal.wait_for("each run is approved on this terminal (--approve-on-tty)")
    answers = iter(["2", "1"])
    results: list[types.CallToolResult] = []
    asked_client: list[str] = []

    async def client_answer(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked_client.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with Client(url, mode="legacy", elicitation_callback=client_answer) as client:
        seen = 0
        for key in ("first", "second"):
            async with anyio.create_task_group() as tasks:

                async def call(key: str = key) -> None:
                    results.append(await client.call_tool("cluster_config_set", {"key": key, "value": "v"}))

                tasks.start_soon(call)
                seen = await anyio.to_thread.run_sync(terminal.wait_for, "Choose 1-4 [1]: ", seen)
                terminal.type(next(answers))

    assert asked_client == []
    assert [result.is_error for result in results] == [False, True]
    assert "[first]" in calls(tmp_path)
    assert "[second]" not in calls(tmp_path)
    terminal.wait_for("via operator: Not approved")


@pytest.mark.parametrize("mode", MODES)
async def test_a_withdrawn_question_is_announced_and_its_typed_ahead_answer_never_reaches_the_next(
    tmp_path: Path, terminal: Terminal, mode: Literal["auto", "legacy"]
) -> None:
    """The attack from issue 36: A asks, B queues, the operator types "2" for A, A goes away, Enter.

    Steps: 1. client A asks to drain n1 and its question is shown; 2. client B asks to drain n666 (queued);
    3. the operator types "2" (no Enter yet); 4. A disconnects; 5. the withdrawal of A's question is
    announced by its command line and B's question is shown; 6. the operator presses Enter: B is refused
    (an empty answer is "no"), because the "2" was typed for A's question.
    """
    start = terminal.wait_for("Serving 11 tools over MCP on http://")
    url = terminal.screen[start - len("http://") :].split(" as ", 1)[0]
    seen = terminal.wait_for("each run is approved on this terminal (--approve-on-tty)")
    results: dict[str, types.CallToolResult] = {}
    leave = anyio.Event()

    async def client_a() -> None:
        async with Client(url, mode=mode) as client, anyio.create_task_group() as tasks:

            async def ask() -> None:
                await client.call_tool("cluster_node_drain", {"node": "n1", "reason": "benign"})

            tasks.start_soon(ask)
            await leave.wait()
            tasks.cancel_scope.cancel()  # A goes away mid-question

    async def client_b() -> None:
        async with Client(url, mode=mode) as client:
            results["b"] = await client.call_tool("cluster_node_drain", {"node": "n666", "reason": "EVIL"})

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(client_a)
            seen = await anyio.to_thread.run_sync(terminal.wait_for, "Choose 1-4 [1]: ", seen)
            assert "--reason=benign -- n1" in terminal.screen
            tasks.start_soon(client_b)
            seen = await anyio.to_thread.run_sync(terminal.wait_for, 'n666" (gated by ai:confirm): asking', seen)
            terminal.press("2")
            seen = await anyio.to_thread.run_sync(terminal.wait_for, "2", seen)  # echoed: in the line editor
            leave.set()
            seen = await anyio.to_thread.run_sync(terminal.wait_for, "Run this command? (question 2)", seen)
            seen = await anyio.to_thread.run_sync(terminal.wait_for, "Choose 1-4 [1]: ", seen)
            terminal.type("")

    assert results["b"].is_error is True
    assert "the operator declined" in _text(results["b"])
    assert calls(tmp_path) == ""
    screen = terminal.screen.replace("\r\n", "\n")
    withdrawal = next(line for line in screen.splitlines() if line.startswith("question 1 withdrawn: "))
    assert 'cluster node drain --reason=benign -- n1" was not approved' in withdrawal
    assert screen.index(withdrawal) < screen.index("--reason=EVIL -- n666\nRun this command? (question 2)")
    assert "Traceback" not in screen  # a client going away mid-call is one log line, never a traceback


async def test_ctrl_c_stops_the_server_while_a_question_waits(tmp_path: Path, terminal: Terminal) -> None:
    """A question on the terminal holds no thread that keeps the process alive after SIGINT."""
    start = terminal.wait_for("Serving 11 tools over MCP on http://")
    url = terminal.screen[start - len("http://") :].split(" as ", 1)[0]

    ended: list[str] = []

    with anyio.fail_after(60):
        async with Client(url, mode="legacy") as client, anyio.create_task_group() as tasks:

            async def ask() -> None:
                try:
                    await client.call_tool("cluster_node_drain", {"node": "n1", "reason": "r"})
                except MCPError as err:  # the server went away mid-call
                    ended.append(str(err))

            tasks.start_soon(ask)
            await anyio.to_thread.run_sync(terminal.wait_for, "Choose 1-4 [1]: ")
            assert await anyio.to_thread.run_sync(terminal.interrupt)
            tasks.cancel_scope.cancel()

    assert "MCP server stopped" in terminal.screen
    assert calls(tmp_path) == ""


def test_approve_on_tty_without_a_terminal_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        fiskai("-c", str(write_config(tmp_path)), "mcp", "--stdio", "--approve-on-tty"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,  # no controlling terminal, as under a client that spawns the server
    )

    assert done.returncode == 1
    assert "--approve-on-tty needs a terminal to ask on, and /dev/tty cannot be opened" in done.stderr


async def test_memory_and_human_in_the_loop_tools_are_never_served(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    text = config.read_text(encoding="utf-8").replace(
        "harness:\n", "harness:\n  memory: {enabled: true}\n  human_in_the_loop: {enabled: true}\n"
    )
    config.write_text(text, encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=fiskai("-c", str(config), "mcp", "--stdio")[1:])
    errors = tmp_path / "stderr.txt"

    with errors.open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = [entry.name for entry in (await client.list_tools()).tools]

    logged = errors.read_text(encoding="utf-8")
    assert listed == FIXTURECTL_TOOLS
    assert "warning: human_in_the_loop has no effect over MCP" in logged
    assert "warning: memory has no effect over MCP" in logged
