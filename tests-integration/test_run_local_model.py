"""`fiskai run` with a local model over a 200+-tool CLI: the client-side tool finder end to end (issue 17).

The real CLI in a subprocess, the real SDK, and the scripted Messages server in local-server mode
(it refuses `defer_loading` and tool-search tools with a 400 and caches nothing). The application is
a fake `nats` answering `--fisk-introspect` with the captured NATS CLI model (221 commands) and
logging every other call to `nats.calls`.
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

from fiskai_agent.testing import Hang, MessagesServer, RecordedRequest, RunProcesses, Turn, text, tool_use
from fiskai_core.testing import write_fake_app
from fiskai_runstate import FileJournalStore, decode_record

_RUN_ID = "local-kv"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No real credentials (a local server needs none), state under tmp_path."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"), NO_COLOR="1")
    return base


def _agent(tmp_path: Path, shared_fixtures: Path, *, model: str = "qwen3:8b") -> Path:
    app = write_fake_app(tmp_path, shared_fixtures / "fisk" / "natscli.introspect.json", name="nats")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"application_path: {app}\n"
        "system_prompt: You operate a NATS deployment through the nats tools.\n"
        f"llm:\n  model: {model}\n",
        encoding="utf-8",
    )
    return config


_RUNS = RunProcesses()


@pytest.fixture(autouse=True)
def _reap() -> Iterator[None]:
    """A failed test leaves no CLI running."""
    yield
    _RUNS.reap()


def _start(args: Sequence[str], env: Mapping[str, str], server: MessagesServer) -> subprocess.Popen[str]:
    # The environment names the server, as an operator running Ollama sets it (ANTHROPIC_BASE_URL).
    return _RUNS.start(args, env, server)


def _finish(proc: subprocess.Popen[str], timeout: float = 90) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _found(request: RecordedRequest, use_id: str) -> list[str]:
    (result,) = [r for r in request.tool_results() if r["tool_use_id"] == use_id]
    return [tool["name"] for tool in json.loads(str(result["content"]))["tools"]]


def _calls(tmp_path: Path) -> str:
    log = tmp_path / "nats.calls"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def test_a_multi_step_task_over_the_nats_cli_stays_under_twenty_tools_per_request(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    """Steps:
    1. find_tools for streams; the next request carries the found tools at the end of the list.
    2. The model lists the streams (runs), then searches again for key-value buckets.
    3. It lists the buckets (runs) and answers. Every request carried fewer than 20 tool definitions.
    """
    config = _agent(tmp_path, shared_fixtures)
    script = [
        Turn([text("Looking for a tool."), tool_use("find_tools", {"query": "list the streams"}, id="f1")]),
        Turn([tool_use("stream_ls", {}, id="s1")]),
        Turn([tool_use("find_tools", {"query": "list key-value buckets", "limit": 3}, id="f2")]),
        Turn([tool_use("kv_ls", {}, id="k1")]),
        Turn([text("No streams and no buckets.")]),
    ]
    with MessagesServer(script, local=True) as local:
        code, out, err = _finish(_start(["-c", str(config), "run", "-v", "streams and buckets?"], env, local))
        requests = local.requests

    assert code == 0, err
    assert out == "No streams and no buckets.\n"
    assert len(requests) == 5
    for request in requests:
        assert len(request.tools) < 20, request.tool_names
        assert "defer_loading" not in request.raw.decode() and "cache_control" not in request.body
    base = requests[0].tool_names
    assert base[-1] == "find_tools"
    first_found = _found(requests[1], "f1")
    assert "stream_ls" in first_found and requests[1].tool_names == base + first_found
    second_found = [name for name in _found(requests[3], "f2") if name not in first_found]
    assert "kv_ls" in _found(requests[3], "f2")
    assert requests[3].tool_names == base + first_found + second_found
    assert requests[4].tool_names == requests[3].tool_names
    assert _calls(tmp_path).split("--\n")[:2] == ["[stream]\n[ls]\n", "[kv]\n[ls]\n"]
    assert "tool search client-side, find_tools" in err
    assert 'find_tools("list the streams")' in err


def _journal_kinds(env: Mapping[str, str]) -> list[str]:
    path = FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs").journal_path(_RUN_ID)
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")[:-1]  # a torn last line is not yet a record
    return [decode_record(line, run_id=_RUN_ID, line_no=n).kind for n, line in enumerate(lines, 1)]


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_run_killed_after_finding_tools_resumes_with_the_same_tool_list(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    """Steps:
    1. A checkpointed run asks find_tools; the next model call hangs; SIGKILL.
    2. --resume: the first request carries the same tools, found ones included, in the same order.
    3. The model calls a found tool without searching again; it runs; the run completes.
    """
    config = _agent(tmp_path, shared_fixtures)
    find = Turn([tool_use("find_tools", {"query": "list key-value buckets"}, id="f1")])
    with MessagesServer([find, Hang()], local=True) as local:
        proc = _start(["-c", str(config), "run", "--checkpoint", "--name", _RUN_ID, "which buckets?"], env, local)
        local.wait_for_requests(2, timeout=60)
        _wait_until(lambda: "tool_result" in _journal_kinds(env), "the find_tools result in the journal")
        proc.kill()
        proc.communicate(timeout=30)
        before = local.requests[1].tool_names
        assert "kv_ls" in before
        local.add(Turn([tool_use("kv_ls", {}, id="k1")]), Turn([text("No buckets.")]))
        code, out, err = _finish(_start(["-c", str(config), "run", "--resume", _RUN_ID], env, local))
        resumed = local.requests[2:]

    assert code == 0, err
    assert out == "No buckets.\n"
    assert resumed[0].tool_names == before
    assert "[kv]\n[ls]\n" in _calls(tmp_path)
    assert _journal_kinds(env)[-1] == "terminal"


def test_a_claude_model_on_a_server_that_refuses_tool_search_falls_back_once_with_a_warning(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    config = _agent(tmp_path, shared_fixtures, model="claude-sonnet-4-6")
    script = [Turn([tool_use("find_tools", {"query": "list streams"}, id="f1")]), Turn([text("done")])]
    with MessagesServer(script, local=True) as local:
        code, out, err = _finish(_start(["-c", str(config), "run", "streams?"], env, local))
        requests = local.requests

    assert code == 0, err
    assert out == "done\n"
    assert len(requests) == 3
    assert requests[0].deferred_tool_names and not requests[1].deferred_tool_names
    assert err.count("the model server refused server-side tool search") == 1
    assert "defer_loading" in err


def test_info_says_which_capabilities_a_run_would_use_and_why(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    config = _agent(tmp_path, shared_fixtures)
    with config.open("a", encoding="utf-8") as file:
        file.write("  base_url: http://127.0.0.1:11434\n  capabilities: {prompt_cache: on}\n")
    done = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "info", "--format", "json"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    model = json.loads(done.stdout)["model"]
    assert model["capabilities"] == (
        "server tool search off, prompt cache on (llm.capabilities), thinking off "
        '(auto: model "qwen3:8b" behind 127.0.0.1 is not a Claude model on Anthropic)'
    )
    assert model["tool_search"].startswith("client-side find_tools")
    assert model["deferred_tools"] == 221
