"""The stdio transport's two ways of stopping a child: a grace period when closed, none when abandoned."""

import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp.client.stdio import StdioServerParameters

from fiskai_mcp.client._stdio import KILL_AFTER_SECONDS, StdioChild, stdio_transport

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX; Windows uses the SDK's transport"),
]

# Children that say they are up (a line on stderr would be lost: a file) before the block ends.
_STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
open(sys.argv[1], "w").write(str(grandchild.pid))
time.sleep(600)
"""

_POLITE = """
import sys
open(sys.argv[1], "w").write("up")
sys.stdin.read()
open(sys.argv[1], "w").write("stdin closed, exiting")
"""


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie left for a non-reaping init counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def params(tmp_path: Path, source: str) -> tuple[StdioServerParameters, Path]:
    script, marker = tmp_path / "child.py", tmp_path / "marker"
    script.write_text(source, encoding="utf-8")
    return StdioServerParameters(command=sys.executable, args=[str(script), str(marker)]), marker


def written(marker: Path) -> str:
    return marker.read_text(encoding="utf-8") if marker.exists() else ""


async def until_written(marker: Path) -> None:
    """Until the child has written its marker (polled: the child is another process)."""
    for _ in range(1500):
        if written(marker):
            return
        await anyio.sleep(0.02)
    pytest.fail("the child never started")


async def test_an_abandoned_child_that_ignores_sigterm_is_killed_with_its_group_at_once(tmp_path: Path) -> None:
    server, marker = params(tmp_path, _STUBBORN)
    child = StdioChild()
    async with stdio_transport(server, child):
        await until_written(marker)
        child.abandon()
        began = time.monotonic()
    elapsed = time.monotonic() - began
    assert child.pid is not None
    assert not alive(child.pid)
    assert not alive(int(marker.read_text(encoding="utf-8")))
    # SIGTERM, KILL_AFTER_SECONDS, SIGKILL; 1 s for a loaded machine (the SDK's close took 2 s more).
    assert elapsed < KILL_AFTER_SECONDS + 1.0, elapsed


async def test_a_closed_child_exits_on_its_own_when_its_stdin_closes(tmp_path: Path) -> None:
    server, marker = params(tmp_path, _POLITE)
    child = StdioChild()
    async with stdio_transport(server, child):
        await until_written(marker)
    assert marker.read_text(encoding="utf-8") == "stdin closed, exiting"
    assert child.pid is not None and not alive(child.pid)


async def test_a_cancelled_session_abandons_its_child(tmp_path: Path) -> None:
    server, marker = params(tmp_path, _STUBBORN)
    child = StdioChild()
    with anyio.move_on_after(30) as scope:
        async with stdio_transport(server, child):
            await until_written(marker)
            scope.cancel()
            await anyio.sleep(60)
    assert child.abandoned
    assert child.pid is not None and not alive(child.pid)
