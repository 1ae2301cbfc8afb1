"""Render the README's screenshot of the web channel's chat page from a real run against the scripted model.

    uv run python docs/web/screenshot.py

Runs `fiskai serve` over examples/fixturectl (on PATH through a short symlink, so the command line on the
page names no checkout path) with `expose.agent.web` on a free loopback port, the model
scripted by `fiskai_agent.testing.MessagesServer`, and drives the page in headless Chromium (Playwright
for Python with Debian's chromium: `FISKAI_CHROMIUM`, default `/usr/bin/chromium`). The first turn lists
the nodes (a folded tool call) and stops on the gated drain; the page is captured there, with the
drain's command line and the approval buttons, into `docs/web/chat.png`; then "Allow once" is pressed
and the run completes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from fiskai_agent.testing import MessagesServer, Turn, Usage, text, tool_use

_ROOT = Path(__file__).resolve().parents[2]
_OUT = Path(__file__).resolve().parent / "chat.png"
_APP = _ROOT / "examples" / "fixturectl" / "fixturectl"
_CHROMIUM = Path(os.environ.get("FISKAI_CHROMIUM") or "/usr/bin/chromium")

_SCRIPT = [
    Turn(
        [
            text("I'll list the cluster's nodes first to see which ones are unhealthy."),
            tool_use("cluster_node_list", {"state": "down"}),
        ],
        usage=Usage(input_tokens=2310, output_tokens=84),
    ),
    Turn(
        [
            text("Node n3 is down. Draining it changes the cluster, so it needs your approval."),
            tool_use("cluster_node_drain", {"node": "n3", "reason": "unhealthy, draining for repair"}),
        ],
        usage=Usage(input_tokens=412, output_tokens=96, cache_read_input_tokens=2240),
    ),
    Turn(
        [text("n3 was down and is now drained (exit 0). No other node reported a problem.")],
        usage=Usage(input_tokens=388, output_tokens=71, cache_read_input_tokens=2650),
    ),
]


def _config(folder: Path, port: int) -> Path:
    config = folder / "agent.yaml"
    config.write_text(
        "identity: cluster-ops\n"
        "application_path: fixturectl\n"  # found on PATH, so the page shows no checkout path
        "system_prompt: You operate an imaginary cluster through the fixturectl tools.\n"
        "display_name: Cluster operations\n"
        "description: Inspects the cluster and drains unhealthy nodes, asking before it changes anything.\n"
        "prompts: ['drain the unhealthy nodes', 'which nodes are down?', 'show the cluster config']\n"
        "harness: {confirm_tags: ['impact:rw']}\n"
        "llm: {model: claude-sonnet-4-6}\n"
        f"expose: {{agent: {{web: {{listen: '127.0.0.1:{port}', origins: ['http://127.0.0.1:{port}']}}}}}}\n",
        encoding="utf-8",
    )
    (folder / "runs").mkdir()
    return config


def _wait_for(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, OSError):
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"fiskai serve did not answer on {url}")
            time.sleep(0.1)


def main() -> None:
    """Serve, drive, capture."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        sys.exit("playwright is needed (uv sync installs it with the dev group)")
    if not os.access(_CHROMIUM, os.X_OK):
        sys.exit(f"chromium is needed at {_CHROMIUM} (apt-get install chromium, or set FISKAI_CHROMIUM)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as home, MessagesServer(_SCRIPT) as model:
        folder = Path(home)
        config = _config(folder, port)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
        env.update(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="scripted", XDG_STATE_HOME=home)
        # The command line on the page names the binary's path: a short one, not this checkout's.
        bin_dir = Path(tempfile.gettempdir()) / "fiskai-demo" / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        for name in ("fixturectl", "fixturectl.introspect.json"):  # the script reads its model beside itself
            (bin_dir / name).unlink(missing_ok=True)
            (bin_dir / name).symlink_to(_APP.parent / name)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        argv = [sys.executable, "-m", "fiskai_cli", "-c", str(config), "serve", "--state-dir", str(folder / "runs")]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env)
        url = f"http://127.0.0.1:{port}/fisk/v1"
        try:
            _wait_for(url + "/card", proc)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(_CHROMIUM), headless=True)
                page = browser.new_page(viewport={"width": 1180, "height": 900}, device_scale_factor=1)
                page.goto(url)
                page.get_by_label("Message to the agent").fill("drain the unhealthy nodes")
                page.get_by_label("Message to the agent").press("Enter")
                expect(page.get_by_role("group", name="Approval")).to_be_visible(timeout=30_000)
                # The moment worth showing: the listing folded, the drain's command line and the three answers.
                page.locator("#prompt").blur()
                page.screenshot(path=str(_OUT))
                page.get_by_role("button", name="Allow once").click()
                expect(page.get_by_role("log")).to_contain_text("now drained", timeout=30_000)
                browser.close()
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    sys.stderr.write(f"wrote {_OUT.relative_to(_ROOT)}\n")


if __name__ == "__main__":
    main()
