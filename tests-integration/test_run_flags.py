"""`fiskai run`'s credential and presentation flags through their environment forms, without a terminal.

The terminal side of the same flags (`--no-color`, `--tool-output` on the full screen and the line UI)
is in test_run_tui.py, where a tmux pane is the terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use

_CONFIG = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "agent.yaml"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "FISKAI_"))
        and k not in {"NO_TUI", "VERBOSE", "NO_COLOR", "TOOL_OUTPUT", "HTTP_DEBUG"}
    }
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    return base


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(_CONFIG), "run", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_environment_forms_key_file_http_debug_verbose_and_no_tool_output(env: dict[str, str], tmp_path: Path) -> None:
    """ANTHROPIC_API_KEY_FILE is the key sent (trailing newline dropped); HTTP_DEBUG=1 writes
    ./http-debug.log; VERBOSE=1 prints the start details; TOOL_OUTPUT=none shows the call, not its result."""
    key_file = tmp_path / "anthropic.key"
    key_file.write_text("sk-from-the-file\n", encoding="utf-8")
    script = [Turn([tool_use("cluster_node_list", {}, id="l1")]), Turn([text("All good.")])]
    with MessagesServer(script) as server:
        env.update(
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY_FILE=str(key_file),
            HTTP_DEBUG="1",
            VERBOSE="1",
            TOOL_OUTPUT="none",
        )
        done = _run(["list the nodes"], env, tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "All good.\n"
        sent = [f"{r.headers.get('x-api-key')} {r.headers.get('authorization')}" for r in server.requests]
        assert len(sent) == 2 and all("sk-from-the-file " in f"{h} " for h in sent), sent
    assert "Running agent with" in done.stderr  # VERBOSE
    assert "-> " in done.stderr and "<-" not in done.stderr  # TOOL_OUTPUT=none
    dump = tmp_path / "http-debug.log"
    assert dump.exists() and "list the nodes" in dump.read_text(encoding="utf-8")
    assert oct(dump.stat().st_mode & 0o777) == "0o600"


def test_the_flags_win_over_their_environment_and_a_bad_key_file_is_named(env: dict[str, str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.key"
    empty.write_text("  \n", encoding="utf-8")
    env.update(ANTHROPIC_API_KEY="sk-env", TOOL_OUTPUT="sideways")
    done = _run(["--api-key-file", str(empty), "--tool-output", "full", "status?"], env, tmp_path)
    assert done.returncode == 1
    assert f'--api-key-file "{empty}" is empty; write the API key into it' in done.stderr
    assert "Traceback" not in done.stderr
    done = _run(["status?"], env, tmp_path)
    assert done.returncode == 2
    assert "'sideways' is not one of 'folded', 'full', 'none'" in done.stderr
