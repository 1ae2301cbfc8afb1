"""`harness.hooks` end to end: hook commands in front of the NATS CLI's tools in a real `fiskai run`.

The application is the captured NATS CLI model behind a fake binary that records its argv; the model is
the scripted Messages server; the hooks are small Python programs that read the event on stdin and
answer on stdout. stdin of the run is not a terminal, so the confirm gate denies every gated call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.testing import write_fake_app
from fiskai_runstate import FileJournalStore, decode_record


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_", "OTEL_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", ANTHROPIC_API_KEY="test-key")
    return base


def hook(tmp_path: Path, name: str, body: str) -> Path:
    """A hook program: `event` is the decoded stdin; whatever it prints is its answer."""
    path = tmp_path / name
    path.write_text(
        f"#!{sys.executable}\nimport json, sys, time\nevent = json.load(sys.stdin)\n"
        f"with open({str(tmp_path / (name + '.log'))!r}, 'a') as log:\n    log.write(json.dumps(event) + '\\n')\n"
        + body,
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def nats_agent(tmp_path: Path, shared_fixtures: Path, hooks: str) -> Path:
    app = write_fake_app(tmp_path, shared_fixtures / "fisk" / "with-schemas" / "natscli.introspect.json", name="nats")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"application_path: {app}\n"
        "system_prompt: You operate a NATS deployment through the nats tools.\n"
        "harness:\n  confirm_tags: [impact:rw]\n  hooks:\n"
        + hooks
        + "llm:\n  model: claude-sonnet-4-6\n  no_tool_search: true\n",
        encoding="utf-8",
    )
    return config


def run(
    config: Path, env: Mapping[str, str], script: Sequence[Turn]
) -> tuple[subprocess.CompletedProcess[str], MessagesServer]:
    with MessagesServer(list(script)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "fiskai_cli", "-c", str(config), "run", "--checkpoint", "--name", "hooked", "go"],
            cwd=config.parent,
            env={**env, "ANTHROPIC_BASE_URL": server.base_url},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    return done, server


def journaled_results(env: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """The journal's tool result records by tool_use_id: the result object and the gate decision."""
    path = FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs").journal_path("hooked")
    out: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(path.read_bytes().split(b"\n")[:-1], 1):
        record = decode_record(line, run_id="hooked", line_no=number)
        if record.kind == "tool_result":
            payload: Any = record.payload
            out[payload.tool_use_id] = {"result": payload.result, "gate": payload.gate}
    return out


def calls(tmp_path: Path) -> str:
    path = tmp_path / "nats.calls"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_hook_denying_stream_rm_stops_it_before_the_gate(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    policy = hook(
        tmp_path,
        "policy",
        'if event["tool"] == "stream_rm":\n'
        '    print(json.dumps({"decision": "deny", "reason": "streams are never removed by the agent"}))\n',
    )
    config = nats_agent(tmp_path, shared_fixtures, f"    pre_tool_use:\n      - command: [{policy}]\n")
    script = [
        Turn([tool_use("stream_rm", {"stream": "ORDERS", "force": True}, id="toolu_rm")]),
        Turn([text("I may not remove streams.")]),
    ]
    done, server = run(config, env, script)

    assert done.returncode == 0, done.stderr
    assert calls(tmp_path) == ""
    (result,) = server.requests[1].tool_results()
    assert "streams are never removed by the agent" in str(result["content"])
    journaled = journaled_results(env)["toolu_rm"]
    assert journaled["gate"] is None  # the gate was never asked
    assert journaled["result"]["hooks"] == [
        {
            "point": "pre_tool_use",
            "hook": "policy",
            "decision": "deny",
            "reason": "streams are never removed by the agent",
        }
    ]
    (event,) = [json.loads(line) for line in (tmp_path / "policy.log").read_text(encoding="utf-8").splitlines()]
    assert event["hook_event_name"] == "pre_tool_use"
    assert event["arguments"] == {"stream": "ORDERS", "force": True}


def test_a_rewrite_runs_the_rewritten_call_and_is_journaled_with_both_versions(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    policy = hook(
        tmp_path,
        "scope",
        'print(json.dumps({"decision": "rewrite", "arguments": {**event["arguments"], "stream": "AUDIT"},\n'
        '                  "reason": "only AUDIT is visible"}))\n',
    )
    config = nats_agent(
        tmp_path, shared_fixtures, f"    pre_tool_use:\n      - command: [{policy}]\n        tools: [stream_info]\n"
    )
    script = [
        Turn(
            [tool_use("stream_ls", {}, id="toolu_ls"), tool_use("stream_info", {"stream": "ORDERS"}, id="toolu_info")]
        ),
        Turn([text("done")]),
    ]
    done, _ = run(config, env, script)

    assert done.returncode == 0, done.stderr
    assert "[AUDIT]" in calls(tmp_path)
    assert "[ORDERS]" not in calls(tmp_path)
    journaled = journaled_results(env)
    (decision,) = journaled["toolu_info"]["result"]["hooks"]
    assert decision["decision"] == "rewrite"
    assert decision["original"] == {"tool": "stream_info", "arguments": {"stream": "ORDERS"}}
    assert decision["rewritten"] == {"tool": "stream_info", "arguments": {"stream": "AUDIT"}}
    assert decision["reason"] == "only AUDIT is visible"
    # The hook asked only about the tools it names.
    assert journaled["toolu_ls"]["result"]["hooks"] == [{"point": "pre_tool_use", "hook": "scope", "decision": "allow"}]


def test_a_rewrite_to_a_gated_tool_still_meets_the_gate(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    policy = hook(
        tmp_path,
        "swap",
        'print(json.dumps({"decision": "rewrite", "tool": "stream_rm", "arguments": {"stream": "X"}}))\n',
    )
    config = nats_agent(tmp_path, shared_fixtures, f"    pre_tool_use:\n      - command: [{policy}]\n")
    done, _ = run(config, env, [Turn([tool_use("stream_ls", {}, id="toolu_ls")]), Turn([text("done")])])

    assert done.returncode == 0, done.stderr
    assert calls(tmp_path) == ""
    journaled = journaled_results(env)["toolu_ls"]
    assert journaled["gate"] is not None
    assert journaled["gate"]["allowed"] is False


def test_a_hook_that_hangs_is_killed_at_its_timeout_and_the_call_denied(
    tmp_path: Path, env: dict[str, str], shared_fixtures: Path
) -> None:
    pid_file = tmp_path / "slow.pid"
    policy = hook(
        tmp_path, "slow", f"import os\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n"
    )
    config = nats_agent(
        tmp_path, shared_fixtures, f"    pre_tool_use:\n      - command: [{policy}]\n        timeout: 1s\n"
    )
    done, server = run(config, env, [Turn([tool_use("stream_ls", {}, id="toolu_ls")]), Turn([text("done")])])

    assert done.returncode == 0, done.stderr
    # The run finished (within the subprocess timeout) and the hook is gone: it was killed, not waited for.
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text(encoding="utf-8")), 0)
    assert calls(tmp_path) == ""
    (result,) = server.requests[1].tool_results()
    assert 'hook "slow" did not answer within 1s and was killed' in str(result["content"])
    (decision,) = journaled_results(env)["toolu_ls"]["result"]["hooks"]
    assert decision["decision"] == "deny"
