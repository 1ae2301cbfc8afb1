"""Approvals and provenance through the real CLI: rules managed with `fiskai approvals`, honoured by
`fiskai run` (a subprocess with no terminal, the real SDK, the scripted Messages server), and every
gate decision visible with `fiskai session show ID --approvals`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use

_ROOT = Path(__file__).resolve().parents[1]
_CONFIG = _ROOT / "examples" / "fixturectl" / "agent.yaml"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1")
    return base


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    with MessagesServer() as scripted:
        yield scripted


def fiskai(
    args: Sequence[str], env: Mapping[str, str], server: MessagesServer | None = None
) -> subprocess.CompletedProcess[str]:
    full = dict(env)
    if server is not None:
        full.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="test-key")
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(_CONFIG), *args],
        cwd=Path(env["XDG_STATE_HOME"]).parent,
        env=full,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def rules_file(env: Mapping[str, str]) -> Path:
    return Path(env["XDG_STATE_HOME"]) / "fiskai" / "approvals" / "fixturectl.yaml"


def test_add_list_check_rm(env: dict[str, str]) -> None:
    added = fiskai(["approvals", "add", "cluster_node_drain", "--reason=*", "@1=n?", "--format", "json"], env)
    assert added.returncode == 0, added.stderr
    rule = json.loads(added.stdout)["added"]
    assert rule["rule"] == "cluster_node_drain '--reason=*' '@1=n?'"
    assert rule["tags"] == ["ai:confirm", "impact:rw"]
    path = rules_file(env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700

    listed = json.loads(fiskai(["approvals", "list", "--format", "json"], env).stdout)
    assert [r["id"] for r in listed["rules"]] == [rule["id"]]

    yes = fiskai(["approvals", "check", "cluster_node_drain", '{"node": "n3", "reason": "disk"}'], env)
    assert yes.returncode == 0 and f"approved by {rule['id']}" in yes.stdout
    # The same node with one flag more is a different command line: not approved.
    no = fiskai(["approvals", "check", "cluster_node_drain", '{"node": "n3", "reason": "disk", "force": true}'], env)
    assert no.returncode == 1 and "no rule approves" in no.stdout

    removed = fiskai(["approvals", "rm", rule["id"]], env)
    assert removed.returncode == 0 and f"removed {rule['id']}" in removed.stdout
    assert json.loads(fiskai(["approvals", "list", "--format", "json"], env).stdout)["rules"] == []


def test_refusals_are_one_line_errors(env: dict[str, str]) -> None:
    deny = fiskai(["approvals", "add", "cluster_node_remove", "..."], env)
    assert deny.returncode == 1 and "tagged ai:deny" in deny.stderr
    ungated = fiskai(["approvals", "add", "cluster_config_get", "..."], env)
    assert ungated.returncode == 1 and "is not gated" in ungated.stderr
    bad = fiskai(["approvals", "add", "cluster_node_drain", "node=n1"], env)
    assert bad.returncode == 1 and "cannot read pattern 'node=n1'" in bad.stderr
    missing = fiskai(["approvals", "rm", "0000000000"], env)
    assert missing.returncode == 1 and "nothing was removed" in missing.stderr
    assert not rules_file(env).exists()
    for result in (deny, ungated, bad, missing):
        assert "Traceback" not in result.stderr


def test_a_malformed_rules_file_stops_the_run_naming_it(env: dict[str, str], server: MessagesServer) -> None:
    path = rules_file(env)
    path.parent.mkdir(parents=True)
    path.write_text("rules: [\n", encoding="utf-8")
    listed = fiskai(["approvals", "list"], env)
    assert listed.returncode == 1 and str(path) in listed.stderr and "not valid YAML" in listed.stderr
    ran = fiskai(["run", "drain n3"], env, server)
    assert ran.returncode == 1 and str(path) in ran.stderr and "Traceback" not in ran.stderr
    assert server.requests == [], "no model call before the rules are readable"


def test_run_honours_a_persisted_rule_and_session_show_lists_every_decision(
    env: dict[str, str], server: MessagesServer
) -> None:
    assert fiskai(["approvals", "add", "cluster_node_drain", "--reason=*", "@1=n*"], env).returncode == 0
    server.add(
        Turn(
            [
                tool_use("cluster_node_drain", {"node": "n3", "reason": "disk"}, id="toolu_ok"),
                tool_use("cluster_node_drain", {"node": "db1", "reason": "disk"}, id="toolu_no"),
            ],
            stop_reason="tool_use",
        ),
        Turn([text("drained n3 only")]),
    )
    ran = fiskai(["run", "--checkpoint", "--name", "drains", "drain n3 and db1"], env, server)
    assert ran.returncode == 0, ran.stderr
    # No terminal, yet the start-up warning does not claim every gated call will be declined: one may run.
    assert "always be declined" not in ran.stderr
    assert "1 saved approval rule(s) still let matching calls of cluster_node_drain run" in ran.stderr
    # The line UI says which rule let the call run, right under it.
    lines = ran.stderr.splitlines()
    call = next(i for i, line in enumerate(lines) if line.startswith("-> ") and "-- n3" in line)
    assert lines[call + 1] == "   approved by rule \"cluster_node_drain '--reason=*' '@1=n*'\""
    results = {r["tool_use_id"]: r for r in server.requests[1].tool_results()}
    assert "fixturectl was called with" in str(results["toolu_ok"]["content"])
    assert '"allowed":false' in str(results["toolu_no"]["content"])

    shown = fiskai(["session", "show", "drains", "--approvals", "--format", "json"], env)
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)
    assert [(r["tool_use_id"], r["allowed"], r["channel"], r["rule"]) for r in rows] == [
        ("toolu_ok", True, "rule", "cluster_node_drain '--reason=*' '@1=n*'"),
        ("toolu_no", False, "no_terminal", None),
    ]
    assert all(r["tool"] == "cluster_node_drain" and len(r["digest"]) == 64 for r in rows)
    table = fiskai(["session", "show", "drains", "--approvals"], env).stdout
    assert "persisted rule" in table and "no terminal" in table


def test_a_rule_made_under_other_tags_no_longer_applies_and_check_says_why(
    env: dict[str, str], server: MessagesServer
) -> None:
    """The application re-tagged drain since the rule was made (here: the rule says only ai:confirm)."""
    path = rules_file(env)
    path.parent.mkdir(parents=True)
    path.write_text(
        "rules:\n  - tool: cluster_node_drain\n    patterns: ['...']\n    tags: [ai:confirm]\n", encoding="utf-8"
    )
    checked = fiskai(["approvals", "check", "cluster_node_drain", '{"node": "n1", "reason": "x"}'], env)
    assert checked.returncode == 1
    assert "no longer applies" in checked.stderr and "now tagged ai:confirm,impact:rw" in checked.stderr
    server.add(
        Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "x"}, id="toolu_d")], stop_reason="tool_use"),
        Turn([text("not drained")]),
    )
    ran = fiskai(["run", "drain n1"], env, server)
    assert ran.returncode == 0, ran.stderr
    assert '"allowed":false' in str(server.requests[1].tool_results()[0]["content"])


def test_a_planted_symlink_feeds_no_rule_to_run_and_add_keeps_nothing(
    env: dict[str, str], server: MessagesServer, tmp_path: Path
) -> None:
    """Someone who could write the state folder once links the rules file to theirs: every path refuses it."""
    theirs = tmp_path / "theirs.yaml"
    planted = "rules:\n  - tool: cluster_node_drain\n    patterns: ['...']\n    tags: [ai:confirm, impact:rw]\n"
    theirs.write_text(planted, encoding="utf-8")
    theirs.chmod(0o600)
    path = rules_file(env)
    path.parent.mkdir(parents=True, mode=0o700)
    path.symlink_to(theirs)

    ran = fiskai(["run", "drain n1"], env, server)
    assert ran.returncode == 1 and f'"{path}" is a symbolic link' in ran.stderr and "Traceback" not in ran.stderr
    assert server.requests == [], "no model call, so no drain, before the rules are trustworthy"
    for args in (["approvals", "list"], ["approvals", "add", "cluster_node_drain", "@1=n1", "--reason=*"]):
        refused = fiskai(args, env)
        assert refused.returncode == 1 and "is a symbolic link" in refused.stderr, args
    assert path.is_symlink() and theirs.read_text(encoding="utf-8") == planted, "add kept nothing of theirs"

    path.unlink()  # the fix the message names
    assert fiskai(["approvals", "add", "cluster_node_drain", "@1=n1", "--reason=*"], env).returncode == 0
    assert [r["rule"] for r in json.loads(fiskai(["approvals", "list", "--format", "json"], env).stdout)["rules"]] == [
        "cluster_node_drain @1=n1 '--reason=*'"
    ]
