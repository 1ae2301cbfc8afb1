"""`fiskai run` end to end: the real CLI in a subprocess, the real SDK, the scripted Messages server.

The CLI finds the server through `ANTHROPIC_BASE_URL`; stdin is not a terminal, so gated commands are
denied; stdout is a pipe, so it must carry the final answer and nothing else.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from fiskai_agent.testing import (
    Failure,
    Hang,
    MessagesServer,
    RecordedRequest,
    Turn,
    Usage,
    text,
    thinking,
    tool_search,
    tool_use,
)
from fiskai_core.testing import write_fake_app

_ROOT = Path(__file__).resolve().parents[1]
_FIXTURECTL = _ROOT / "examples" / "fixturectl"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A clean environment: no real credentials, state under tmp_path."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"), NO_COLOR="1")
    return base


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    with MessagesServer() as scripted:
        yield scripted


def fiskai(
    args: Sequence[str], env: Mapping[str, str], server: MessagesServer | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full = dict(env)
    if server is not None:
        full.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="test-key")
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args],
        cwd=Path(env["XDG_STATE_HOME"]).parent,  # nothing a run writes lands in the checkout
        env=full,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def copy_fixturectl(tmp_path: Path, **llm: Any) -> Path:
    """examples/fixturectl in tmp_path, with `llm` settings changed (budgets, say)."""
    folder = tmp_path / "fixturectl"
    shutil.copytree(_FIXTURECTL, folder)
    config = folder / "agent.yaml"
    text_ = config.read_text(encoding="utf-8")
    for key, value in llm.items():
        text_ = text_.replace(f"    {key}: ", f"    {key}: {value}  # was ", 1)
    config.write_text(text_, encoding="utf-8")
    return config


def _result_for(request: RecordedRequest, tool_use_id: str) -> Mapping[str, Any]:
    for block in request.tool_results():
        if block["tool_use_id"] == tool_use_id:
            return block
    raise AssertionError(f"no tool_result for {tool_use_id} in request {request.index}")


_ANSWER = "Nodes **n1** and n2 are healthy. I did not drain n3: the operator could not be asked."


def test_multi_step_task_over_fixturectl_denies_the_gated_command_and_pipes_only_the_answer(
    env: dict[str, str], server: MessagesServer
) -> None:
    """Steps:
    1. The model narrates and lists the nodes (ungated, runs).
    2. It searches for and calls the drain command (gated by ai:confirm; no terminal, so denied).
    3. It answers; stdout holds exactly that answer.
    """
    server.add(
        Turn(
            [
                thinking("Check the nodes first."),
                text("Listing the nodes."),
                tool_use("cluster_node_list", {}, id="toolu_list"),
            ]
        ),
        Turn(
            [
                *tool_search("drain a node", ["cluster_node_drain"], id="srvtoolu_1"),
                tool_use("cluster_node_drain", {"node": "n3", "reason": "maintenance"}, id="toolu_drain"),
            ]
        ),
        Turn([text(_ANSWER)]),
    )
    done = fiskai(
        ["-c", str(_FIXTURECTL / "agent.yaml"), "run", "drain", "n3", "if", "the", "others", "are", "fine"], env, server
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == _ANSWER + "\n"
    first, second, third = server.requests
    # Deferral: 11 tools reach the threshold, so all but the ai:no_defer ones go out deferred with the search tool.
    assert "tool_search_tool_bm25" in first.tool_names
    assert set(first.loaded_tool_names) == {"types", "cluster_node_list"}
    assert "cluster_node_drain" in first.deferred_tool_names
    assert first.messages[0]["content"][0]["text"] == "drain n3 if the others are fine"
    listed = _result_for(second, "toolu_list")
    assert "fixturectl was called with" in str(listed["content"])
    assert "[node]" in str(listed["content"])
    denied = _result_for(third, "toolu_drain")
    assert not denied.get("is_error")
    assert json.loads(str(denied["content"]))["allowed"] is False
    # The server's own tool-search blocks went back verbatim in the assistant turn.
    assistant = [block["type"] for block in third.messages[-2]["content"]]
    assert assistant == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    # The operator saw the narration, the call, the warning and the stats on stderr.
    assert "Listing the nodes." in done.stderr
    assert "Check the nodes first." in done.stderr
    assert "-> " in done.stderr
    assert "cluster node list" in done.stderr
    assert "require confirmation" in done.stderr
    assert "Run summary:" in done.stderr
    assert "llm_calls=3 tool_calls=2" in done.stderr


def test_budget_stop_runs_no_tool_of_the_turn_that_crossed_it(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    config = copy_fixturectl(tmp_path, max_tokens=500)
    server.add(Turn([tool_use("cluster_node_list", {}, id="toolu_1")], usage=Usage(input_tokens=450, output_tokens=60)))
    done = fiskai(["-c", str(config), "run", "list the nodes"], env, server)

    assert done.returncode == 1
    assert done.stdout == ""
    assert "token budget (500) exhausted after 1 iterations" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(server.requests) == 1
    assert "-> " not in done.stderr


def test_format_json_prints_one_object_with_answer_stats_and_session(
    env: dict[str, str], server: MessagesServer
) -> None:
    server.add(Turn([text("All good.")], usage=Usage(input_tokens=12, output_tokens=3, cache_read_input_tokens=40)))
    done = fiskai(
        [
            "-c",
            str(_FIXTURECTL / "agent.yaml"),
            "run",
            "--checkpoint",
            "--name",
            "json-run",
            "--format",
            "json",
            "status?",
        ],
        env,
        server,
    )

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["answer"] == "All good."
    assert report["reason"] == "completed"
    assert report["session_id"] == "json-run"
    assert report["stats"]["llm_calls"] == 1
    assert (report["stats"]["input_tokens"], report["stats"]["output_tokens"]) == (12, 3)
    assert report["stats"]["cache_read_tokens"] == 40
    assert "session=json-run" in done.stderr


def test_trace_file_records_each_exchange_and_is_never_overwritten(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    trace = tmp_path / "trace.jsonl"
    server.add(Turn([text("one")]))
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "--trace", str(trace), "hi"], env, server)

    assert done.returncode == 0, done.stderr
    assert trace.stat().st_mode & 0o777 == 0o600
    lines = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [line["type"] for line in lines] == ["session", "request", "response", "summary"]
    assert lines[0]["model"] == "claude-sonnet-4-6"
    assert lines[1]["body"]["messages"][0]["content"][0]["text"] == "hi"
    assert lines[2]["status_code"] == 200
    assert lines[3]["llm_calls"] == 1
    again = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "--trace", str(trace), "hi"], env, server)
    assert again.returncode == 1
    assert "already exists" in again.stderr
    assert len(server.requests) == 1


def test_without_credentials_or_base_url_it_says_what_to_set(env: dict[str, str]) -> None:
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "hi"], env)

    assert done.returncode == 1
    assert done.stdout == ""
    for needed in ("ANTHROPIC_API_KEY", "llm.base_url", "ANTHROPIC_BASE_URL", "http://localhost:11434"):
        assert needed in done.stderr
    assert "Traceback" not in done.stderr


def test_plain_http_to_a_remote_host_is_refused_before_anything_runs(env: dict[str, str]) -> None:
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "--base-url", "http://example.com", "hi"], env)

    assert done.returncode == 1
    assert "non-loopback" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--resume", "abc", "--checkpoint"], "--resume cannot be combined with --checkpoint"),
        (["--resume", "abc", "more"], "--resume does not take a query"),
        (["--name", "x"], "--name requires --checkpoint"),
        (["--force"], "--force only applies when resuming"),
    ],
)
def test_conflicting_flags_are_refused_with_the_original_messages(
    env: dict[str, str], args: list[str], message: str
) -> None:
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", *args], env)

    assert done.returncode == 2
    assert message in done.stderr


def _nats_agent(tmp_path: Path, shared_fixtures: Path, *, model: str = "claude-sonnet-4-6") -> Path:
    app = write_fake_app(tmp_path, shared_fixtures / "fisk" / "with-schemas" / "natscli.introspect.json", name="nats")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"application_path: {app}\n"
        "system_prompt: You operate a NATS deployment through the nats tools.\n"
        "harness:\n  confirm_tags: [impact:rw]\n"
        f"llm:\n  model: {model}\n",
        encoding="utf-8",
    )
    return config


def test_run_over_the_nats_cli_defers_its_tools_and_calls_one_found_by_search(
    tmp_path: Path, env: dict[str, str], server: MessagesServer, shared_fixtures: Path
) -> None:
    """Steps:
    1. 232 NATS CLI tools: the request carries a few loaded tools, the rest deferred, plus the search tool.
    2. The server's tool search finds stream_ls; the model calls it; the fake nats binary runs it.
    3. The answer arrives; every request kept the deferral.
    """
    config = _nats_agent(tmp_path, shared_fixtures)
    server.add(
        Turn([*tool_search("list streams", ["stream_ls"], id="srvtoolu_s"), tool_use("stream_ls", {}, id="toolu_ls")]),
        Turn([text("There are no streams.")]),
    )
    done = fiskai(["-c", str(config), "run", "which streams exist?"], env, server)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "There are no streams.\n"
    for request in server.requests:
        assert len(request.deferred_tool_names) >= 200
        assert len(request.loaded_tool_names) < 20
        assert "tool_search_tool_bm25" in request.tool_names
    assert "[stream]\n[ls]" in (tmp_path / "nats.calls").read_text(encoding="utf-8")
    (result,) = server.requests[1].tool_results()
    assert "[ls]" in str(result["content"])


def test_a_local_model_finds_nats_tools_with_find_tools_and_each_request_stays_small(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    """Issue 17 end to end, against the local-server mode (which refuses defer_loading and search tools).

    Steps:
    1. A non-Claude model behind a local server: the first request carries find_tools and few tools.
    2. The model asks find_tools for streams; the harness answers with a ranked list naming stream_ls.
    3. The next request carries stream_ls in full; the model calls it (it runs) and also calls a
       deferred tool it never found (refused in-band, nothing runs).
    4. The answer arrives; no request carried 20 or more tool definitions.
    """
    config = _nats_agent(tmp_path, shared_fixtures, model="qwen3")
    script = [
        Turn([tool_use("find_tools", {"query": "list the streams"}, id="f1")]),
        Turn([tool_use("stream_ls", {}, id="s1"), tool_use("account_info", {}, id="a1")]),
        Turn([text("No streams yet.")]),
    ]
    with MessagesServer(script, local=True) as local:
        done = fiskai(["-c", str(config), "run", "which streams exist?"], env, local)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "No streams yet.\n"
    assert "not a Claude model" in done.stderr
    first, second, third = local.requests
    for request in local.requests:
        assert request.deferred_tool_names == []
        assert "tool_search_tool_bm25" not in request.tool_names
        assert "find_tools" in request.tool_names
        assert len(request.tool_names) < 20, request.tool_names
        assert "cache_control" not in request.raw.decode()
    assert "stream_ls" not in first.tool_names
    (found,) = second.tool_results()
    assert "stream_ls" in str(found["content"])
    assert "stream_ls" in second.tool_names
    results = {block["tool_use_id"]: block for block in third.tool_results()}
    assert "[ls]" in str(results["s1"]["content"])
    assert "find_tools" in str(results["a1"]["content"])
    calls = (tmp_path / "nats.calls").read_text(encoding="utf-8")
    assert "[stream]\n[ls]" in calls
    assert "[account]" not in calls


def test_overloaded_answers_are_retried_and_each_attempt_is_traced(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    trace = tmp_path / "trace.jsonl"
    server.add(
        Failure(529, "Overloaded", retry_after=0.01), Failure(429, "slow down", retry_after=0.01), Turn([text("ok")])
    )
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "--trace", str(trace), "hi"], env, server)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"
    assert [r.retry_count for r in server.requests] == [0, 1, 2]
    lines = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    responses = [(line.get("attempt", 0), line["status_code"]) for line in lines if line["type"] == "response"]
    assert responses == [(0, 529), (1, 429), (2, 200)]
    assert "llm_calls=1 " in done.stderr


def test_a_model_server_error_is_printed_without_its_escape_sequences(
    env: dict[str, str], server: MessagesServer
) -> None:
    """The one-line error quotes the server's message; an OSC 52, BEL or U+202E in it never reaches the terminal."""
    server.add(Failure(400, "bad \x1b]52;c;aGk=\x07 request\u202e here"))
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "hi"], env, server)

    assert done.returncode == 1
    assert done.stderr.endswith("Error: llm call: HTTP 400 from the model API: bad  request<U+202E> here\n")
    assert not [raw for raw in ("\x1b", "\x07", "\u202e") if raw in done.stderr]


def test_a_hung_model_call_ends_at_the_call_timeout_with_one_line(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    config = copy_fixturectl(tmp_path, call_timeout="1s")
    server.add(Hang(), Hang(), Hang())
    done = fiskai(["-c", str(config), "run", "hi"], env, server)

    assert done.returncode == 1
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("Error: ")
    assert "call_timeout" in error


def test_http_debug_dumps_both_bodies_to_a_private_file(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    dump = tmp_path / "http.log"
    dump.write_text("an old dump\n", encoding="utf-8")
    server.add(Turn([text("ok")]))
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "--http-debug", str(dump), "hi"], env, server)

    assert done.returncode == 0, done.stderr
    assert dump.stat().st_mode & 0o777 == 0o600
    content = dump.read_text(encoding="utf-8")
    assert "an old dump" not in content
    assert "=== HTTP request: POST " in content
    assert "=== HTTP response: 200 OK ===" in content
    assert '"text": "hi"' in content
    assert "contains the full conversation" in done.stderr


def test_verbose_shows_full_tool_output_and_request_summaries(env: dict[str, str], server: MessagesServer) -> None:
    server.add(Turn([tool_use("cluster_node_list", {"limit": 3}, id="t1")]), Turn([text("three nodes")]))
    quiet = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "list"], env, server)
    server.add(Turn([tool_use("cluster_node_list", {"limit": 3}, id="t1")]), Turn([text("three nodes")]))
    loud = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "-v", "list"], env, server)

    assert quiet.returncode == loud.returncode == 0
    assert quiet.stdout == loud.stdout == "three nodes\n"
    folded = [line for line in quiet.stderr.splitlines() if line.startswith("<- ")]
    assert len(folded) == 1
    assert '.. "list" (msgs=1' in loud.stderr
    assert "Running agent with 11 tools" in loud.stderr
    assert "   fixturectl was called with" in loud.stderr


def test_a_reply_cut_at_max_tokens_is_an_error_and_its_tool_call_never_runs(
    env: dict[str, str], server: MessagesServer
) -> None:
    server.add(
        Turn(
            [text("I will list the nodes and then"), tool_use("cluster_node_list", {}, id="t1")],
            stop_reason="max_tokens",
        )
    )
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "list"], env, server)

    assert done.returncode == 1
    assert done.stdout == ""
    assert "I will list the nodes and then" in done.stderr
    assert "output token limit" in done.stderr
    assert "-> " not in done.stderr
    assert len(server.requests) == 1


def test_a_paused_turn_is_sent_back_to_continue(env: dict[str, str], server: MessagesServer) -> None:
    server.add(
        Turn(tool_search("node commands", ["cluster_node_drain"], id="srvtoolu_p"), stop_reason="pause_turn"),
        Turn([text("Nothing to drain.")]),
    )
    done = fiskai(["-c", str(_FIXTURECTL / "agent.yaml"), "run", "anything to drain?"], env, server)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Nothing to drain.\n"
    continued = server.requests[1]
    assert [m["role"] for m in continued.messages] == ["user", "assistant"]
    assert [b["type"] for b in continued.messages[1]["content"]] == ["server_tool_use", "tool_search_tool_result"]


def _with_harness(tmp_path: Path, harness: str) -> Path:
    config = copy_fixturectl(tmp_path)
    text_ = config.read_text(encoding="utf-8").replace(
        "  confirm_tags: [impact:rw]\n", f"  confirm_tags: [impact:rw]\n{harness}"
    )
    config.write_text(text_, encoding="utf-8")
    return config


def test_memory_written_in_one_run_is_indexed_and_read_in_the_next(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    config = _with_harness(tmp_path, "  memory:\n    enabled: true\n")
    note = {"key": "region", "description": "the cluster's region", "content": "eu-west-3"}
    server.add(Turn([tool_use("memory_write", note, id="w1")]), Turn([text("Saved.")]))
    first = fiskai(["-c", str(config), "run", "remember the region is eu-west-3"], env, server)
    server.add(Turn([tool_use("memory_read", {"key": "region"}, id="r1")]), Turn([text("eu-west-3")]))
    second = fiskai(["-c", str(config), "run", "which region?"], env, server)

    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert "memory_write" in server.requests[0].tool_names
    start_of_second = server.requests[2]
    assert "the cluster's region" in json.dumps(start_of_second.body["system"])
    (read,) = server.requests[3].tool_results()
    assert "eu-west-3" in str(read["content"])
    assert (Path(env["XDG_STATE_HOME"]) / "fiskai" / "memory" / "fixturectl").is_dir()


def test_knowledge_search_answers_from_the_index_built_by_fiskai_knowledge_index(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "drain.md").write_text(
        "# Draining a node\n\nBefore draining, cordon the node; a drain waits for the grace period.\n", encoding="utf-8"
    )
    # No directory: `fiskai knowledge index` and `fiskai run` agree on the default (the state home).
    config = _with_harness(tmp_path, f"  knowledge:\n    enabled: true\n    paths: [{docs}]\n")
    server.add(Turn([tool_use("knowledge_search", {"query": "how do I drain a node"}, id="k1")]), Turn([text("a")]))
    absent = fiskai(["-c", str(config), "run", "how to drain?"], env, server)
    built = fiskai(["-c", str(config), "knowledge", "index"], env)
    server.add(Turn([tool_use("knowledge_search", {"query": "how do I drain a node"}, id="k2")]), Turn([text("b")]))
    present = fiskai(["-c", str(config), "run", "how to drain?"], env, server)

    assert absent.returncode == 0, absent.stderr
    assert "no index exists" in absent.stderr
    (missing,) = server.requests[1].tool_results()
    assert "index_not_built" in str(missing["content"])
    assert built.returncode == 0, built.stderr
    assert present.returncode == 0, present.stderr
    (found,) = server.requests[3].tool_results()
    assert "cordon the node" in str(found["content"])


def test_a_local_server_needs_no_api_key(env: dict[str, str], server: MessagesServer) -> None:
    server.add(Turn([text("ok")]))
    done = fiskai(
        ["-c", str(_FIXTURECTL / "agent.yaml"), "run", "--base-url", server.base_url, "--model", "qwen3", "hi"], env
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"
    assert server.requests[0].body["model"] == "qwen3"
    assert "ANTHROPIC_API_KEY" not in done.stderr
