"""Render the README's screenshot of `fiskai run`'s full screen from a real run against the scripted model.

    uv run python docs/tui/make_screenshot.py

Runs fiskai over examples/fixturectl in a 110x30 tmux pane (its own tmux server), the model scripted by
`fiskai_agent.testing.MessagesServer`; the pane is captured while the operator is asked to approve a gated drain, with its colours (`capture-pane -e`) into `docs/tui/run.ansi` (then the drain is approved and the run completes), then drawn as SVG
(rich) into `docs/tui/run.svg` and, when `rsvg-convert` is installed, as PNG into `docs/tui/run.png`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from rich.console import Console
from rich.text import Text

from fiskai_agent.testing import MessagesServer, Turn, Usage, text, thinking, tool_use

_ROOT = Path(__file__).resolve().parents[2]
_OUT = Path(__file__).resolve().parent
_CONFIG = _ROOT / "examples" / "fixturectl" / "agent.yaml"
_WIDTH, _HEIGHT = 110, 30

_SCRIPT = [
    Turn(
        [
            thinking("The operator wants unhealthy nodes drained. List the nodes first, then drain what is down."),
            text("I'll list the cluster's nodes first to see which ones are unhealthy."),
            tool_use("cluster_node_list", {"state": "down"}),
        ],
        usage=Usage(input_tokens=2310, output_tokens=84),
    ),
    Turn(
        [
            text("Node **n3** is down. Draining it needs your approval (it changes the cluster)."),
            tool_use("cluster_node_drain", {"node": "n3", "reason": "unhealthy, draining for repair"}),
        ],
        usage=Usage(input_tokens=412, output_tokens=96, cache_read_input_tokens=2240),
    ),
    Turn(
        [
            text(
                "## Summary\n\n- **n3** was down and is now drained (exit 0).\n"
                "- No other node reported a problem.\n\nNext: repair n3, then `cluster node undrain n3`."
            )
        ],
        usage=Usage(input_tokens=388, output_tokens=71, cache_read_input_tokens=2650),
    ),
]


def main() -> None:
    """Run, capture, render."""
    tmux = shutil.which("tmux")
    if tmux is None:
        sys.exit("tmux is needed (apt-get install tmux)")
    socket = f"fiskai-shot-{uuid.uuid4().hex[:8]}"

    def run(*args: str) -> str:
        return subprocess.run(
            [tmux, "-L", socket, "-f", "/dev/null", *args], capture_output=True, text=True, check=True
        ).stdout

    def wait_for(needle: str) -> str:
        deadline = time.monotonic() + 30
        while needle not in (shown := run("capture-pane", "-p", "-t", "s")):
            if time.monotonic() > deadline:
                sys.exit(f"timed out waiting for {needle!r}:\n{shown}")
            time.sleep(0.05)
        return shown

    with tempfile.TemporaryDirectory() as home, MessagesServer(_SCRIPT) as server:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": home,
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "XDG_STATE_HOME": home,
            "ANTHROPIC_API_KEY": "scripted",
            "ANTHROPIC_BASE_URL": server.base_url,
        }
        argv = [sys.executable, "-m", "fiskai_cli", "-c", str(_CONFIG), "run", "drain the unhealthy nodes"]
        env_args = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        run("new-session", "-d", "-s", "s", "-x", str(_WIDTH), "-y", str(_HEIGHT), *env_args, shlex.join(argv))
        try:
            wait_for("Run this command?")
            # The moment worth showing: the run paused on an approval, asked in place.
            ansi = run("capture-pane", "-p", "-e", "-t", "s")
            run("send-keys", "-t", "s", "2")
            wait_for("--- run complete, press q to quit ---")
            run("send-keys", "-t", "s", "q")
        finally:
            subprocess.run([tmux, "-L", socket, "kill-server"], capture_output=True, check=False)

    (_OUT / "run.ansi").write_text(ansi, encoding="utf-8")
    with open(os.devnull, "w", encoding="utf-8") as sink:
        console = Console(record=True, width=_WIDTH, file=sink, force_terminal=True)
        console.print(Text.from_ansi(ansi.rstrip("\n")), soft_wrap=True)
    svg = _OUT / "run.svg"
    svg.write_text(console.export_svg(title="fiskai run"), encoding="utf-8")
    rsvg = shutil.which("rsvg-convert")
    if rsvg is not None:
        subprocess.run([rsvg, "-o", str(_OUT / "run.png"), str(svg)], check=True)
    sys.stderr.write(f"wrote {svg.relative_to(_ROOT)}" + (" and run.png\n" if rsvg else "\n"))


if __name__ == "__main__":
    main()
