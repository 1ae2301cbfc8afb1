"""fiskai started with SIGINT and SIGHUP ignored, as a CI runner, `nohup` or `cmd &` in a script starts it.

Ignored dispositions survive exec, so each command starts through `sh -c "trap '' INT HUP; exec ..."`.
A command that runs until stopped must still stop on the signal an operator or supervisor sends
(Ctrl-C's SIGINT, SIGTERM), say that it stopped, and leave no process behind; SIGHUP stays ignored,
as `nohup` asked. Every child leads its own process group, which the `children` fixture kills and
reaps after each test, pass or fail.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO

import pytest

from fiskai_agent.testing import MessagesServer, Turn, tool_use

_ROOT = Path(__file__).resolve().parents[1]
_MODEL = _ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"
_IGNORING = ["sh", "-c", "trap '' INT HUP; exec \"$@\"", "sh"]
"""The wrapper: the shell ignores both signals, then execs the command, which inherits that."""


class Child:
    """A `fiskai` process started with SIGINT and SIGHUP ignored; its stdout and stderr lines, as they come."""

    def __init__(self, args: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        self.proc = subprocess.Popen(
            [*_IGNORING, sys.executable, "-m", "fiskai_cli", *args],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._open = 2
        self._readers = [self._read(self.proc.stdout), self._read(self.proc.stderr)]

    def _read(self, stream: IO[str] | None) -> threading.Thread:
        def pump() -> None:
            for line in stream or ():
                self._lines.put(line)
            self._lines.put(None)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        return reader

    def wait_for(self, text: str) -> None:
        """Until a line contains `text`."""
        self.wait_until(lambda: any(text in line for line in self.seen), repr(text))

    def wait_until(self, condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
        """Collect lines until `condition` holds; fail when the output ends or `timeout` seconds pass first."""
        deadline = time.monotonic() + timeout
        while not condition():
            assert self._open, f"the output ended before {what}: {self.output}"
            assert time.monotonic() < deadline, f"no {what} within {timeout} s: {self.output}"
            try:
                line = self._lines.get(timeout=0.05)
            except queue.Empty:
                continue
            if line is None:
                self._open -= 1
            else:
                self.seen.append(line)

    def stop_with(self, sig: signal.Signals) -> int:
        """Send `sig` and wait up to 30 s for the exit (the fixture kills it after a timeout); its code.

        First checks the premise: the command runs with SIGHUP ignored, as the wrapper started it.
        """
        assert signal.SIGHUP in _ignored(self.proc.pid), "the command does not run with SIGHUP ignored"
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=30)
        for reader in self._readers:
            reader.join(timeout=10)
        while not self._lines.empty():
            if (line := self._lines.get_nowait()) is not None:
                self.seen.append(line)
        return code

    @property
    def output(self) -> str:
        return "".join(self.seen)


def _ignored(pid: int) -> set[signal.Signals]:
    """The signals the process ignores, from /proc (Linux)."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    mask = int(next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16)
    return {sig for sig in signal.Signals if sig < 64 and mask >> (sig - 1) & 1}


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def _dead(pid: int) -> bool:
    """Gone, or a zombie its new parent has yet to reap (it ran in its own session, under fiskai)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.fixture
def children() -> Iterator[list[Child]]:
    """The test's children: any still running is killed with its process group, and all are reaped."""
    started: list[Child] = []
    yield started
    for child in started:
        if child.proc.poll() is None:
            os.killpg(child.proc.pid, signal.SIGKILL)
        child.proc.wait(timeout=30)
        for stream in (child.proc.stdout, child.proc.stderr):
            if stream is not None:
                stream.close()


def _start(children: list[Child], args: list[str], cwd: Path, env: Mapping[str, str] | None = None) -> Child:
    child = Child(args, cwd, env if env is not None else os.environ)
    children.append(child)
    return child


def _app(folder: Path) -> Path:
    """fixturectl's real command model; a call writes its pid to `tool.pid`, then runs until killed."""
    app = folder / "fixturectl"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        'echo $$ > "$(dirname "$0")/tool.pid.tmp" && mv "$(dirname "$0")/tool.pid.tmp" "$(dirname "$0")/tool.pid"\n'
        "exec sleep 300\n",
        encoding="utf-8",
    )
    app.chmod(0o755)
    return app


def _config(folder: Path, extra: str = "") -> Path:
    config = folder / "agent.yaml"
    config.write_text(
        f"identity: fixturectl\napplication_path: {_app(folder)}\n"
        f"system_prompt: Operate the cluster.\nllm:\n  model: claude-sonnet-4-6\n{extra}",
        encoding="utf-8",
    )
    return config


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_knowledge_watch_stops_on_the_signal(tmp_path: Path, children: list[Child], sig: signal.Signals) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nwords\n", encoding="utf-8")
    watcher = _start(children, ["knowledge", "watch", "--debounce", "0.1", "docs"], tmp_path)
    watcher.wait_for("watching 1 files")

    code = watcher.stop_with(sig)

    assert code == 0, watcher.output
    assert "stopped watching" in watcher.output
    assert _group_gone(watcher.proc.pid)


def test_mcp_over_http_stops_on_ctrl_c(tmp_path: Path, children: list[Child]) -> None:
    config = _config(tmp_path, "expose:\n  agent:\n    mcp: {}\n")
    server = _start(children, ["-c", str(config), "mcp", "--port", "0"], tmp_path)
    server.wait_for("Serving ")

    code = server.stop_with(signal.SIGINT)

    assert code == 0, server.output
    assert server.output.endswith("MCP server stopped\n")
    assert _group_gone(server.proc.pid)


@pytest.mark.nats
def test_a2a_stops_on_ctrl_c(tmp_path: Path, children: list[Child], nats_server: str) -> None:
    contexts = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "signals.json").write_text(json.dumps({"url": nats_server}), encoding="utf-8")
    config = _config(tmp_path, "nats_context: signals\nexpose:\n  agent:\n    agent_to_agent: true\n")
    server = _start(children, ["-c", str(config), "a2a"], tmp_path)
    server.wait_for("Serving ")

    code = server.stop_with(signal.SIGINT)

    assert code == 0, server.output
    assert server.output.endswith("fiskai serve stopped\n")  # `fiskai a2a` is an alias of serve
    assert _group_gone(server.proc.pid)


def test_run_stops_on_ctrl_c_and_kills_the_running_command(tmp_path: Path, children: list[Child]) -> None:
    config = _config(tmp_path)
    pid_file = tmp_path / "tool.pid"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    with MessagesServer([Turn([tool_use("cluster_config_get", {"key": "region"})])]) as model:
        env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=model.base_url, NO_COLOR="1")
        run = _start(children, ["-c", str(config), "run", "what is the region?"], tmp_path, env)
        run.wait_until(pid_file.exists, "tool.pid: the command running")  # it blocks until killed
        tool = int(pid_file.read_text(encoding="utf-8"))

        code = run.stop_with(signal.SIGINT)

    assert code == 130, run.output
    assert "interrupted" in run.output
    assert "Traceback" not in run.output
    assert _group_gone(run.proc.pid)
    assert _dead(tool), "the command the run started outlived it"
