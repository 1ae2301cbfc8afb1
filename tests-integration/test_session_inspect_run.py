"""`fiskai session stats | query | search` on the journal of a real run that is still going.

A checkpointed `fiskai run` (its model is the scripted Messages server) runs a command, has a gated command
refused (no terminal), calls a tool that does not exist, then waits on the model: the run holds its lock and
its journal is open. The inspection commands, run as separate processes, read it without disturbing it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fiskai_agent.testing import Hang, MessagesServer, RunProcesses, Turn, tool_use

_ROOT = Path(__file__).resolve().parents[1]
_RUNS = RunProcesses()


@pytest.fixture(autouse=True)
def _reap() -> Iterator[None]:
    yield
    _RUNS.reap()


def _inspect(env: dict[str, str], config: Path, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "session", *args, "--format", "json"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_inspecting_a_live_run_reports_its_calls_and_leaves_it_running(tmp_path: Path) -> None:
    folder = tmp_path / "app"
    shutil.copytree(_ROOT / "examples" / "fixturectl", folder)
    config = folder / "agent.yaml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_", "NATS_"))}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", ANTHROPIC_API_KEY="test-key")
    with MessagesServer() as server:
        server.add(
            Turn(
                [tool_use("cluster_node_list", {}), tool_use("cluster_node_drain", {"node": "n1", "reason": "patch"})]
            ),
            Turn([tool_use("no_such_tool", {})]),
            Hang(),
        )
        run = _RUNS.start(["-c", str(config), "run", "--checkpoint", "--name", "live", "look"], env, server)
        server.wait_for_requests(3, timeout=60)

        stats = _inspect(env, config, "stats", "live")
        assert (stats["run_id"], stats["terminal"], stats["ended"], stats["iterations"]) == ("live", None, False, 2)
        assert stats["max_iterations"] == 25 and stats["max_tokens"] == 200000
        tools = {t["tool"]: t for t in stats["tools"]}
        listed = tools["cluster_node_list"]
        assert (listed["kinds"], listed["dispatched"], listed["errors"]) == (["application"], 1, 0)
        drain = tools["cluster_node_drain"]
        # A denial is what the model is told, not an error result.
        assert (drain["dispatched"], drain["undispatched"], drain["errors"]) == (0, 1, 0)
        assert (tools["no_such_tool"]["undispatched"], tools["no_such_tool"]["kinds"]) == (1, ["unknown"])

        denied = _inspect(env, config, "query", "live", "--tool", "cluster_node_drain")["calls"]
        assert [(c["input"], c["answer"]["kind"]) for c in denied] == [({"node": "n1", "reason": "patch"}, "denied")]
        missing = _inspect(env, config, "query", "live", "--tool", "no_such_tool", "--errors")["calls"]
        assert [(c["answer"]["kind"], c["answer"]["dispatched"]) for c in missing] == [("refused", False)]
        found = _inspect(env, config, "search", "--status", "open", "--match", "^look$")
        assert [r["run_id"] for r in found["runs"]] == ["live"]

        assert run.poll() is None  # still waiting on its model: reading neither stopped nor blocked it
        run.kill()
        run.communicate(timeout=30)
