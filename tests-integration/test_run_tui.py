"""`fiskai run` full screen in a real terminal: a tmux pane of fixed size, driven by send-keys, read by capture-pane.

The terminal: a command in a tmux pane of fixed size, driven by send-keys, read by capture-pane.

Each `TmuxPane` runs its own tmux server (`tmux -L <unique socket>`), killed on close, so tests never
share or leak a server. Waits poll capture-pane against a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from fiskai_agent.testing import Hang, MessagesServer, RecordedRequest, Turn, text, tool_use
from fiskai_core.approvals import load_rules
from fiskai_runstate import FileJournalStore, decode_record
from fiskai_runstate.records import TerminalRecord, ToolIntentRecord


def tmux_binary() -> str:
    """The tmux executable, or a skip naming what to install (CI installs it in `.ci/run`)."""
    path = shutil.which("tmux")
    if path is None:
        pytest.skip("tmux is not installed (apt-get install tmux); the full-screen tests need a real terminal")
    return path


class TmuxPane:
    """`argv` running in a `width`x`height` tmux pane with `env`; the pane stays after the command exits."""

    def __init__(
        self, argv: Sequence[str], env: Mapping[str, str], *, cwd: Path, width: int = 100, height: int = 30
    ) -> None:
        self._tmux = tmux_binary()
        self.socket = f"fiskai-test-{uuid.uuid4().hex[:12]}"
        self.exit_file = cwd / f"{self.socket}.exit"
        # The shell records the exit code, so a test can tell when the command ended and how.
        command = f"{shlex.join(argv)}; echo $? > {shlex.quote(str(self.exit_file))}"
        self._run(
            "new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), "-c", str(cwd),
            *(arg for key, value in env.items() for arg in ("-e", f"{key}={value}")),
            "sh", "-c", command,
        )  # fmt: skip
        self._run("set-option", "-t", "t", "remain-on-exit", "on")

    def _run(self, *args: str) -> str:
        done = subprocess.run(
            [self._tmux, "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args[:2])} failed: {done.stderr.strip()}")
        return done.stdout

    def keys(self, *keys: str) -> None:
        """tmux key names (`Enter`, `C-d`, `PPage`) or literal text."""
        self._run("send-keys", "-t", "t", *keys)

    def screen(self, *, escapes: bool = False, history: bool = False, joined: bool = False) -> str:
        """What the pane shows now (with `escapes`, the SGR sequences too; with `history`, the scrollback too).

        With `joined`, lines the terminal wrapped are joined back (tmux -J), so a long line, e.g. one
        holding the checkout's path, reads the same whatever the pane width and the checkout's location.
        """
        extra = (["-e"] if escapes else []) + (["-S", "-"] if history else []) + (["-J"] if joined else [])
        return self._run("capture-pane", "-p", "-t", "t", *extra)

    def restored(self, *texts: str) -> str:
        """After the command ended: the normal screen and its scrollback, once it holds every one of `texts`."""
        deadline = time.monotonic() + 30
        while True:
            shown = self.screen(history=True, joined=True)
            if all(text in shown for text in texts):
                return shown
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {texts} after the screen was restored; it shows:\n{shown}")
            time.sleep(0.05)

    def wait_for(self, condition: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        """Poll the screen until `condition` holds; fail naming `what` and showing the last screen."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if condition(shown):
                return shown
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; the pane shows:\n{shown}")
            time.sleep(0.05)

    def wait_text(self, text: str, timeout: float = 30) -> str:
        return self.wait_for(lambda shown: text in shown, repr(text), timeout)

    def pane_pid(self) -> int:
        """The pid of the pane's shell."""
        return int(self._run("display-message", "-p", "-t", "t", "#{pane_pid}").strip())

    def resize(self, width: int, height: int) -> None:
        self._run("resize-window", "-t", "t", "-x", str(width), "-y", str(height))

    def exit_code(self, timeout: float = 30) -> int:
        """Wait for the command to end; its exit code."""
        deadline = time.monotonic() + timeout
        while not (self.exit_file.exists() and self.exit_file.read_text(encoding="utf-8").strip()):
            if time.monotonic() > deadline:
                pytest.fail(f"the command did not end; the pane shows:\n{self.screen()}")
            time.sleep(0.05)
        return int(self.exit_file.read_text(encoding="utf-8"))

    def clipboard_on(self) -> None:
        """Let the pane's program set tmux's paste buffer with OSC 52 (`set-clipboard on`)."""
        self._run("set-option", "-s", "set-clipboard", "on")

    def paste_buffer(self) -> str:
        """tmux's most recent paste buffer (empty when there is none)."""
        done = subprocess.run(
            [self._tmux, "-L", self.socket, "show-buffer"], capture_output=True, text=True, check=False
        )
        return done.stdout if done.returncode == 0 else ""

    def close(self) -> None:
        subprocess.run([self._tmux, "-L", self.socket, "kill-server"], capture_output=True, check=False)


# -- the tests ---------------------------------------------------------------------------------------

_CONFIG = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "agent.yaml"
_STATUS = "? help  q quit"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "state").mkdir()
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "ANTHROPIC_API_KEY": "test-key",
        "LANG": "C.UTF-8",
    }


@pytest.fixture
def panes() -> Iterator[list[TmuxPane]]:
    opened: list[TmuxPane] = []
    yield opened
    for pane in opened:
        pane.close()


def _fiskai(*args: str) -> list[str]:
    return [sys.executable, "-m", "fiskai_cli", "-c", str(_CONFIG), "run", *args]


def _start(panes: list[TmuxPane], argv: Sequence[str], env: dict[str, str], cwd: Path, **size: int) -> TmuxPane:
    pane = TmuxPane(argv, env, cwd=cwd, **size)
    panes.append(pane)
    return pane


def test_live_view_shows_narration_folds_output_and_leaves_the_answer_on_the_restored_terminal(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. The model narrates, lists nodes (ungated), then answers: the full screen shows the prompt, the
       narration, the call and a folded result; the status bar names the model.
    2. `Z` unfolds the tool output (the node list appears), `Z` folds it again.
    3. The run completes; `q` quits; the terminal is restored and shows the answer printed after teardown.
    """
    script = [
        Turn([text("Let me **list** the nodes first."), tool_use("cluster_node_list", {}, id="l1")]),
        Turn([text("## Nodes\n\nAll nodes are healthy.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("which nodes are unhealthy?"), env, tmp_path)
        shown = pane.wait_text("--- run complete, press q to quit ---")
        assert "> which nodes are unhealthy?" in shown
        assert "Let me list the nodes first." in shown  # Markdown emphasis markers are not shown
        assert "-> cluster node list" in shown
        assert "(Z to expand)" in shown
        assert "model=claude-sonnet-4-6" in shown and _STATUS in shown
        folded_rows = len(shown.rstrip().splitlines())
        pane.keys("Z")
        unfolded = pane.wait_for(lambda s: "(Z to expand)" not in s, "tool output to unfold")
        assert "tool output unfolded" in unfolded
        pane.keys("Z")
        pane.wait_text("(Z to expand)")
        assert folded_rows > 0
        pane.keys("q")
        assert pane.exit_code() == 0
        restored = pane.restored("All nodes are healthy.", "Run summary")
        assert _STATUS not in restored  # the alternate screen is gone


def test_approval_prompt_accepts_then_denies_inside_the_screen(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. The model drains n1 (gated by impact:rw): a modal question appears; `2` runs it once.
    2. The model drains n2: the question appears again; Escape declines; the model is told it was denied.
    """
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "patch"}, id="d1")]),
        Turn([tool_use("cluster_node_drain", {"node": "n2", "reason": "patch"}, id="d2")]),
        Turn([text("Drained n1; n2 was refused.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("drain n1 and n2"), env, tmp_path)
        shown = pane.wait_text("Run this command?")
        assert "node drain" in shown and "2) Yes, run it once" in shown
        pane.keys("2")
        pane.wait_text("approved (once)")
        pane.wait_for(lambda s: "Run this command?" in s and "n2" in s, "the second approval")
        pane.keys("Escape")
        pane.wait_text("--- run complete, press q to quit ---")
        requests = server.requests
        results = [str(block["content"]) for block in requests[1].tool_results()]
        assert '"allowed":false' not in results[0]
        denied = [str(block["content"]) for block in requests[2].tool_results()]
        assert '"allowed":false' in denied[0].replace(" ", "")
        pane.keys("q")
        assert pane.exit_code() == 0


def test_resize_redraws_and_ctrl_c_aborts_with_the_terminal_restored(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. A gated call waits on the modal question at 100 columns; the window shrinks to 60: the
       status bar is redrawn to the new width.
    2. Ctrl-C declines the question; q aborts... the run ends, q quits, the shell prompt is back.
    """
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "patch"}, id="d1")]),
        Turn([text("Not drained.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("drain n1"), env, tmp_path, width=100, height=24)
        pane.wait_text("Run this command?")
        pane.resize(60, 20)
        narrow = pane.wait_for(lambda s: all(len(line) <= 60 for line in s.splitlines()) and _STATUS in s, "redraw")
        status = [line for line in narrow.splitlines() if _STATUS in line]
        # Redrawn for 60 columns: the key hints end one column (the bar's margin) before the new right edge.
        assert status and status[-1].rstrip().endswith(_STATUS) and len(status[-1].rstrip()) == 59
        pane.keys("C-c")
        pane.wait_text("declined:")
        pane.wait_text("--- run complete, press q to quit ---")
        pane.keys("q")
        assert pane.exit_code() == 0
        pane.restored("Not drained.", "Run summary")


def test_piped_stdout_gets_exactly_the_line_ui_answer(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """On a terminal with stdout piped, the run uses the line UI: the answer alone lands in the file."""
    script = [Turn([text("# Report\n\nAll **good**.")])]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        out = tmp_path / "answer.md"
        command = f"{shlex.join(_fiskai('status?'))} > {shlex.quote(str(out))}"
        pane = _start(panes, ["sh", "-c", command], env, tmp_path)
        assert pane.exit_code() == 0
        assert out.read_text() == "# Report\n\nAll **good**.\n"
        pane.restored("Run summary")


def _texts(request: RecordedRequest) -> list[str]:
    """The text blocks of every message of a request, in order."""
    texts: list[str] = []
    for message in request.messages:
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        texts += [block["text"] for block in content if block.get("type") == "text"]
    return texts


def test_chat_turns_and_slash_commands_then_ctrl_d_restores_the_terminal(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. `--chat`: the first answer arrives and the input row is ready; a follow-up is sent with Enter
       (Alt-Enter made it two lines) and answered in the same conversation.
    2. `/bogus` is refused with a notice and nothing is sent; `/help` shows the commands.
    3. `/clear again` forgets the conversation; `/restart` re-sends the original prompt alone.
    4. Ctrl-D ends the chat at once: exit 0, the terminal restored, the last answer printed.
    """
    script = [
        Turn([text("first answer")]),
        Turn([text("second answer")]),
        Turn([text("fresh answer")]),
        Turn([text("restarted answer")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--chat", "hello"), env, tmp_path)
        pane.wait_text("ready for input")
        assert "first answer" in pane.screen()
        pane.keys("more", "M-Enter", "please", "Enter")
        pane.wait_text("second answer")
        assert _texts(server.requests[1]) == ["hello", "first answer", "more\nplease"]
        pane.wait_text("ready for input")
        pane.keys("/bogus", "Enter")
        pane.wait_text("unknown command: /bogus")
        pane.keys("C-u", "/help", "Enter")
        pane.wait_text("/restart")
        pane.keys("/clear again", "Enter")  # the first key closes the help and is typed too
        pane.wait_text("fresh answer")
        assert "--- context cleared ---" in pane.screen()
        assert _texts(server.requests[2]) == ["again"]
        pane.wait_text("ready for input")
        pane.keys("/restart", "Enter")
        pane.wait_text("restarted answer")
        assert _texts(server.requests[3]) == ["hello"]
        assert len(server.requests) == 4
        pane.wait_text("ready for input")
        pane.keys("C-d")
        assert pane.exit_code() == 0
        restored = pane.restored("restarted answer", "Run summary")
        assert "ready for input" not in restored  # the alternate screen is gone


def test_line_chat_reads_follow_ups_from_the_terminal(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """`--chat --no-tui`: `> ` on the terminal, slash commands resolved, each answer printed, Ctrl-D ends."""
    script = [Turn([text("first answer")]), Turn([text("second answer")])]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--chat", "--no-tui", "hello"), env, tmp_path)
        pane.wait_for(lambda s: "first answer" in s and s.rstrip().endswith(">"), "the chat prompt")
        pane.keys("/nope", "Enter")
        pane.wait_text("unknown command: /nope")
        pane.keys("more", "Enter")
        pane.wait_text("second answer")
        assert _texts(server.requests[1]) == ["hello", "first answer", "more"]
        pane.keys("C-d")
        assert pane.exit_code() == 0
        pane.restored("Run summary")


def _child_pid(pane: TmuxPane) -> int:
    """The fiskai process under the pane's shell."""
    shell = pane.pane_pid()
    children = Path(f"/proc/{shell}/task/{shell}/children").read_text(encoding="utf-8").split()
    assert len(children) == 1, children
    return int(children[0])


def _held_config(tmp_path: Path) -> tuple[Path, Path]:
    """fixturectl's agent.yaml over a copy whose `cluster node list` waits until a release file exists.

    The run's step then lasts until the test says so, so what the screen shows after a signal can be
    read before the run suspends and the screen closes. Returns the configuration and the release file.
    """
    release = tmp_path / "release"
    app = tmp_path / "heldctl"
    original = (_CONFIG.parent / "fixturectl").read_text(encoding="utf-8")
    introspect = shlex.quote(str(_CONFIG.parent / "fixturectl.introspect.json"))
    wait = (
        'if [ "$1 $2 $3" = "cluster node list" ]; then\n'
        f"    n=0; while [ ! -e {shlex.quote(str(release))} ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\n"
        "fi\n"
    )
    app.write_text(
        original.replace('"$(dirname "$0")/fixturectl.introspect.json"', introspect).replace(
            "printf 'fixturectl", wait + "printf 'fixturectl", 1
        ),
        encoding="utf-8",
    )
    app.chmod(0o755)
    config = tmp_path / "agent.yaml"
    config.write_text(
        _CONFIG.read_text(encoding="utf-8").replace("application_path: ./fixturectl", f"application_path: {app}"),
        encoding="utf-8",
    )
    return config, release


def test_sigterm_at_a_question_says_suspending_declines_it_and_the_screen_closes_by_itself(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. A checkpointed run asks to drain n1; a node list in the same step waits for the test's release.
    2. SIGTERM: the screen says the run is suspending, the open question is declined; the notice fiskai
       writes to stderr does not reach the full screen.
    3. Released, the run suspends at the end of the step and the process exits by itself (no q): exit 0,
       the terminal restored with the checkpoint line, the held stderr notice and the resume hint.
    4. `--resume` on the full screen shows the restored conversation, then continues to the answer.
    """
    config, release = _held_config(tmp_path)
    script = [
        Turn(
            [
                tool_use("cluster_node_drain", {"node": "n1", "reason": "patch"}, id="d1"),
                tool_use("cluster_node_list", {}, id="l1"),
            ]
        )
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        argv = [
            sys.executable,
            "-m",
            "fiskai_cli",
            "-c",
            str(config),
            "run",
            "--checkpoint",
            "--name",
            "held",
            "drain n1",
        ]
        pane = _start(panes, argv, env, tmp_path, width=120)
        pane.wait_text("Run this command?")
        os.kill(_child_pid(pane), signal.SIGTERM)
        shown = pane.wait_for(
            lambda s: "SIGTERM: suspending at the end of this step" in s and "declined:" in s, "the suspend notice"
        )
        assert "Run this command?" not in shown and "[suspending]" in shown
        assert "suspend requested" not in shown  # fiskai's stderr is held while the screen is up
        release.touch()
        assert pane.exit_code() == 0
        restored = pane.restored("suspend requested; finishing current step", "run --resume held", "Run suspended")
        assert 'checkpointing session "held"' in restored
        assert len(server.requests) == 1

        # 4. Resumed on the full screen: the restored conversation, then the run goes on.
        server.add(Turn([text("Resumed; n1 stays in service.")]))
        argv = [sys.executable, "-m", "fiskai_cli", "-c", str(config), "run", "--resume", "held"]
        resumed = _start(panes, argv, env, tmp_path)
        shown = resumed.wait_text("--- run complete, press q to quit ---")
        for line in ('--- resuming "held"', "> drain n1", 'cluster_node_drain {"node": "n1"', "--- continuing ---"):
            assert line in shown
        assert shown.index("--- continuing ---") < shown.index("Resumed; n1 stays in service.")
        results = _texts_of_results(server.requests[1])
        assert "the run is suspending" in results["d1"] and "fixturectl was called" in results["l1"]
        resumed.keys("q")
        assert resumed.exit_code() == 0


def _texts_of_results(request: RecordedRequest) -> dict[str, str]:
    return {str(block["tool_use_id"]): str(block["content"]) for block in request.tool_results()}


def test_scrolling_back_freezes_the_tail_and_reaching_the_bottom_follows_again(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. A 30-line answer in a 14-row pane: its last line is shown (the view follows the tail).
    2. PgUp scrolls back; a follow-up's answer arrives but the view stays where the operator is reading.
    3. PgDn back to the bottom re-arms follow: the new answer is on screen.
    4. `?` opens the help, any key closes it.
    """
    long = "\n\n".join(f"line {n:02d}" for n in range(1, 31))
    script = [Turn([text(long)]), Turn([text("SECOND")])]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--chat", "count"), env, tmp_path, width=150, height=14)
        pane.wait_for(lambda s: "line 30" in s and "ready for input" in s, "the tail of the first answer")
        pane.keys("PPage")
        pane.wait_for(lambda s: "line 30" not in s, "the view to scroll back")
        pane.keys("next", "Enter")
        pane.wait_text("iter=2")
        server.wait_for_requests(2)
        pane.wait_for(lambda s: "ready for input" in s and "iter=2" in s, "the second turn to end")
        assert "SECOND" not in pane.screen()
        for _ in range(6):
            pane.keys("NPage")
        pane.wait_text("SECOND")
        pane.keys("C-d")
        assert pane.exit_code() == 0


def test_help_opens_and_any_key_closes_it(env: dict[str, str], panes: list[TmuxPane], tmp_path: Path) -> None:
    with MessagesServer([Turn([text("done")])]) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("hi"), env, tmp_path)
        pane.wait_text("--- run complete, press q to quit ---")
        pane.keys("?")
        pane.wait_text("fold or unfold thinking")
        pane.keys("x")
        pane.wait_for(lambda s: "fold or unfold thinking" not in s, "the help to close")
        pane.keys("q")
        assert pane.exit_code() == 0


def test_session_show_opens_a_finished_run_read_only_and_prints_when_piped(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. A checkpointed run (line UI) lists nodes and answers.
    2. `session show` on the terminal opens it full screen: prompt, the exact command line, a folded
       result, the answer, and a read-only status; Z unfolds the output; q leaves with exit 0.
    3. Piped, `session show` prints the status lines instead.
    """
    script = [Turn([tool_use("cluster_node_list", {}, id="l1")]), Turn([text("Three nodes, all up.")])]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        done = subprocess.run(
            _fiskai("--checkpoint", "--name", "seen", "list nodes"),
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    show = [sys.executable, "-m", "fiskai_cli", "-c", str(_CONFIG), "session", "show", "seen"]
    pane = _start(panes, show, env, tmp_path, width=140)
    shown = pane.wait_text("read-only")
    assert "> list nodes" in shown and "Three nodes, all up." in shown
    assert "-> " in shown and "cluster node list" in shown and "(Z to expand)" in shown
    assert "session=seen" in shown and "[completed, read-only]" in shown
    pane.keys("Z")
    pane.wait_for(lambda s: "(Z to expand)" not in s, "the output to unfold")
    pane.keys("q")
    assert pane.exit_code() == 0

    piped = _start(panes, ["sh", "-c", f"{shlex.join(show)} | cat"], env, tmp_path)
    assert piped.exit_code() == 0
    assert "Session seen" in piped.restored("Session seen")


def _hitl_config(tmp_path: Path, *extra: str) -> Path:
    """examples/fixturectl/agent.yaml with human_in_the_loop on (and `extra` harness lines)."""
    text_ = _CONFIG.read_text(encoding="utf-8").replace(
        "application_path: ./fixturectl", f"application_path: {_CONFIG.parent / 'fixturectl'}"
    )
    harness = "harness:\n  human_in_the_loop:\n    enabled: true\n" + "".join(f"  {line}\n" for line in extra)
    config = tmp_path / "agent.yaml"
    config.write_text(text_.replace("harness:\n", harness, 1), encoding="utf-8")
    return config


def test_ask_human_questions_are_modal_and_escape_declines(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. ask_human_select: Down, Enter picks the second option; the model receives it.
    2. ask_human_input: the default is pre-filled; the operator types over it and Enter sends it.
    3. ask_human_confirm: Escape declines; the model is told no answer came.
    """
    script = [
        Turn([tool_use("ask_human_select", {"question": "Which region?", "options": ["eu-west", "us-east"]}, id="s")]),
        Turn([tool_use("ask_human_input", {"question": "Ticket id?", "default": "OPS-1"}, id="i")]),
        Turn([tool_use("ask_human_confirm", {"question": "Proceed?"}, id="c")]),
        Turn([text("ok")]),
    ]
    config = _hitl_config(tmp_path)
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        argv = [sys.executable, "-m", "fiskai_cli", "-c", str(config), "run", "plan it"]
        pane = _start(panes, argv, env, tmp_path)
        pane.wait_text("Which region?")
        pane.keys("Down", "Enter")
        pane.wait_for(lambda s: "Ticket id?" in s and "OPS-1" in s, "the input question, pre-filled")
        pane.keys("C-u", "OPS-42", "Enter")
        pane.wait_text("Proceed?")
        pane.keys("Escape")
        pane.wait_text("--- run complete, press q to quit ---")
        answers = [json.loads(str(request.tool_results()[0]["content"])) for request in server.requests[1:4]]
        assert answers[0] == {"selected": "us-east"}
        assert "OPS-42" in json.dumps(answers[1])
        assert answers[2]["confirmed"] is False
        assert answers[2]["reason"] == "the operator did not confirm: dismissed at the prompt"
        pane.keys("q")
        assert pane.exit_code() == 0


def test_harness_no_tui_keeps_the_line_ui_on_a_terminal(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    config = _hitl_config(tmp_path, "no_tui: true")
    with MessagesServer([Turn([text("plain answer")])]) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, [sys.executable, "-m", "fiskai_cli", "-c", str(config), "run", "hi"], env, tmp_path)
        assert pane.exit_code() == 0
        shown = pane.restored("plain answer", "Run summary")
        assert "press q to quit" not in shown


def test_a_closed_terminal_declines_the_open_approval_and_ends_the_run(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """SIGHUP (the terminal closed) while a drain waits for approval: it never runs, the run ends
    aborted and its journal is closed with a terminal record, so it can be inspected or resumed."""
    script = [Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "patch"}, id="d1")])]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--checkpoint", "--name", "hup", "drain n1"), env, tmp_path)
        pane.wait_text("Run this command?")
        os.kill(_child_pid(pane), signal.SIGHUP)
        assert pane.exit_code() == 130
        assert len(server.requests) == 1
    journal = FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs").journal_path("hup")
    records = [decode_record(line, run_id="hup") for line in journal.read_bytes().split(b"\n")[:-1]]
    assert not any(isinstance(r.payload, ToolIntentRecord) for r in records)
    assert isinstance(records[-1].payload, TerminalRecord) and records[-1].payload.reason == "error"


def test_a_run_that_cannot_start_restores_the_terminal_before_the_error(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """`--resume` of a session that does not exist fails in setup: exit 1, the one-line error on the
    restored terminal, no traceback."""
    with MessagesServer([]) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--resume", "nope"), env, tmp_path)
        assert pane.exit_code() == 1
        shown = pane.restored("nope")
        assert "Error:" in shown and "Traceback" not in shown and _STATUS not in shown


def _rules_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_STATE_HOME"]) / "fiskai" / "approvals" / "fixturectl.yaml"


def test_save_a_rule_says_approved_only_once_saved_and_escape_at_the_rule_asks_again(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. The model drains n1: `5` (save a rule) opens the rule question, pre-filled; nothing says approved.
    2. Escape at the rule question saves nothing, says so, and puts the approval question again.
    3. `5` and Enter save the rule: only then the transcript says approved, naming the saved rule, and
       the drain runs.
    """
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "patch"}, id="d1")]),
        Turn([text("Drained n1.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("drain n1"), env, tmp_path, width=140)
        pane.wait_text("Run this command?")
        pane.keys("5")
        shown = pane.wait_text("cluster_node_drain --reason=patch @1=n1")
        assert "Rule to save" in shown and "approved" not in shown
        pane.keys("Escape")
        asked_again = "no rule saved (dismissed at the prompt); asking again"
        shown = pane.wait_for(lambda s: asked_again in s and "Run this command?" in s, "the approval asked again")
        assert "approved" not in shown
        assert not _rules_file(env).exists()
        pane.keys("5")
        pane.wait_text("Rule to save")
        pane.keys("Enter")
        shown = pane.wait_text("--- run complete, press q to quit ---")
        assert "approved, rule saved for agent 'fixturectl': cluster_node_drain --reason=patch @1=n1" in shown
        assert [rule.text for rule in load_rules(_rules_file(env))] == ["cluster_node_drain --reason=patch @1=n1"]
        assert '"allowed":false' not in str(server.requests[1].tool_results()[0]["content"])
        pane.keys("q")
        assert pane.exit_code() == 0


def test_in_chat_the_key_that_closes_the_help_is_the_first_of_the_next_message(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """`/help` over the chat row, then the operator types their next message: the help closes on its
    first key and the model gets the whole message (the `a` of `and now?` is not eaten)."""
    with MessagesServer([Turn([text("first answer")]), Turn([text("second answer")])]) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--chat", "hello"), env, tmp_path)
        pane.wait_text("ready for input")
        pane.keys("/help", "Enter")
        pane.wait_text("/restart")
        pane.keys("and now?")
        shown = pane.wait_for(lambda s: "/restart" not in s and "> and now?" in s, "the help closed, the text typed")
        assert "ready for input" in shown
        pane.keys("Enter")
        pane.wait_text("second answer")
        assert _texts(server.requests[1])[-1] == "and now?"
        pane.keys("C-d")
        assert pane.exit_code() == 0


def test_sigterm_after_the_run_ended_closes_the_screen_and_restores_the_terminal(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """The run is over and the screen waits for q; SIGTERM closes it: exit 0, the answer on the restored terminal."""
    with MessagesServer([Turn([text("all done")])]) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("hi"), env, tmp_path)
        pane.wait_text("--- run complete, press q to quit ---")
        os.kill(_child_pid(pane), signal.SIGTERM)
        assert pane.exit_code() == 0
        restored = pane.restored("all done", "Run summary")
        assert _STATUS not in restored


def test_session_viewer_shows_a_denied_call_with_its_tool_arguments_channel_and_reason(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """A checkpointed run with no terminal: the drain is denied. `session show` on the terminal names the
    call (tool and arguments, not run) and the denial: channel, tag, argv digest and the model's reason."""
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "patch"}, id="d1")]),
        Turn([text("Could not drain n1.")]),
    ]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        done = subprocess.run(
            _fiskai("--checkpoint", "--name", "refused", "drain n1"),
            env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    show = [sys.executable, "-m", "fiskai_cli", "-c", str(_CONFIG), "session", "show", "refused"]
    pane = _start(panes, show, env, tmp_path, width=220)
    shown = pane.wait_text("read-only")
    assert '-> cluster_node_drain {"node": "n1", "reason": "patch"} (not run)' in shown
    denial = [line.strip() for line in shown.splitlines() if "<- denied" in line]
    assert len(denial) == 1 and denial[0].startswith("<- denied cluster_node_drain (no terminal, tag ai:confirm, argv ")
    assert denial[0].endswith("): no interactive terminal is attached, so no operator could be asked")
    pane.keys("q")
    assert pane.exit_code() == 0


def _sessions(env: dict[str, str], cwd: Path) -> list[dict[str, object]]:
    """`fiskai session list --format json` against the pane's state home."""
    done = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(_CONFIG), "session", "list", "--format", "json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_checkpointed_chat_killed_mid_turn_resumes_as_a_chat_and_clear_links_a_new_session(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. `--chat --checkpoint`: three turns answered; the fourth is sent and the model never answers.
    2. SIGKILL mid-turn: no terminal record, nothing cleaned up.
    3. `--resume` (no --chat: the session says it is a chat): the transcript is back on screen and the
       fourth turn's request carries the first three turns; the answer arrives and the input reopens.
    4. `/clear fresh start` rotates: the model sees only the new prompt, the screen names the saved
       session; Ctrl-D suspends. `session list` shows two sessions, the new one continuing the old.
    """
    script = [Turn([text("answer one")]), Turn([text("answer two")]), Turn([text("answer three")]), Hang()]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--chat", "--checkpoint", "--name", "talk", "turn one"), env, tmp_path, height=40)
        pane.wait_text("ready for input")
        assert 'checkpointing session "talk"' in pane.screen()
        for turn, answer in (("turn two", "answer two"), ("turn three", "answer three")):
            pane.keys(turn, "Enter")
            pane.wait_text(answer)
            pane.wait_text("ready for input")
        pane.keys("turn four", "Enter")
        server.wait_for_requests(4)
        os.kill(_child_pid(pane), signal.SIGKILL)
        assert pane.exit_code() != 0

        server.add(Turn([text("answer four")]), Turn([text("fresh answer")]))
        resumed = _start(panes, _fiskai("--resume", "talk"), env, tmp_path, height=40)
        shown = resumed.wait_for(lambda s: "answer four" in s and "ready for input" in s, "the fourth answer")
        for line in ('--- resuming "talk"', "> turn one", "answer one", "> turn three", "> turn four"):
            assert line in shown
        assert shown.index("--- continuing ---") < shown.index("answer four")
        assert _texts(server.requests[4]) == [
            "turn one", "answer one", "turn two", "answer two", "turn three", "answer three", "turn four",
        ]  # fmt: skip

        resumed.keys("/clear fresh start", "Enter")
        shown = resumed.wait_text("fresh answer")
        assert "previous session saved; resume with: fiskai run --resume talk" in shown
        assert _texts(server.requests[5]) == ["fresh start"]
        resumed.wait_text("ready for input")
        resumed.keys("C-d")
        assert resumed.exit_code() == 0
        resumed.restored("previous session saved; resume with: fiskai run --resume talk", "Run suspended")
        assert len(server.requests) == 6

    listed = {str(s["id"]): s for s in _sessions(env, tmp_path)}
    assert len(listed) == 2 and listed["talk"]["status"] == "suspended"
    (new_id,) = set(listed) - {"talk"}
    assert (listed[new_id]["previous"], listed[new_id]["prompt"], listed[new_id]["status"]) == (
        "talk",
        "fresh start",
        "suspended",
    )


def test_line_chat_checkpoints_and_resumes_with_the_conversation_printed(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """`--chat --checkpoint --no-tui`: Ctrl-D suspends; `--resume --no-tui` prints the conversation, asks
    first (no model call), and the next turn carries the earlier ones."""
    script = [Turn([text("first answer")]), Turn([text("second answer")])]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--chat", "--checkpoint", "--name", "lc", "--no-tui", "hello"), env, tmp_path)
        pane.wait_for(lambda s: "first answer" in s and s.rstrip().endswith(">"), "the chat prompt")
        pane.keys("C-d")
        assert pane.exit_code() == 0
        pane.restored("suspended; resume with:", "run --resume lc")

        resumed = _start(panes, _fiskai("--resume", "lc", "--no-tui"), env, tmp_path)
        shown = resumed.wait_for(lambda s: s.rstrip().endswith(">"), "the chat prompt")
        assert shown.index("> hello") < shown.index("first answer") < shown.index("--- continuing ---")
        assert len(server.requests) == 1
        resumed.keys("more", "Enter")
        resumed.wait_text("second answer")
        assert _texts(server.requests[1]) == ["hello", "first answer", "more"]
        resumed.keys("C-d")
        assert resumed.exit_code() == 0


def test_no_tui_tool_output_and_no_color_from_the_environment_on_a_terminal(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """NO_TUI=1 keeps the line UI on a terminal; TOOL_OUTPUT=full prints the whole node list; NO_COLOR=1
    prints the answer's Markdown as written (on a terminal it is otherwise rendered)."""
    script = [Turn([tool_use("cluster_node_list", {}, id="l1")]), Turn([text("All **good**.")])]
    with MessagesServer(script) as server:
        env.update(ANTHROPIC_BASE_URL=server.base_url, NO_TUI="1", TOOL_OUTPUT="full", NO_COLOR="1")
        pane = _start(panes, _fiskai("list the nodes"), env, tmp_path)
        assert pane.exit_code() == 0
        shown = pane.restored("Run summary")
        assert _STATUS not in shown  # never the full screen
        assert "<- (exit 0)\n   fixturectl was called with 3 argument(s):\n" in shown  # whole, under its head
        assert "All **good**." in shown


def test_full_screen_starts_with_tool_output_unfolded_and_draws_no_colour_with_no_color(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """`--tool-output full --no-color`: the result is shown without pressing Z and the screen carries no
    colour (SGR 30-38/90-97 or 256-colour sequences); `--tool-output none` shows the call alone."""
    script = [Turn([tool_use("cluster_node_list", {}, id="l1")]), Turn([text("done")])]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--tool-output", "full", "--no-color", "list"), env, tmp_path)
        shown = pane.wait_text("--- run complete, press q to quit ---")
        assert "fixturectl was called" in shown and "(Z to expand)" not in shown
        coloured = re.findall(r"\x1b\[[0-9;]*(?:3[0-8]|9[0-7]|38;5;\d+)m", pane.screen(escapes=True))
        assert coloured == []
        pane.keys("q")
        assert pane.exit_code() == 0

        server.add(Turn([tool_use("cluster_node_list", {}, id="l2")]), Turn([text("done again")]))
        quiet = _start(panes, _fiskai("--tool-output", "none", "list"), env, tmp_path)
        shown = quiet.wait_text("--- run complete, press q to quit ---")
        assert "-> cluster node list" in shown and "fixturectl was called" not in shown and "<-" not in shown
        assert re.search(r"\x1b\[[0-9;]*38;5;\d+m", quiet.screen(escapes=True))  # colour when not refused
        quiet.keys("q")
        assert quiet.exit_code() == 0


def _spinner(screen: str) -> str:
    found = re.search(r"([|/\\-]) \[running\]", screen)
    return found.group(1) if found else ""


def test_splash_spinner_vi_keys_search_copy_tab_focus_and_input_history(
    env: dict[str, str], panes: list[TmuxPane], tmp_path: Path
) -> None:
    """Steps:
    1. Until the first reply the start-up card covers the view and the status bar's spinner turns.
    2. The reply (80 rows) arrives: the card is gone, the chat row is ready. Tab moves to the transcript.
    3. g: top; Ctrl-F: a page down; G: the bottom again; k, j: a line up, down.
    4. `/needle` Enter finds the first match, `n` the second, `n` again wraps to the first.
    5. `y` sends the whole transcript to the clipboard (tmux's buffer, through OSC 52).
    6. `i` returns to the chat row; two messages later Up recalls them newest first, Down goes back.
    """
    released = threading.Event()
    rows = [f"line {n:02d}" + (" needle one" if n == 5 else " needle two" if n == 35 else "") for n in range(1, 41)]

    def held(_: RecordedRequest) -> Turn:
        released.wait(60)
        return Turn([text("\n\n".join(rows))])

    script = [held, Turn([text("A2")]), Turn([text("A3")])]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        pane = _start(panes, _fiskai("--chat", "count"), env, tmp_path, width=150, height=14)
        pane.clipboard_on()
        first = pane.wait_for(lambda s: "o(((c fiskai" in s and bool(_spinner(s)), "the start-up card")
        assert "[chat]" in first and "any key hides this" in first
        pane.wait_for(lambda s: _spinner(s) not in ("", _spinner(first)), "the spinner to turn")
        server.wait_for_requests(1)
        released.set()
        shown = pane.wait_for(lambda s: "line 40" in s and "ready for input" in s, "the first reply")
        assert "o(((c fiskai" not in shown and "tab transcript" in shown

        pane.keys("Tab")
        pane.wait_text("/ search")
        pane.keys("g")
        top = pane.wait_for(lambda s: "> count" in s and "line 40" not in s, "the top")
        pane.keys("C-f")
        paged = pane.wait_for(lambda s: "> count" not in s, "a page down")
        assert "line 40" not in paged
        pane.keys("G")
        pane.wait_for(lambda s: "line 40" in s, "the bottom")
        pane.keys("k")
        pane.wait_for(lambda s: "line 40" not in s, "a line up")
        pane.keys("j")
        pane.wait_for(lambda s: "line 40" in s, "a line down")
        assert top

        pane.keys("/")
        pane.wait_for(lambda s: s.rstrip().splitlines()[-2].startswith("/"), "the search row")
        pane.keys("needle", "Enter")
        pane.wait_for(lambda s: "needle one" in s and "found: needle" in s, "the first match")
        pane.keys("n")
        pane.wait_for(lambda s: "needle two" in s and "needle one" not in s, "the second match")
        pane.keys("n")
        pane.wait_for(lambda s: "needle one" in s and "needle two" not in s, "the search to wrap")

        pane.keys("y")
        pane.wait_for(lambda s: re.search(r"sent \d+ lines to clipboard", s) is not None, "the copy notice")
        deadline = time.monotonic() + 10
        while "needle two" not in pane.paste_buffer() and time.monotonic() < deadline:
            time.sleep(0.05)
        copied = pane.paste_buffer()
        assert "> count" in copied and "line 01" in copied and "needle two" in copied and "\x1b" not in copied

        pane.keys("G", "i")  # back to the tail (a search leaves the view where the match is), then the row
        pane.wait_text("tab transcript")
        for message, answer in (("first follow", "A2"), ("second follow", "A3")):
            pane.keys(message, "Enter")
            pane.wait_text(answer)
            pane.wait_text("ready for input")
        pane.keys("Up")
        pane.wait_for(lambda s: "> second follow" in s.splitlines()[-2], "the last message recalled")
        pane.keys("Up")
        pane.wait_for(lambda s: "> first follow" in s.splitlines()[-2], "the one before")
        pane.keys("Down", "Down")
        pane.wait_for(lambda s: s.splitlines()[-2].strip() == ">", "the empty draft back")
        pane.keys("C-d")
        assert pane.exit_code() == 0
