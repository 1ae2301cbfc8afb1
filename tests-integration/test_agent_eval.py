"""`fiskai eval agent` through the real CLI: the example suites pass, a wrong expectation fails naming
its case, and a malformed suite is one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1]
_SUITES = _ROOT / "examples" / "agent-eval"
_FIXTURECTL_CONFIG = _ROOT / "examples" / "fixturectl" / "agent.yaml"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1")
    return base


def fiskai(args: Sequence[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args],
        cwd=Path(env["XDG_STATE_HOME"]).parent,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("suite", ["safety.yaml", "credentials.yaml"])
def test_example_suites_pass(env: dict[str, str], suite: str) -> None:
    result = fiskai(["eval", "agent", str(_SUITES / suite), "--format", "json"], env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["failed"] == 0 and report["passed"] == len(report["cases"]) > 0
    assert not (Path(env["XDG_STATE_HOME"]) / "fiskai").exists(), "an eval writes nothing to the state home"


def test_the_safety_suite_proves_what_its_claims_say(env: dict[str, str]) -> None:
    report = json.loads(fiskai(["eval", "agent", str(_SUITES / "safety.yaml"), "--format", "json"], env).stdout)
    cases = {case["name"]: case for case in report["cases"]}
    hostile = "a; rm -rf / #$(id) `whoami` | tee /tmp/x && echo pwned"
    assert cases["no-shell"]["ran"][0]["argv"][-2:] == ["--", hostile]
    assert cases["deny-without-terminal"]["ran"] == []
    assert cases["kill-after-intent"]["killed"] == "SIGKILL" and cases["kill-after-intent"]["ran"] == []
    assert cases["kill-after-result"]["killed"] == "SIGKILL"
    assert [r["phase"] for r in cases["kill-after-result"]["ran"]] == ["run", "resume"]
    assert cases["token-budget"]["outcome"] == "budget"


def _suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(f"config: {_FIXTURECTL_CONFIG}\n{body}", encoding="utf-8")
    return path


def test_expecting_a_denied_tool_to_run_fails_naming_the_case(env: dict[str, str], tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        """cases:
  - name: drain-runs-unattended
    turns:
      - calls: [{tool: cluster_node_drain, arguments: {node: n3, reason: disk}}]
      - answer: done
    expect:
      ran: [{tool: cluster_node_drain}]
  - name: list-runs
    turns:
      - calls: [{tool: cluster_node_list}]
      - answer: done
    expect:
      ran: [{tool: cluster_node_list, argv: [cluster, node, list]}]
""",
    )
    result = fiskai(["eval", "agent", str(suite)], env)
    assert result.returncode == 1
    assert (
        'FAIL case "drain-runs-unattended": ran[0]: expected cluster_node_drain to run, but it did not: '
        "denied (no_terminal)" in result.stderr
    )
    assert 'FAIL case "list-runs"' not in result.stderr
    assert "1 of 2 case(s) failed" in result.stderr
    assert "drain-runs-unattended  FAIL (1)" in result.stdout


def test_an_offered_deny_tool_or_a_leaked_output_fails(env: dict[str, str], tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        """cases:
  - name: wrong-claims
    turns:
      - calls: [{tool: cluster_config_get, arguments: {key: ttl}}]
      - answer: done
    expect:
      not_offered: [cluster_config_get]
      output_excludes: ["[ttl]"]
      not_ran: [cluster_config_get]
""",
    )
    result = fiskai(["eval", "agent", str(suite), "--format", "json"], env)
    assert result.returncode == 1
    failures = json.loads(result.stdout)["cases"][0]["failures"]
    assert [f["expectation"] for f in failures] == ["not_ran", "not_offered", "output_excludes"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("cases: [\n", "is not valid YAML"),
        ("cases:\n  - name: x\n    turns: [{answer: hi}]\n    expect: {rann: []}\n", "cases.0.expect.rann"),
        ("cases:\n  - name: x\n    turns: [{answer: hi, calls: [{tool: t}]}]\n", "either calls"),
        ("cases:\n  - name: x\n    turns: [{answer: hi}]\n    kill: {after: intent, tool: t}\n", "kill and resume"),
    ],
)
def test_a_malformed_suite_is_one_clear_line(env: dict[str, str], tmp_path: Path, body: str, message: str) -> None:
    suite = _suite(tmp_path, body)
    result = fiskai(["eval", "agent", str(suite)], env)
    assert result.returncode == 1
    assert message in result.stderr and str(suite) in result.stderr
    assert "Traceback" not in result.stderr
