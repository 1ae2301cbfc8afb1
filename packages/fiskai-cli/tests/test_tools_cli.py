"""`fiskai tools`: list, schema, and call a tool exactly as a model would, gate and all."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fiskai_cli._root import cli
from fiskai_core.testing import write_fake_app

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "fixturectl" / "agent.yaml"
MODEL = ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"
DRAIN = '{"node": "n1", "reason": "maintenance"}'


def _invoke(*args: str) -> tuple[int, str, str]:
    # CliRunner's stdin is not a terminal: exactly a piped or scheduled call.
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _fake(tmp_path: Path, *, exit_code: int = 0) -> tuple[Path, Path]:
    """A config over a fake fixturectl that logs every call; returns the config and the call log."""
    app = write_fake_app(tmp_path, MODEL, name="fixturectl", exit_code=exit_code)
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"application_path: {app}\nsystem_prompt: p\nllm: {{model: m}}\nharness: {{confirm_tags: [audit]}}\n",
        encoding="utf-8",
    )
    return config, tmp_path / "fixturectl.calls"


def test_list_shows_every_selected_tool_and_which_ones_an_operator_must_approve() -> None:
    code, out, _ = _invoke("-c", str(EXAMPLE), "tools", "list", "--format", "json")
    assert code == 0
    tools = {tool["name"]: tool for tool in json.loads(out)["tools"]}
    assert "fail" not in tools  # excluded by the example's configuration
    assert "cluster_node_remove" not in tools  # ai:deny
    assert (tools["cluster_node_list"]["confirm"], tools["cluster_node_list"]["trigger_tag"]) == (False, None)
    assert (tools["cluster_node_drain"]["confirm"], tools["cluster_node_drain"]["trigger_tag"]) == (True, "ai:confirm")
    code, out, _ = _invoke("-c", str(EXAMPLE), "tools", "list")
    assert code == 0
    assert out.splitlines()[0].split() == ["TOOL", "CONFIRM", "DESCRIPTION", "TAGS"]


def test_schema_prints_the_schema_the_model_gets_with_exposed_global_flags() -> None:
    code, out, _ = _invoke("-c", str(EXAMPLE), "tools", "schema", "cluster_node_drain")
    assert code == 0
    schema = json.loads(out)
    assert schema["required"] == ["node", "reason"]
    assert schema["additionalProperties"] is False
    assert "output" in schema["properties"]  # the example exposes the global flag --output


def test_call_runs_an_ungated_tool_and_prints_its_output_and_exit_code(tmp_path: Path) -> None:
    config, calls = _fake(tmp_path)
    code, out, err = _invoke("-c", str(config), "tools", "call", "cluster_node_list", '{"state": "up"}')
    assert code == 0, err
    assert out.splitlines()[:4] == ["[cluster]", "[node]", "[list]", "[--state=up]"]
    assert err.strip() == "exit code 0"
    assert calls.read_text(encoding="utf-8").splitlines() == ["[cluster]", "[node]", "[list]", "[--state=up]", "--"]


def test_call_json_prints_the_tool_result_and_passes_the_exit_code_on(tmp_path: Path) -> None:
    config, _ = _fake(tmp_path, exit_code=3)
    code, out, _ = _invoke("-c", str(config), "tools", "call", "cluster_node_list", "{}", "--format", "json")
    assert code == 3
    document = json.loads(out)
    assert (document["is_error"], document["exit_code"]) == (False, 3)
    assert document["gate"] == {"allowed": True, "channel": "ungated", "tag": None}
    assert json.loads(document["text"])["command"] == "cluster node list"


def test_a_gated_tool_without_a_terminal_is_denied_and_nothing_runs(tmp_path: Path) -> None:
    config, calls = _fake(tmp_path)
    code, out, err = _invoke("-c", str(config), "tools", "call", "cluster_node_drain", DRAIN)
    assert (code, out) == (1, "")
    assert err.strip() == "Error: not run: no interactive terminal is attached, so no operator could be asked"
    code, out, _ = _invoke("-c", str(config), "tools", "call", "cluster_node_drain", DRAIN, "--format", "json")
    assert code == 1
    document = json.loads(out)
    assert json.loads(document["text"]) == {"allowed": False, "reason": document["gate"]["reason"]}
    assert (document["gate"]["channel"], document["gate"]["tag"]) == ("no_terminal", "ai:confirm")
    # A configured confirm tag gates too: cluster_config_set carries `audit`.
    code, _, _ = _invoke("-c", str(config), "tools", "call", "cluster_config_set", '{"key": "a", "value": "b"}')
    assert code == 1
    assert not calls.exists()


def test_dry_run_prints_the_argv_and_the_gate_verdict_and_runs_nothing(tmp_path: Path) -> None:
    config, calls = _fake(tmp_path)
    code, out, err = _invoke("-c", str(config), "tools", "call", "cluster_node_drain", DRAIN, "--dry-run")
    assert code == 0
    assert out.strip() == f"{tmp_path / 'fixturectl'} cluster node drain --reason=maintenance -- n1"
    assert "the call would be denied: tag ai:confirm needs approval and no terminal is attached" in err
    code, out, _ = _invoke(
        "-c", str(config), "tools", "call", "cluster_node_list", "{}", "--dry-run", "--format", "json"
    )
    assert code == 0
    assert json.loads(out)["argv"] == [str(tmp_path / "fixturectl"), "cluster", "node", "list"]
    assert json.loads(out)["gate"] == "ungated"
    assert not calls.exists()


def test_arguments_the_model_could_get_wrong_are_refused_before_the_gate(tmp_path: Path) -> None:
    config, calls = _fake(tmp_path)
    code, _, err = _invoke("-c", str(config), "tools", "call", "cluster_node_drain", '{"node": "n1"}')
    assert code == 1
    # Required parameters first (the reference order), in fisk-ai's words.
    assert 'tool "cluster_node_drain" was called without required parameter(s): reason.' in err
    code, _, err = _invoke("-c", str(config), "tools", "call", "cluster_node_list", '{"state": ')
    assert code == 1
    assert "Traceback" not in err
    code, _, err = _invoke("-c", str(config), "tools", "call", "cluster_node_list", '{"--state": "x"}')
    assert code == 1
    code, _, err = _invoke("-c", str(config), "tools", "call", "cluster_node_drian", "{}")
    assert code == 1
    assert (
        err.strip() == 'Error: unknown tool "cluster_node_drian"; did you mean cluster_node_drain, cluster_node_list?'
    )
    assert not calls.exists()


def test_without_an_application_tools_says_what_is_missing(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("identity: bare\n", encoding="utf-8")
    code, _, err = _invoke("-c", str(config), "tools", "list")
    assert code == 1
    assert "names no application_path" in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pseudo-terminal")
def test_on_a_terminal_the_operator_is_asked_and_a_yes_runs_the_command(tmp_path: Path) -> None:
    """Steps:

    1. Run `fiskai tools call` for a gated tool with a pseudo-terminal as stdin.
    2. The approval question names the exact argv; answer 2 (yes, once).
    3. The command runs once with that argv.
    """
    config, calls = _fake(tmp_path)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "tools", "call", "cluster_node_drain", DRAIN],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    os.close(follower)
    try:
        assert proc.stderr is not None
        seen = b""
        deadline = time.monotonic() + 30
        while b"Choose 1-" not in seen:
            assert time.monotonic() < deadline, seen
            ready, _, _ = select.select([proc.stderr], [], [], max(deadline - time.monotonic(), 0))
            if ready:
                chunk = os.read(proc.stderr.fileno(), 4096)
                assert chunk, seen
                seen += chunk
        assert f"-> {tmp_path / 'fixturectl'} cluster node drain --reason=maintenance -- n1".encode() in seen
        os.write(leader, b"2\n")
        out, _ = proc.communicate(timeout=30)
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert b"[--reason=maintenance]" in out
    assert calls.read_text(encoding="utf-8").count("--\n") == 1


def test_arguments_can_come_from_stdin(tmp_path: Path) -> None:
    config, calls = _fake(tmp_path)
    result = CliRunner().invoke(
        cli, ["-c", str(config), "tools", "call", "cluster_config_get", "-"], input='{"key": "a b"}'
    )
    assert result.exit_code == 0, result.output
    assert calls.read_text(encoding="utf-8").splitlines() == ["[cluster]", "[config]", "[get]", "[--]", "[a b]", "--"]


def test_a_persisted_approval_rule_lets_a_gated_call_run_without_a_terminal_as_in_a_run(tmp_path: Path) -> None:
    config, calls = _fake(tmp_path)
    code, _, err = _invoke("-c", str(config), "approvals", "add", "cluster_node_drain", "--reason=*", "@1=n*")
    assert code == 0, err
    code, out, _ = _invoke("-c", str(config), "tools", "call", "cluster_node_drain", DRAIN, "--dry-run")
    assert code == 0
    code, out, _ = _invoke(
        "-c", str(config), "tools", "call", "cluster_node_drain", DRAIN, "--dry-run", "--format", "json"
    )
    assert (json.loads(out)["gate"], json.loads(out)["rule"]) == ("rule", "cluster_node_drain '--reason=*' '@1=n*'")
    assert not calls.exists()
    code, out, _ = _invoke("-c", str(config), "tools", "call", "cluster_node_drain", DRAIN, "--format", "json")
    assert code == 0
    gate = json.loads(out)["gate"]
    assert (gate["allowed"], gate["channel"], gate["rule"]) == (True, "rule", "cluster_node_drain '--reason=*' '@1=n*'")
    assert calls.read_text(encoding="utf-8").count("--\n") == 1
    # The rule is as narrow as it was written: another node is still denied.
    code, _, _ = _invoke("-c", str(config), "tools", "call", "cluster_node_drain", '{"node": "m1", "reason": "x"}')
    assert code == 1
    assert calls.read_text(encoding="utf-8").count("--\n") == 1
