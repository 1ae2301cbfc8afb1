"""`fiskai run` with a terminal on stdin (a pseudo-terminal): the operator approves or refuses gated commands.

The line prompter asks on stderr and reads the answer from the terminal; each decision is journaled
with its channel (`prompt`, or `session` once the operator allowed the tool for the run).
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fiskai_agent.testing import MessagesServer, RecordedRequest, Turn, text, tool_use
from fiskai_runstate import FileJournalStore, decode_record
from fiskai_runstate.records import ToolIntentRecord, ToolResultRecord

_CONFIG = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "agent.yaml"
_PROMPT = "Choose 1-5 [1]: "


class Terminal:
    """A `fiskai run` whose stdin is a pseudo-terminal; stderr is collected as it arrives."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self._master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fiskai_cli", *args],
            cwd=Path(env["XDG_STATE_HOME"]).parent,  # nothing a run writes lands in the checkout
            env=env,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        os.close(slave)
        self.lines: list[str] = []
        stream = self.proc.stderr
        assert stream is not None
        self._reader = threading.Thread(target=lambda: self.lines.extend(iter(lambda: stream.read(1), "")), daemon=True)
        self._reader.start()

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def answer(self, prompt_number: int, reply: str) -> None:
        """Wait for the `prompt_number`-th approval prompt, then type `reply`."""
        wait_until(lambda: self.stderr.count(_PROMPT) >= prompt_number, f"approval prompt {prompt_number}")
        os.write(self._master, reply.encode() + b"\n")

    def finish(self) -> tuple[int, str]:
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        code = self.proc.wait(timeout=60)
        self._reader.join(timeout=10)
        return code, out

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        os.close(self._master)


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", ANTHROPIC_API_KEY="test-key")
    return base


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


def _results(request: RecordedRequest) -> dict[str, str]:
    return {block["tool_use_id"]: str(block["content"]) for block in request.tool_results()}


def test_operator_allows_a_gated_command_for_the_session_then_is_not_asked_again(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    """Steps:
    1. The model drains n1: the operator is asked and answers 3 (allow for this run); it runs.
    2. The model drains n2: no prompt (session rule); it runs.
    3. Both decisions are journaled: channel prompt, then session.
    """
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "patch"}, id="d1")]),
        Turn([tool_use("cluster_node_drain", {"node": "n2", "reason": "patch"}, id="d2")]),
        Turn([text("Drained n1 and n2.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        terminal = Terminal(["-c", str(_CONFIG), "run", "--checkpoint", "--name", "gated", "drain n1 and n2"], env)
        terminals.append(terminal)
        terminal.answer(1, "3")
        code, out = terminal.finish()

    assert code == 0, terminal.stderr
    assert out == "Drained n1 and n2.\n"
    assert terminal.stderr.count(_PROMPT) == 1
    assert 'confirmation required: "cluster_node_drain" carries tag "ai:confirm"' in terminal.stderr
    assert "[--reason=patch]" in _results(server.requests[1])["d1"]
    assert "[n2]" in _results(server.requests[2])["d2"]
    journal = FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs").journal_path("gated")
    lines = journal.read_bytes().split(b"\n")[:-1]
    intents = [
        record.payload
        for record in (decode_record(line, run_id="gated") for line in lines)
        if isinstance(record.payload, ToolIntentRecord)
    ]
    assert [intent.gate and intent.gate.get("channel") for intent in intents] == ["prompt", "session"]


def test_operator_declining_at_the_terminal_runs_nothing(env: dict[str, str], terminals: list[Terminal]) -> None:
    script = [
        Turn([tool_use("cluster_config_set", {"key": "region", "value": "eu"}, id="s1")]),
        Turn([text("Left the region unchanged.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        terminal = Terminal(["-c", str(_CONFIG), "run", "--checkpoint", "--name", "declined", "set region eu"], env)
        terminals.append(terminal)
        terminal.answer(1, "1")
        code, out = terminal.finish()

    assert code == 0, terminal.stderr
    assert out == "Left the region unchanged.\n"
    result = _results(server.requests[1])["s1"]
    assert '"allowed":false' in result.replace(" ", "")
    assert "fixturectl was called" not in result
    journal = FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs").journal_path("declined")
    records = [decode_record(line, run_id="declined") for line in journal.read_bytes().split(b"\n")[:-1]]
    assert not any(isinstance(record.payload, ToolIntentRecord) for record in records)
    (refused,) = [record.payload for record in records if isinstance(record.payload, ToolResultRecord)]
    assert refused.gate is not None
    assert refused.gate.get("channel") == "prompt"


def test_model_text_tool_output_and_the_approval_prompt_reach_the_terminal_neutralized(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    """Steps:
    1. The model narrates with a right-to-left override, an OSC 52 clipboard write and BEL, and reads a
       config key holding a CSI and U+202E: the narration, the `->` line and the tool's output (`-v`)
       show neither the sequence nor the raw override.
    2. It calls a tool that does not exist, named with U+202E: the warning names it visibly.
    3. It drains a node whose name holds U+202E: the approval prompt shows the argv with `$'\\u202e'`.
    """
    hostile = "n1\u202e --force"
    script = [
        Turn(
            [
                text("Reading \x1b]52;c;cm0gLXJmIH4=\x07the key\x07 now\u202eevil"),
                tool_use("cluster_config_get", {"key": "re\x1b[2Jgion\u202e"}, id="g1"),
            ]
        ),
        Turn([tool_use("evil\u202etool", {}, id="u1")]),
        Turn([tool_use("cluster_node_drain", {"node": hostile, "reason": "patch"}, id="d1")]),
        Turn([text("Done \u202eright.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        terminal = Terminal(["-c", str(_CONFIG), "run", "-v", "read and drain"], env)
        terminals.append(terminal)
        terminal.answer(1, "1")
        code, out = terminal.finish()

    assert code == 0, terminal.stderr
    shown = terminal.stderr
    assert not [raw for raw in ("\x1b", "\x07", "\x9b", "\u202e") if raw in shown + out]
    assert "Reading the key  now<U+202E>evil" in shown, shown  # BEL becomes a space, OSC 52 goes
    assert "-> cluster config get -- region<U+202E>" in shown  # an ungated call's trace line
    assert "     [region<U+202E>]" in shown  # the tool's own output: CSI removed, the override shown
    assert "evil<U+202E>tool" in shown
    assert "-> " in shown and "cluster node drain --reason=patch -- $'n1\\u202e --force'" in shown
    assert out == "Done <U+202E>right.\n"
