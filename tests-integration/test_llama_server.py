"""`fiskai run` against a real llama.cpp `llama-server` (issue 34), not a scripted imitation.

The server is built by `.ci/run` (skipped with one line when absent) and loads the tiny bigram model
of tests-integration/conftest.py: its text is " list streams". The proxy's log (`requests.jsonl`) is the
record of what each run sent. A real tool call is obtained by having the proxy alter one request (see
`test_a_tool_call_forced_through_the_servers_grammar_runs_fixturectl`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fiskai_core.testing import write_fake_app

if TYPE_CHECKING:
    from .conftest import LlamaServer, RequestLog

_ROOT = Path(__file__).resolve().parent.parent
_FIXTURECTL = _ROOT / "examples" / "fixturectl"
_MODEL = "tiny-bigram"
# Above the SDK's non-streaming limit (21,333), so every call is streamed (SSE).
_STREAMING = 32000


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No credentials (a local server needs none), state under tmp_path."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"), NO_COLOR="1")
    return base


def _fiskai(
    args: Sequence[str], env: Mapping[str, str], log: RequestLog, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args],
        cwd=Path(env["XDG_STATE_HOME"]).parent,
        env={**env, "ANTHROPIC_BASE_URL": log.url},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _llm_block(model: str, output_tokens: int, extra: str = "") -> str:
    return f"llm:\n  model: {model}\n  budget:\n    max_output_tokens: {output_tokens}\n{extra}"


def _fixturectl(tmp_path: Path, model: str = _MODEL, output_tokens: int = 256, extra: str = "") -> Path:
    folder = tmp_path / "fixturectl"
    shutil.copytree(_FIXTURECTL, folder)
    config = folder / "agent.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text[: text.index("llm:")] + _llm_block(model, output_tokens, extra), encoding="utf-8")
    return config


def _nats(tmp_path: Path, shared: Path, model: str = _MODEL, output_tokens: int = 256, extra: str = "") -> Path:
    app = write_fake_app(tmp_path, shared / "fisk" / "natscli.introspect.json", name="nats")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"application_path: {app}\nsystem_prompt: You operate a NATS deployment through the nats tools.\n"
        + _llm_block(model, output_tokens, extra),
        encoding="utf-8",
    )
    return config


def _no_server_features(entry: Mapping[str, Any]) -> bool:
    return not (entry["defer_loading"] or entry["tool_search_tool"] or entry["cache_control"])


def _tool_uses(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [
        block
        for message in entry["body"]["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]


@pytest.mark.parametrize("output_tokens", [256, _STREAMING], ids=["json", "streaming"])
def test_fixturectl_is_shown_whole_without_deferral_fields(
    tmp_path: Path, env: dict[str, str], request_log: RequestLog, output_tokens: int
) -> None:
    """11 tools take about 1,900 tokens, under the budget: no find_tools, no deferral fields."""
    config = _fixturectl(tmp_path, output_tokens=output_tokens)
    done = _fiskai(["-c", str(config), "run", "-v", "which nodes are there?"], env, request_log)
    entries = request_log.entries

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "list streams"
    (entry,) = entries
    assert entry["stream"] is (output_tokens == _STREAMING)
    assert len(entry["tools"]) == 11 and "find_tools" not in entry["tools"]
    assert _no_server_features(entry)
    assert "tool search client-side" not in done.stderr


@pytest.mark.parametrize("output_tokens", [256, _STREAMING], ids=["json", "streaming"])
def test_the_nats_cli_is_offered_through_find_tools_with_fewer_than_20_definitions(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path, request_log: RequestLog, output_tokens: int
) -> None:
    """221 tools (about 44,000 tokens) are deferred: the request carries find_tools, no deferral fields.

    Not covered here: a find_tools call forced through the server's grammar. With this model the forced
    call's query string never closed, the reply ran to its 256-token cap and llama-server took over two
    minutes more to answer, so the call path from find_tools to a found tool is covered by the scripted
    server (tests-integration/test_run_local_model.py) only.
    """
    config = _nats(tmp_path, shared_fixtures, output_tokens=output_tokens)
    done = _fiskai(["-c", str(config), "run", "-v", "what streams are there?"], env, request_log)
    entries = request_log.entries

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "list streams"
    (entry,) = entries
    assert entry["stream"] is (output_tokens == _STREAMING)
    assert entry["tools"][-1] == "find_tools" and len(entry["tools"]) < 20
    assert _no_server_features(entry)
    assert "over llm.tool_definition_budget, 4,096" in done.stderr


def test_a_claude_model_name_on_llama_cpp_gets_no_server_tool_search(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path, request_log: RequestLog
) -> None:
    config = _nats(tmp_path, shared_fixtures, model="claude-sonnet-4-6")
    done = _fiskai(["-c", str(config), "run", "what streams are there?"], env, request_log)
    entries = request_log.entries

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "list streams"
    (entry,) = entries
    assert entry["model"] == "claude-sonnet-4-6"
    assert not entry["defer_loading"] and not entry["tool_search_tool"]
    assert entry["tools"][-1] == "find_tools" and len(entry["tools"]) < 20
    assert f"the model server at {request_log.url} is llama.cpp (GET /props answered with build_info" in done.stderr


def test_tool_search_forced_on_for_llama_cpp_is_refused_before_any_request(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path, request_log: RequestLog
) -> None:
    config = _nats(tmp_path, shared_fixtures, model="claude-sonnet-4-6", extra="  capabilities: {tool_search: on}\n")
    done = _fiskai(["-c", str(config), "run", "what streams are there?"], env, request_log)

    assert done.returncode != 0
    assert request_log.entries == []
    assert f"llm.capabilities.tool_search is on, but the model server at {request_log.url} is llama.cpp" in done.stderr
    assert "set llm.capabilities.tool_search to auto or off" in done.stderr
    assert "Traceback" not in done.stderr


def test_info_names_llama_cpp_and_the_definition_budget(
    tmp_path: Path, env: dict[str, str], request_log: RequestLog
) -> None:
    config = _fixturectl(tmp_path)
    done = _fiskai(["-c", str(config), "info"], env, request_log)

    assert done.returncode == 0, done.stderr
    assert "Server        llama.cpp (GET /props answered with build_info" in done.stdout
    assert "llm.tool_definition_budget, 4,096 tokens; these take about 1,879)" in done.stdout
    assert request_log.entries == []  # no model call


def test_a_reply_cut_at_max_tokens_is_an_error(
    tmp_path: Path,
    env: dict[str, str],
    start_llama: Callable[..., LlamaServer],
    request_log_for: Callable[[LlamaServer], RequestLog],
) -> None:
    log = request_log_for(start_llama("--ignore-eos"))
    config = _fixturectl(tmp_path, output_tokens=4)
    done = _fiskai(["-c", str(config), "run", "which nodes are there?"], env, log)
    entries = log.entries

    assert done.returncode == 1
    assert "output token limit" in done.stderr
    assert [entry["max_tokens"] for entry in entries] == [4]


def test_a_server_killed_mid_stream_ends_the_run_with_a_clear_error(
    tmp_path: Path,
    env: dict[str, str],
    start_llama: Callable[..., LlamaServer],
    request_log_for: Callable[[LlamaServer], RequestLog],
) -> None:
    server = start_llama("--ignore-eos")  # it would write until the 32,000-token limit
    log = request_log_for(server)
    log.on_stream = server.kill
    config = _fixturectl(tmp_path, output_tokens=_STREAMING)
    done = _fiskai(["-c", str(config), "run", "which nodes are there?"], env, log, timeout=120)

    assert server.proc.returncode is not None  # killed, mid-stream
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "error" in done.stderr.lower(), done.stderr


def _only_node_list_forced(sent: Mapping[str, Any]) -> dict[str, Any]:
    """What the proxy changes in the first request: one tool, its schema emptied, the call forced."""
    (tool,) = [tool for tool in sent["tools"] if tool["name"] == "cluster_node_list"]
    schema: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
    return {
        "tools": [{**tool, "input_schema": schema}],
        "tool_choice": {"type": "tool", "name": "cluster_node_list"},
    }


@pytest.mark.parametrize("output_tokens", [256, _STREAMING], ids=["json", "streaming"])
def test_a_tool_call_forced_through_the_servers_grammar_runs_fixturectl(
    tmp_path: Path, env: dict[str, str], request_log: RequestLog, output_tokens: int
) -> None:
    """The real server's tool_use becomes an argv that fiskai runs, and the run then finishes.

    What the proxy alters, in the first request only: it keeps just fiskai's `cluster_node_list` tool,
    replaces its input schema by one that admits only `{}` (no properties, additionalProperties false)
    and adds `tool_choice`, which llama.cpp turns into "required", so its grammar forbids end of text
    until a call is written. The tiny model's call text is chosen by that grammar (a string argument
    might never close, hence the empty schema). The tool_use block, its parsing, fiskai's argv and the
    fixturectl run are real; the second request goes through unchanged and the model ends with text.
    """
    request_log.inject[0] = _only_node_list_forced
    config = _fixturectl(tmp_path, output_tokens=output_tokens)
    done = _fiskai(["-c", str(config), "run", "-v", "which nodes are there?"], env, request_log)
    entries = request_log.entries

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("list streams")
    assert len(entries) == 2
    assert entries[0]["injected"]["tool_choice"] == {"type": "tool", "name": "cluster_node_list"}
    assert entries[1]["injected"] == {}
    assert all(entry["stream"] is (output_tokens == _STREAMING) for entry in entries)
    (call,) = _tool_uses(entries[1])
    assert call["name"] == "cluster_node_list" and call["input"] == {}
    results = [
        block
        for message in entries[1]["body"]["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    (result,) = results
    assert result["tool_use_id"] == call["id"]
    text = json.dumps(result["content"])
    # fixturectl echoes its argv: the command fiskai built from the server's call really ran.
    assert "fixturectl was called with 3 argument(s)" in text
    assert "[cluster]" in text and "[node]" in text and "[list]" in text
