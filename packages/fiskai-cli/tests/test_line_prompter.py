"""The line prompter: questions on stderr, answers from the terminal, end of input is a refusal."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import anyio
import pytest
from typing_extensions import override

from fiskai_cli.ui.prompter import LinePrompter
from fiskai_core.confirm import ConfirmGate
from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined, Prompter

pytestmark = pytest.mark.anyio

REQUEST = GateRequest(command="stream_rm", display="app stream rm -- ORDERS", tag="ai:confirm")


def make(answers: str) -> tuple[LinePrompter, io.StringIO]:
    err = io.StringIO()
    return LinePrompter(io.StringIO(answers), err, interactive=True), err


def test_the_line_prompter_satisfies_the_prompter_seam() -> None:
    prompter: Prompter = LinePrompter(io.StringIO(), io.StringIO())
    assert prompter.can_prompt() is False  # a StringIO is no terminal


@pytest.mark.parametrize(
    ("typed", "choice"),
    [("\n", ConfirmChoice.NO), ("1\n", ConfirmChoice.NO), ("2\n", ConfirmChoice.ONCE), ("3\n", ConfirmChoice.ALWAYS)],
)
async def test_approval_shows_the_command_and_defaults_to_no(typed: str, choice: ConfirmChoice) -> None:
    prompter, err = make(typed)
    assert await prompter.approve_command(REQUEST) is choice
    shown = err.getvalue()
    assert 'confirmation required: "stream_rm" carries tag "ai:confirm"' in shown
    assert "-> app stream rm -- ORDERS" in shown
    assert "1) No, do not run it" in shown


async def test_this_command_line_and_a_saved_rule_are_offered_only_where_they_apply() -> None:
    prompter, err = make("4\n")
    assert await prompter.approve_command(REQUEST) is ConfirmChoice.COMMAND
    assert "4) Yes, and allow this exact command line" in err.getvalue()
    assert "5)" not in err.getvalue(), "no rules file to save to: no rule option"
    prompter, err = make("5\n1\n")
    assert await prompter.approve_command(REQUEST) is ConfirmChoice.NO, "5 is no answer without a rules file"
    assert "please answer a number from 1 to 4" in err.getvalue()
    persisting = GateRequest(
        command="stream_rm", display="app stream rm -- ORDERS", tag="ai:confirm", can_persist=True, suggested_rule="x"
    )
    prompter, err = make("5\n")
    assert await prompter.approve_command(persisting) is ConfirmChoice.RULE
    assert "5) Yes, and save a rule for this agent" in err.getvalue()


async def test_end_of_input_and_repeated_nonsense_are_refusals() -> None:
    prompter, _ = make("")
    with pytest.raises(PromptDeclined):
        await prompter.approve_command(REQUEST)
    prompter, err = make("maybe\nperhaps\nwhat\n2\n")
    with pytest.raises(PromptDeclined):
        await prompter.approve_command(REQUEST)
    assert err.getvalue().count("please answer a number from 1 to 4") == 3


async def test_questions_are_sanitized_before_they_reach_the_terminal() -> None:
    prompter, err = make("y\n1\n\nvalue\n")
    assert await prompter.ask_confirm("delete?\x1b[2J\x1b]0;owned\x07") is True
    assert await prompter.ask_select("pick", ["a\x1b[31m", "b"]) == 0
    assert await prompter.ask_input("name", "dflt") == "dflt"
    assert await prompter.ask_input("name", "dflt") == "value"
    assert "\x1b" not in err.getvalue()


async def test_a_report_is_one_sanitized_confirmation_line() -> None:
    prompter, err = make("")
    prompter.report(REQUEST, "approved, rule saved for agent 'a': stream_rm @1=\u202eORDERS\x1b[2J")
    assert err.getvalue() == "confirmation: approved, rule saved for agent 'a': stream_rm @1=<U+202E>ORDERS\n"


async def test_select_with_no_choice_is_minus_one() -> None:
    prompter, _ = make("\n")
    assert await prompter.ask_select("pick", ["a", "b"]) == -1


class _Screen(io.StringIO):
    """The prompter's stderr, which a test can wait on."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = anyio.Event()

    @override
    def write(self, s: str) -> int:
        written = super().write(s)
        self._changed.set()
        self._changed = anyio.Event()
        return written

    async def shows(self, text: str, times: int = 1) -> None:
        with anyio.fail_after(10):
            while self.getvalue().count(text) < times:
                await self._changed.wait()


async def test_a_line_read_for_a_withdrawn_question_never_answers_the_next() -> None:
    """On a stream that is no terminal the abandoned read is kept, but what it reads is dropped."""
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, encoding="utf-8") as stdin, os.fdopen(write_end, "w", encoding="utf-8") as typed:
        screen = _Screen()
        prompter = LinePrompter(stdin, screen, interactive=True)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(prompter.ask_confirm, "first?")
            await screen.shows("[y/N]: ")
            tasks.cancel_scope.cancel()
        typed.write("y\n")  # typed for the first question
        typed.flush()
        typed.write("n\n")
        typed.flush()
        with anyio.fail_after(5):
            assert await prompter.ask_confirm("second?") is False
        withdrawn = 'question 1 withdrawn: its caller stopped waiting before you answered, so "first?" was not answered'
        assert withdrawn in screen.getvalue()


class _Pty:
    """A pseudo-terminal: the prompter reads its follower end, the test types on the leader end."""

    def __init__(self) -> None:
        self.leader, follower = pty.openpty()
        self.stdin = os.fdopen(follower, encoding="utf-8")

    async def type(self, keys: bytes) -> None:
        """Type `keys` and wait for their echo, so the terminal has taken them in."""
        os.write(self.leader, keys)
        echoed = b""
        with anyio.fail_after(10):
            while keys.replace(b"\n", b"\r\n") not in echoed:
                await anyio.wait_readable(self.leader)
                echoed += os.read(self.leader, 4096)

    def close(self) -> None:
        os.close(self.leader)  # first: a read still blocked on the follower then fails instead of hanging
        self.stdin.close()


@pytest.fixture
def terminal() -> Iterator[_Pty]:
    opened = _Pty()
    yield opened
    opened.close()


async def test_keys_typed_for_a_withdrawn_approval_never_approve_the_next(terminal: _Pty) -> None:
    """Steps: 1. question 1 is shown; 2. "2" is typed, no Enter; 3. question 1 is withdrawn; 4. question 2
    is shown and Enter is pressed: that is an empty answer, "no", and never the "2" typed for question 1."""
    screen = _Screen()
    prompter = LinePrompter(terminal.stdin, screen, interactive=True)
    second = GateRequest(command="stream_rm", display="app stream rm -- EVIL", tag="ai:confirm")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(prompter.approve_command, REQUEST)
        await screen.shows("Choose 1-4 [1]: ")
        await terminal.type(b"2")
        tasks.cancel_scope.cancel()

    choices: list[ConfirmChoice] = []
    async with anyio.create_task_group() as tasks:

        async def ask() -> None:
            choices.append(await prompter.approve_command(second))

        tasks.start_soon(ask)
        await screen.shows("Choose 1-4 [1]: ", times=2)
        await terminal.type(b"\n")

    assert choices == [ConfirmChoice.NO]
    assert (
        'question 1 withdrawn: its caller stopped waiting before you answered, so "app stream rm -- ORDERS" was not '
        "approved; anything typed for it is discarded"
    ) in screen.getvalue()
    assert "Run this command? (question 2)" in screen.getvalue()


async def test_a_line_typed_before_the_question_was_shown_is_no_answer_to_it(terminal: _Pty) -> None:
    screen = _Screen()
    prompter = LinePrompter(terminal.stdin, screen, interactive=True)
    await terminal.type(b"2\n")  # typed ahead, before anything was asked
    choices: list[ConfirmChoice] = []
    async with anyio.create_task_group() as tasks:

        async def ask() -> None:
            choices.append(await prompter.approve_command(REQUEST))

        tasks.start_soon(ask)
        await screen.shows("Choose 1-4 [1]: ")
        await terminal.type(b"1\n")

    assert choices == [ConfirmChoice.NO]


async def test_a_terminal_answer_is_read_and_end_of_input_declines(terminal: _Pty) -> None:
    screen = _Screen()
    prompter = LinePrompter(terminal.stdin, screen, interactive=True)
    answers: list[bool] = []
    async with anyio.create_task_group() as tasks:

        async def ask() -> None:
            answers.append(await prompter.ask_confirm("proceed?"))
            with pytest.raises(PromptDeclined, match="end of input"):
                await prompter.ask_confirm("again?")

        tasks.start_soon(ask)
        await screen.shows("[y/N]: ")
        await terminal.type(b"y\n")
        await screen.shows("[y/N]: ", times=2)
        os.write(terminal.leader, b"\x04")  # Ctrl-D on an empty line: end of input

    assert answers == [True]


def test_on_a_real_terminal_the_gate_asks_and_runs_once() -> None:
    """Steps: 1. run a gate with the line prompter under a pty; 2. answer 2; 3. the call is allowed."""
    script = textwrap.dedent(
        """
        import anyio
        from fiskai_cli.ui.prompter import LinePrompter
        from fiskai_core.confirm import ConfirmGate

        async def main():
            gate = ConfirmGate(LinePrompter())
            decision = await gate.check(name="rm", tags=["ai:confirm"], argv=["app", "rm", "--", "X Y"])
            print("RESULT", decision.allowed, decision.channel)

        anyio.run(main)
        """
    )
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=follower, stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 30
    while b"Choose 1-" not in seen:
        ready, _, _ = select.select([leader], [], [], max(deadline - time.monotonic(), 0))
        assert ready, f"no prompt within 30 s: {seen!r}"
        seen += os.read(leader, 4096)
    os.write(leader, b"2\n")
    out, _ = proc.communicate(timeout=30)
    os.close(leader)
    assert b"-> app rm -- 'X Y'" in seen
    assert out.strip() == b"RESULT True prompt"


def test_gate_type_accepts_the_line_prompter() -> None:
    assert ConfirmGate(LinePrompter(interactive=False)).prompter.can_prompt() is False
