"""The `mcp_clients` connection set against real servers: npm reference servers, `fiskai mcp`, broken ones.

`@modelcontextprotocol/server-everything` over stdio and streamable HTTP (installed by .ci/run; skipped
with one line when absent), one of fiskai's own `fiskai mcp` servers as an HTTP peer (its gated tools
elicit approval, which the client relays to the operator's prompter), and servers that hang in the
handshake or in listing (each must fail within its timeout, naming the server). A token passed by
`${VAR}` in a URL and a header must never appear in anything fiskai prints or writes.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from fiskai_agent.testing import MessagesServer, RunProcesses, Turn, text, tool_use
from fiskai_cli import _wiring as wiring
from fiskai_core.calls import ToolCall, prepare_call, run_call
from fiskai_core.config import McpClientEntry, Mode, parse_config
from fiskai_core.prompter import DenyPrompter
from fiskai_core.testing import ScriptedPrompter, write_fake_app
from fiskai_mcp.client import McpServerError, open_mcp_clients

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_VERSION = "2026.8.31"
TOKEN = "tok-3f9a61c2e8b04d7a"
_RUNS = RunProcesses()


def reference_bin() -> Path:
    """Where .ci/run installed the MCP reference servers, or a one-line skip."""
    named = os.environ.get("FISKAI_MCP_REFERENCE_SERVERS")
    default = Path.home() / ".cache" / "fiskai" / f"mcp-reference-servers-{REFERENCE_VERSION}" / "node_modules" / ".bin"
    folder = Path(named) if named else default
    if not (folder / "mcp-server-everything").exists():
        pytest.skip(f"the MCP reference servers are not at {folder}: .ci/run installs them (needs npm)")
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def entries(yaml_text: str) -> list[McpClientEntry]:
    return parse_config(yaml_text, Mode.MCP).mcp_client_entries


def wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Until something accepts connections on `port`; fails with the server's log if it exits first."""
    for _ in range(600):
        if proc.poll() is not None:
            pytest.fail(f"the server exited: {log.read_text(encoding='utf-8', errors='replace')[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail(f"nothing listens on port {port}: {log.read_text(encoding='utf-8', errors='replace')[-2000:]}")


@contextmanager
def serving(args: list[str], port: int, log: Path, env: dict[str, str] | None = None) -> Generator[None]:
    with log.open("wb") as sink:
        proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
        try:
            wait_listening(port, proc, log)
            yield
        finally:
            proc.terminate()
            proc.wait(10)


@pytest.fixture
def everything_http(tmp_path: Path) -> Iterator[str]:
    """`mcp-server-everything streamableHttp` on a free loopback port; its /mcp URL."""
    binaries = reference_bin()
    port = free_port()
    args = [str(binaries / "mcp-server-everything"), "streamableHttp"]
    with serving(args, port, tmp_path / "everything.log", env={**os.environ, "PORT": str(port)}):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def fiskai_mcp_peer(tmp_path: Path) -> Iterator[str]:
    """`fiskai mcp` serving a recording fake of fixturectl over HTTP; its URL."""
    (tmp_path / "peer").mkdir()
    app = write_fake_app(tmp_path / "peer", ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json")
    config = tmp_path / "peer" / "agent.yaml"
    config.write_text(
        f"identity: fixturectl\napplication_path: {app}\nharness:\n  confirm_tags: [impact:rw]\n"
        "expose:\n  agent:\n    mcp: {}\n",
        encoding="utf-8",
    )
    port = free_port()
    args = [sys.executable, "-m", "fiskai_cli", "-c", str(config), "mcp", "--port", str(port)]
    with serving(args, port, tmp_path / "peer.log"):
        yield f"http://127.0.0.1:{port}/mcp"


async def test_everything_server_over_stdio_and_http_imports_the_same_tools_and_calls_echo(
    everything_http: str,
) -> None:
    binaries = reference_bin()
    configured = entries(
        f"mcp_clients:\n  - {{name: local, command: {binaries / 'mcp-server-everything'}, args: [stdio]}}\n"
        f"  - {{name: remote, url: '{everything_http}'}}\n"
    )
    with anyio.fail_after(90):
        async with open_mcp_clients(configured, root=None) as clients:
            local, remote = clients.reports
            assert (local.transport, remote.transport) == ("stdio", "streamable HTTP")
            assert local.reached and remote.reached
            assert "local_echo" in local.imported
            assert {n.removeprefix("local_") for n in local.imported} >= {"echo", "get-sum"}
            assert {n.removeprefix("remote_") for n in remote.imported} >= {"echo", "get-sum"}
            by_name = {tool.name: tool for tool in clients.tools}
            for name in ("local_echo", "remote_echo"):
                call = prepare_call(by_name[name], '{"message": "over the wire"}')
                assert isinstance(call, ToolCall)
                assert call.gate_tag is None  # echo says readOnlyHint: true
                result = await run_call(call)
                assert not result.is_error
                assert "over the wire" in result.output
            total = prepare_call(by_name["remote_get-sum"], '{"a": 2, "b": 40}')
            assert isinstance(total, ToolCall)
            assert "42" in (await run_call(total)).output


async def test_fiskai_mcp_peer_tools_import_and_its_elicitation_is_relayed_to_the_prompter(
    fiskai_mcp_peer: str, tmp_path: Path
) -> None:
    """Steps:
    1. An ungated peer tool runs.
    2. A gated peer tool elicits approval: with no terminal the relay declines and the command never runs.
    3. With a prompter that says yes, the same call runs on the peer.
    """
    configured = entries(f"mcp_clients:\n  - {{name: fixturectl, alias: fx, url: '{fiskai_mcp_peer}'}}\n")
    log = tmp_path / "peer" / "fakeapp.calls"
    for prompter, ran in ((DenyPrompter(), False), (ScriptedPrompter.of(True), True)):
        with anyio.fail_after(60):
            async with open_mcp_clients(configured, root=None, prompter=prompter) as clients:
                tools = {tool.name: tool for tool in clients.tools}
                listed = prepare_call(tools["fx_cluster_node_list"], "{}")
                assert isinstance(listed, ToolCall)
                assert not (await run_call(listed)).is_error
                drain = prepare_call(tools["fx_cluster_node_drain"], '{"node": "n1", "reason": "disk"}')
                assert isinstance(drain, ToolCall)
                result = await run_call(drain)
        calls = log.read_text(encoding="utf-8") if log.exists() else ""
        assert ("drain" in calls) is ran, (result, calls)
    assert isinstance(prompter, ScriptedPrompter)
    assert any('MCP server "fixturectl" asks' in str(q) for q in prompter.asked)


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie left for a non-reaping init counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# The SDK's graceful close waited 2 s more before it signalled a hung child (failing at ~3 s for 1 s):
# the bound is the timeout plus 1 s for a loaded 2-core machine.
MARGIN = 1.0

_HANG_IN_HANDSHAKE = """
import os, subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[1], "w").write(f"{os.getpid()} {grandchild.pid}")
time.sleep(600)
"""


async def test_server_that_hangs_in_the_handshake_fails_within_its_timeout_naming_the_server(tmp_path: Path) -> None:
    """The failure comes within the timeout plus the margin, and the child and its own child are gone."""
    script, pids = tmp_path / "hang.py", tmp_path / "pids"
    script.write_text(_HANG_IN_HANDSHAKE, encoding="utf-8")
    configured = entries(
        f"mcp_clients:\n  - name: sleepy\n    command: {sys.executable}\n    args: [{script}, {pids}]\n"
        "    timeout: 1s\n"
    )
    began = time.monotonic()
    with anyio.fail_after(20), pytest.raises(McpServerError) as caught:
        async with open_mcp_clients(configured, root=None):
            pass
    elapsed = time.monotonic() - began
    assert 'MCP server "sleepy"' in str(caught.value)
    assert "connecting: no answer within 1s (timeout)" in str(caught.value)
    assert elapsed < 1 + MARGIN, elapsed
    started = [int(pid) for pid in pids.read_text(encoding="utf-8").split()]
    assert len(started) == 2
    assert not [pid for pid in started if alive(pid)]


_HANG_IN_LIST = """
import os
import sys
import time

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server


async def list_tools(ctx, params):
    with open(sys.argv[1], "w") as out:
        out.write(f"{os.getpid()} {time.time()}")
    await anyio.sleep(3600)


server = Server("counter", on_list_tools=list_tools)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


async def test_server_that_hangs_listing_tools_fails_within_its_timeout_naming_the_server(tmp_path: Path) -> None:
    script, listed = tmp_path / "hang_list.py", tmp_path / "listed"
    script.write_text(_HANG_IN_LIST, encoding="utf-8")
    configured = entries(
        f"mcp_clients:\n  - name: counter\n    command: {sys.executable}\n    args: [{script}, {listed}]\n"
        "    timeout: 8s\n"
    )
    # 8 s: long enough for a loaded machine to start Python and the SDK, so the hang is in the listing.
    with anyio.fail_after(60), pytest.raises(McpServerError) as caught:
        async with open_mcp_clients(configured, root=None):
            pass
    ended = time.time()
    assert 'MCP server "counter"' in str(caught.value)
    assert "listing tools: no answer within 8s (timeout)" in str(caught.value)
    pid, asked = listed.read_text(encoding="utf-8").split()
    # From the server receiving the list request to the failure: the timeout plus the margin, not 2 s more.
    assert ended - float(asked) < 8 + MARGIN, ended - float(asked)
    assert not alive(int(pid))


async def test_http_server_that_never_answers_fails_within_its_timeout_with_its_url_redacted() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    configured = entries(
        f"mcp_clients:\n  - name: silent\n    url: 'http://127.0.0.1:{port}/mcp?apiKey=${{SILENT_TOKEN}}'\n"
        "    timeout: 1s\n"
    )
    os.environ["SILENT_TOKEN"] = TOKEN
    try:
        with anyio.fail_after(20), pytest.raises(McpServerError) as caught:
            async with open_mcp_clients(configured, root=None):
                pass
    finally:
        del os.environ["SILENT_TOKEN"]
        listener.close()
    message = str(caught.value)
    assert f'MCP server "silent" (http://127.0.0.1:{port}/mcp?apiKey=REDACTED)' in message
    assert "no answer within 1s (timeout)" in message
    assert TOKEN not in message


def test_a_token_passed_by_reference_never_appears_in_output_journal_or_trace(
    fiskai_mcp_peer: str, tmp_path: Path
) -> None:
    """`fiskai info`, `tools call`, a verbose checkpointed run and a failed connect: grep all of it for the token."""
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    env.update(XDG_STATE_HOME=str(state), NO_COLOR="1", ANTHROPIC_API_KEY="test-key", PEER_TOKEN=TOKEN)
    config = tmp_path / "agent.yaml"
    header = "{Authorization: 'Bearer ${PEER_TOKEN}', X-Tenant: '${file:tenant}'}"
    (tmp_path / "tenant").write_text(TOKEN + "-tenant\n", encoding="utf-8")
    config.write_text(
        "identity: tokens\nsystem_prompt: You list nodes.\nllm: {model: claude-test}\n"
        f"mcp_clients:\n  - name: peer\n    url: '{fiskai_mcp_peer}?apiKey=${{PEER_TOKEN}}'\n    headers: {header}\n",
        encoding="utf-8",
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        config.read_text(encoding="utf-8").replace(fiskai_mcp_peer, f"http://127.0.0.1:{free_port()}/mcp"),
        encoding="utf-8",
    )
    state.mkdir()
    seen: list[str] = []

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "fiskai_cli", *args], env=env, capture_output=True, text=True, timeout=120
        )
        seen.extend([done.stdout, done.stderr])
        return done

    info = cli("-c", str(config), "info", "--format", "json")
    assert info.returncode == 0, info.stderr
    assert "apiKey=REDACTED" in info.stdout
    assert cli("-c", str(config), "tools", "call", "peer_cluster_node_list", "{}").returncode == 0
    failed = cli("-c", str(broken), "tools", "list")
    assert failed.returncode == 1
    assert 'MCP server "peer"' in failed.stderr
    assert cli("-c", str(broken), "info").returncode == 0
    script = [Turn([tool_use("peer_cluster_node_list", {}, id="toolu_1")]), Turn([text("listed")])]
    with MessagesServer(script) as server:
        proc = _RUNS.start(
            [
                "-c",
                str(config),
                "run",
                "-v",
                "--trace",
                str(state / "trace.jsonl"),
                "--checkpoint",
                "--name",
                "tokens",
                "list",
            ],
            env,
            server,
            cwd=tmp_path,
        )
        out, err = proc.communicate(timeout=120)
        seen.extend([out, err, *(str(r.body) for r in server.requests)])
    _RUNS.reap()
    assert proc.returncode == 0, err
    written = [p.read_text(encoding="utf-8", errors="replace") for p in state.rglob("*") if p.is_file()]
    assert (state / "trace.jsonl").exists() and len(written) >= 2, "the run wrote no trace or no journal"
    for chunk in [*seen, *written]:
        assert TOKEN not in chunk


async def test_server_faces_never_connect_or_serve_imported_tools(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json")
    config = tmp_path / "agent.yaml"
    # A command that cannot start: a face that tried to connect would fail.
    config.write_text(
        f"identity: fixturectl\napplication_path: {app}\nexpose:\n  agent:\n    mcp: {{}}\n"
        "mcp_clients:\n  - {name: never, command: /nonexistent/mcp-server}\n",
        encoding="utf-8",
    )
    settings = wiring.Settings(
        config=parse_config(config.read_text(encoding="utf-8"), Mode.MCP), path=config, folder=tmp_path
    )
    for face in ("mcp", "a2a"):
        async with wiring.open_harness(settings, face) as harness:
            assert harness.mcp is None
            assert all(entry.kind != "mcp" for entry in harness.tools)
            assert "cluster_node_list" in harness.tools.names()


@pytest.mark.parametrize("page", ["README.md", "docs/agent-yaml.md"])
def test_the_documented_mcp_clients_example_loads_as_written(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    start = text.index("```yaml\nmcp_clients:") + len("```yaml\n")
    example = text[start : text.index("```", start)]
    configured = parse_config(example, Mode.MCP).mcp_client_entries
    assert [(e.name, e.effective_alias, e.transport) for e in configured][:2] == [
        ("filesystem", "fs", "stdio"),
        ("docs", "docs", "http"),
    ]


def test_info_reports_every_server_best_effort_and_lists_imported_tools_by_alias(tmp_path: Path) -> None:
    binaries = reference_bin()
    config = tmp_path / "agent.yaml"
    config.write_text(
        "identity: files\nmcp_clients:\n"
        f"  - name: filesystem\n    alias: fs\n    command: {binaries / 'mcp-server-filesystem'}\n    args: [{tmp_path}]\n"
        "    exclude: {tools: [media]}\n"
        "  - {name: broken, command: /nonexistent/mcp-server}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    done = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "info"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("MCP clients", 1)[1]
    assert f"filesystem (alias fs), stdio: {binaries / 'mcp-server-filesystem'} {tmp_path}" in section
    assert "kept by filters" in section
    assert "fs_read_text_file" in section
    assert "fs_read_media_file" not in done.stdout
    assert 'unavailable: MCP server "broken" (/nonexistent/mcp-server): connecting:' in section
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("fs_write_file "))
    assert row.split()[1:4] == ["mcp", "fs", "yes"]
    assert 'warning: broken is unavailable: MCP server "broken"' in done.stderr


async def test_an_imported_name_a_local_tool_holds_fails_a_strict_import_naming_both() -> None:
    binaries = reference_bin()
    configured = entries(
        f"mcp_clients:\n  - {{name: local, command: {binaries / 'mcp-server-everything'}, args: [stdio]}}\n"
    )
    with anyio.fail_after(60), pytest.raises(McpServerError) as caught:
        async with open_mcp_clients(configured, root=None, taken=("local_echo",)):
            pass
    assert str(caught.value).startswith('imported tool name collision: "local_echo" (MCP server "local")')
    with anyio.fail_after(60):
        async with open_mcp_clients(configured, root=None, taken=("local_echo",), strict=False) as clients:
            assert clients.collisions == ['"local_echo" (MCP server "local")']
            assert "local_echo" not in [tool.name for tool in clients.tools]
