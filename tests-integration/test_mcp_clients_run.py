"""`mcp_clients` in `fiskai run` as an operator runs it: a scripted model, real MCP servers, the real CLI.

The filesystem reference server (`@modelcontextprotocol/server-filesystem`, from the npm registry,
installed by .ci/run) serves a temporary folder over stdio; the run reads through it, a write is denied
with no terminal and never reaches it, and a rule saved with `fiskai approvals add` lets the next write
through. A crash between a call's intent and its result is tested against a small Python MCP server
written here (it logs every call and can block one), since a real server answers too fast to be killed
mid-call. Each server's own stderr is its business; the assertions read the journal, the files, the
recorded model requests and fiskai's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from fiskai_agent.testing import MessagesServer, RecordedRequest, RunProcesses, Turn, text, tool_use
from fiskai_runstate import FileJournalStore, decode_record

REFERENCE_VERSION = "2026.8.31"
_RUNS = RunProcesses()


def reference_bin() -> Path:
    """Where .ci/run installed the MCP reference servers, or a one-line skip."""
    named = os.environ.get("FISKAI_MCP_REFERENCE_SERVERS")
    default = Path.home() / ".cache" / "fiskai" / f"mcp-reference-servers-{REFERENCE_VERSION}" / "node_modules" / ".bin"
    folder = Path(named) if named else default
    if not (folder / "mcp-server-filesystem").exists():
        pytest.skip(f"the MCP reference servers are not at {folder}: .ci/run installs them (needs npm)")
    return folder


@pytest.fixture(autouse=True)
def _reap() -> Iterator[None]:
    yield
    _RUNS.reap()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", ANTHROPIC_API_KEY="test-key")
    return base


def run(args: Sequence[str], env: Mapping[str, str], server: MessagesServer, cwd: Path) -> tuple[int, str, str]:
    proc = _RUNS.start(args, env, server, cwd=cwd)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def fiskai(args: Sequence[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def answer_with_results(request: RecordedRequest) -> Turn:
    results = request.tool_results()
    return Turn([text(json.dumps([r["content"] for r in results]))])


def test_run_reads_through_the_filesystem_server_denies_a_write_and_a_saved_rule_lets_the_next_through(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Steps:
    1. A scripted run reads notes/a.txt through fs_read_text_file, then asks fs_write_file for notes/b.txt.
    2. With no terminal the write is denied: the model is told so and b.txt does not exist.
    3. `fiskai approvals add fs_write_file --path=<notes>/* ...` saves a rule.
    4. The same write in a second run goes through the rule and the server writes the file.
    """
    binaries = reference_bin()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("the launch is on Tuesday\n", encoding="utf-8")
    config = tmp_path / "agent.yaml"
    config.write_text(
        "identity: files\nsystem_prompt: You manage notes.\nllm: {model: claude-test}\n"
        "mcp_clients:\n"
        f"  - name: filesystem\n    alias: fs\n    command: {binaries / 'mcp-server-filesystem'}\n    args: [{notes}]\n"
        "    include: {tools: ['^read_text_file$', '^write_file$']}\n",
        encoding="utf-8",
    )
    write = {"path": str(notes / "b.txt"), "content": "moved to Wednesday"}
    script = [
        Turn([tool_use("fs_read_text_file", {"path": str(notes / "a.txt")}, id="toolu_read")]),
        Turn([tool_use("fs_write_file", write, id="toolu_write")]),
    ]
    with MessagesServer(script, responder=answer_with_results) as server:
        code, _, err = run(["-c", str(config), "run", "update the notes"], env, server, tmp_path)
        read_result = server.requests[1].tool_results()[0]
        write_result = server.requests[2].tool_results()[0]
    assert code == 0, err
    assert "the launch is on Tuesday" in json.dumps(read_result["content"])
    assert '"allowed":false' in json.dumps(write_result["content"]).replace("\\", "")
    assert "no interactive terminal" in json.dumps(write_result["content"])
    assert not (notes / "b.txt").exists()
    assert f"-> fs_read_text_file --path={notes}/a.txt" in err, err
    assert '"fs_write_file" was not run: no interactive terminal' in err

    added = fiskai(["-c", str(config), "approvals", "add", "fs_write_file", f"--path={notes}/*", "..."], env)
    assert added.returncode == 0, added.stderr
    assert "added " in added.stdout
    checked = fiskai(["-c", str(config), "approvals", "check", "fs_write_file", json.dumps(write)], env)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.splitlines()[0] == f"fs_write_file --path={notes}/b.txt '--content=moved to Wednesday'"
    assert "approved by " in checked.stdout

    with MessagesServer(
        [Turn([tool_use("fs_write_file", write, id="toolu_write")])], responder=answer_with_results
    ) as server:
        code, _, err = run(["-c", str(config), "run", "update the notes"], env, server, tmp_path)
        result = server.requests[1].tool_results()[0]
    assert code == 0, err
    assert "Successfully wrote" in json.dumps(result["content"])
    assert (notes / "b.txt").read_text(encoding="utf-8") == "moved to Wednesday"
    assert "approved by rule" in err


_COUNTER_SERVER = """
import os
import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

HERE = os.environ["TEST_SERVER_DIR"]


def _tool(name, idempotent):
    return types.Tool(
        name=name, description=f"{name} a counter",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        annotations=types.ToolAnnotations(read_only_hint=False, idempotent_hint=idempotent),
    )


async def list_tools(ctx, params):
    if os.path.exists(os.path.join(HERE, "hang-list")):
        await anyio.sleep(3600)
    return types.ListToolsResult(tools=[_tool("bump", False), _tool("peek", True)])


async def call_tool(ctx, params):
    with open(os.path.join(HERE, "calls.log"), "a", encoding="utf-8") as log:
        log.write(params.name + "\\n")
    block = os.path.join(HERE, "block-once")
    if os.path.exists(block):
        os.unlink(block)
        await anyio.sleep(3600)
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.name + " done")])


server = Server("counter", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


def write_counter_server(folder: Path) -> Path:
    """The test's own stdio MCP server: `bump` (not idempotent) and `peek` (idempotentHint), both logged."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "counter_server.py"
    script.write_text(_COUNTER_SERVER, encoding="utf-8")
    return script


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def _kinds(env: Mapping[str, str], run_id: str) -> list[str]:
    path = FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs").journal_path(run_id)
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")[:-1]
    return [decode_record(line, run_id=run_id, line_no=n).kind for n, line in enumerate(lines, 1)]


@pytest.mark.parametrize(("tool", "resent"), [("counter_bump", False), ("counter_peek", True)])
def test_crash_between_intent_and_result_resends_only_an_idempotent_imported_call(
    tmp_path: Path, env: dict[str, str], tool: str, resent: bool
) -> None:
    """Steps:
    1. A checkpointed run calls the imported tool; the server logs the call and blocks.
    2. The CLI is SIGKILLed with the intent journaled and no result.
    3. `--resume` with no terminal: `bump` (no idempotentHint) is not sent again and the model is told;
       `peek` (idempotentHint: true) is sent again.
    """
    server_dir = tmp_path / "server"
    script = write_counter_server(server_dir)
    (server_dir / "block-once").touch()
    config = tmp_path / "agent.yaml"
    config.write_text(
        "identity: counter\nsystem_prompt: You count.\nllm: {model: claude-test}\n"
        f"mcp_clients:\n  - name: counter\n    command: {sys.executable}\n    args: [{script}]\n"
        f"    env: {{TEST_SERVER_DIR: {server_dir}}}\n    confirm: none\n",
        encoding="utf-8",
    )
    calls = server_dir / "calls.log"
    run_id = "mcp-crash"
    with MessagesServer([Turn([tool_use(tool, {"n": 1}, id="toolu_1")])], responder=answer_with_results) as server:
        proc = _RUNS.start(
            ["-c", str(config), "run", "--checkpoint", "--name", run_id, "count"], env, server, cwd=tmp_path
        )
        wait_until(lambda: "tool_intent" in _kinds(env, run_id) and calls.exists(), "the intent and the call")
        assert "tool_result" not in _kinds(env, run_id)
        proc.kill()
        proc.communicate(timeout=30)
        code, _, err = run(["-c", str(config), "run", "--resume", run_id], env, server, tmp_path)
        (result,) = server.requests[-1].tool_results()
    assert code == 0, err
    logged = calls.read_text(encoding="utf-8").splitlines()
    bare = tool.removeprefix("counter_")
    if resent:
        assert logged == [bare, bare]
        assert f"{bare} done" in json.dumps(result["content"])
    else:
        assert logged == [bare]
        assert "may already have taken effect" in json.dumps(result["content"])
    assert _kinds(env, run_id)[-1] == "terminal"


_WATCHED_SERVER = """
import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

grown = False


def _tool(name):
    return types.Tool(
        name=name, description=name + " tool", input_schema={"type": "object"},
        annotations=types.ToolAnnotations(read_only_hint=True),
    )


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[_tool("grow"), _tool("ping")] + ([_tool("extra")] if grown else []))


async def call_tool(ctx, params):
    global grown
    if params.name == "grow":
        grown = True
        await ctx.session.send_tool_list_changed()
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.name + " done")])


server = Server("watched", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


def test_watch_tools_swaps_a_servers_new_tools_in_before_the_next_model_call(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Steps:
    1. The model calls w_grow; the server adds `extra` and says its tool list changed.
    2. Until the new set arrives the model pings (a batch keeps the set it was dispatched with).
    3. A request then offers w_extra, the model calls it, and it runs; the operator was told of the change.
    """
    script = tmp_path / "watched_server.py"
    script.write_text(_WATCHED_SERVER, encoding="utf-8")
    config = tmp_path / "agent.yaml"
    config.write_text(
        "identity: watched\nsystem_prompt: You grow.\nllm: {model: claude-test, budget: {max_iterations: 40}}\n"
        f"mcp_clients:\n  - name: w\n    command: {sys.executable}\n    args: [{script}]\n    watch_tools: true\n",
        encoding="utf-8",
    )

    def respond(request: RecordedRequest) -> Turn:
        results = json.dumps([r["content"] for r in request.tool_results()])
        if "extra done" in results:
            return Turn([text("grown")])
        if "w_extra" in request.loaded_tool_names:
            return Turn([tool_use("w_extra", {}, id=f"toolu_x{len(request.messages)}")])
        return Turn([tool_use("w_ping", {}, id=f"toolu_p{len(request.messages)}")])

    with MessagesServer([Turn([tool_use("w_grow", {}, id="toolu_grow")])], responder=respond) as server:
        code, out, err = run(["-c", str(config), "run", "grow"], env, server, tmp_path)
        first_tools = server.requests[0].loaded_tool_names
        last_tools = server.requests[-1].loaded_tool_names
    assert code == 0, err
    assert out == "grown\n"
    assert "w_extra" not in first_tools
    assert "w_extra" in last_tools
    assert 'MCP server "w" changed its tools: added w_extra' in err
