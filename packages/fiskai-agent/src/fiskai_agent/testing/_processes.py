"""`fiskai` runs as child processes, for tests that crash, signal or resume a real CLI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from fiskai_agent.testing._messages_server import MessagesServer

__all__ = ["RunProcesses"]


class RunProcesses:
    """Starts `python -m fiskai_cli ...` against a `MessagesServer` and reaps every child it started.

    Each child gets its own session (so a test can signal its process group) and the server's URL as
    `ANTHROPIC_BASE_URL`, as an operator running a local model sets it. Call `reap()` after each test
    (an autouse fixture), so a failed test leaves no CLI running nor its pipes open.
    """

    def __init__(self) -> None:
        self._started: list[subprocess.Popen[str]] = []

    def start(
        self, args: Sequence[str], env: Mapping[str, str], server: MessagesServer, *, cwd: Path | None = None
    ) -> subprocess.Popen[str]:
        """Start one run; stdin is /dev/null, stdout and stderr are text pipes."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "fiskai_cli", *args],
            cwd=cwd,
            env={**env, "ANTHROPIC_BASE_URL": server.base_url},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self._started.append(proc)
        return proc

    def reap(self) -> None:
        """Kill every child still running and wait for all of them."""
        while self._started:
            proc = self._started.pop()
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=30)
