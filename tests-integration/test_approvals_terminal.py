"""`fiskai run` on a pseudo-terminal: the operator saves a rule at the prompt, and it decides later calls.

Steps:
1. The model drains n3: the operator answers 5 (save a rule) and widens the suggested rule to `@1=n*`.
2. The model drains n4: the saved rule approves it, no prompt.
3. The model drains db1: the rule does not cover it; the operator is asked again and says no.
4. The rules file holds the rule (0600); the journal holds prompt (with the rule), rule, prompt (denied).
"""

from __future__ import annotations

import os
import pty
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_runstate import FileJournalStore
from fiskai_runstate.gate_log import gate_entries

_CONFIG = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "agent.yaml"
_CHOOSE = "Choose 1-5 [1]: "


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_rule_saved_at_the_prompt_approves_later_matching_calls_only(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", ANTHROPIC_API_KEY="test-key")
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "patch"}, id="d1")]),
        Turn([tool_use("cluster_node_drain", {"node": "n4", "reason": "patch"}, id="d2")]),
        Turn([tool_use("cluster_node_drain", {"node": "db1", "reason": "patch"}, id="d3")]),
        Turn([text("Drained n3 and n4.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "fiskai_cli", "-c", str(_CONFIG), "run", "--checkpoint", "--name", "r", "drain"],
            cwd=tmp_path,
            env=env,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        os.close(slave)
        seen: list[str] = []
        stream = proc.stderr
        assert stream is not None
        reader = threading.Thread(target=lambda: seen.extend(iter(lambda: stream.read(1), "")), daemon=True)
        reader.start()
        try:
            wait_until(lambda: "".join(seen).count(_CHOOSE) >= 1, "the first approval prompt")
            assert "5) Yes, and save a rule for this agent" in "".join(seen)
            os.write(master, b"5\n")
            wait_until(lambda: "[cluster_node_drain --reason=patch @1=n3]: " in "".join(seen), "the rule prompt")
            os.write(master, b"cluster_node_drain --reason=* @1=n*\n")
            wait_until(lambda: "".join(seen).count(_CHOOSE) >= 2, "the prompt for db1")
            os.write(master, b"1\n")
            assert proc.wait(timeout=60) == 0, "".join(seen)
            reader.join(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
            os.close(master)

    stderr = "".join(seen)
    assert stderr.count(_CHOOSE) == 2, "n4 was approved by the saved rule without a prompt"
    rules = Path(env["XDG_STATE_HOME"]) / "fiskai" / "approvals" / "fixturectl.yaml"
    assert "'@1=n*'" in rules.read_text(encoding="utf-8")
    assert stat.S_IMODE(rules.stat().st_mode) == 0o600
    store = FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs")
    decisions = gate_entries(anyio.run(store.load, "r"))
    assert [(d.tool_use_id, d.allowed, d.channel, d.rule) for d in decisions] == [
        ("d1", True, "prompt", "cluster_node_drain '--reason=*' '@1=n*'"),
        ("d2", True, "rule", "cluster_node_drain '--reason=*' '@1=n*'"),
        ("d3", False, "prompt", None),
    ]
