"""A server that announced it is ready already stops gracefully on SIGINT or SIGTERM.

Each run is a child process: the signal goes to the process serving, and on a regression it must not
reach pytest itself.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# The signal is sent from inside the announcement: the earliest moment an operator or supervisor
# that waits for it could send one.
_PROBE = """
import os, signal, sys
from fiskai_mcp import build_server, serve
sig = getattr(signal, sys.argv[1])
serve(build_server([], log=lambda _line: None), port=0, on_ready=lambda _url: os.kill(os.getpid(), sig))
print("returned")
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_the_moment_the_server_is_announced_stops_it_gracefully(sig: str) -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE, sig], capture_output=True, text=True, timeout=30, check=False)

    assert (done.returncode, done.stdout) == (0, "returned\n"), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
