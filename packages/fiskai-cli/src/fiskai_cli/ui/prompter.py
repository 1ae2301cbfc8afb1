"""The line prompter: asks the operator on stderr and reads the answer from the terminal.

Questions go to stderr so a piped answer on stdout stays clean. Every model-influenced text is
sanitized before it is printed (the approval line is already rendered safe by the gate). End of input
raises `PromptDeclined`; the callers turn that into "no".

Questions are asked one at a time, and every answer is bound to the question it was typed for
(`fiskai_cli.ui.answers`): input typed before a question was shown is discarded, and a question
withdrawn while it waits (its caller was cancelled: an MCP client that disconnected) is announced on
the terminal, with whatever was typed for it thrown away, so a keystroke meant for one command can
never approve the next. Reading never blocks the event loop, so an MCP server keeps serving meanwhile.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Generator, Sequence
from typing import TextIO

import anyio

from fiskai_cli.ui.answers import Answers, answers_for
from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined
from fiskai_core.sanitize import sanitize_for_terminal

__all__ = ["LinePrompter"]

_QUESTION_MAX_RUNES = 500
_OPTION_MAX_RUNES = 200
_WITHDRAWN_MAX_RUNES = 80
_ATTEMPTS = 3
_CHOICES = {
    "": ConfirmChoice.NO,
    "1": ConfirmChoice.NO,
    "n": ConfirmChoice.NO,
    "no": ConfirmChoice.NO,
    "2": ConfirmChoice.ONCE,
    "y": ConfirmChoice.ONCE,
    "yes": ConfirmChoice.ONCE,
    "once": ConfirmChoice.ONCE,
    "3": ConfirmChoice.ALWAYS,
    "a": ConfirmChoice.ALWAYS,
    "always": ConfirmChoice.ALWAYS,
    "4": ConfirmChoice.COMMAND,
    "c": ConfirmChoice.COMMAND,
    "command": ConfirmChoice.COMMAND,
    "5": ConfirmChoice.RULE,
    "r": ConfirmChoice.RULE,
    "rule": ConfirmChoice.RULE,
}


class LinePrompter:
    """A `fiskai_core.prompter.Prompter` for line-oriented terminals."""

    def __init__(self, stdin: TextIO | None = None, stderr: TextIO | None = None, *, interactive: bool | None = None):
        """Args: the streams (the process's own by default); `interactive` overrides the terminal check."""
        self._stdin = stdin if stdin is not None else sys.stdin
        self._stderr = stderr if stderr is not None else sys.stderr
        self._interactive = interactive
        self._answers: Answers | None = None
        self._asked = 0
        """Questions shown so far; numbers them."""
        self._one_at_a_time = anyio.Lock()

    def can_prompt(self) -> bool:
        if self._interactive is not None:
            return self._interactive
        try:
            return self._stdin.isatty()
        except (ValueError, OSError):
            return False

    def _say(self, text: str) -> None:
        self._stderr.write(text)
        self._stderr.flush()

    def _input(self) -> Answers:
        if self._answers is None:
            self._answers = answers_for(self._stdin)
        return self._answers

    def _show(self, text: str) -> None:
        """Print a question; anything typed before it was on the screen is no answer to it."""
        self._say(text)
        self._input().discard_typed()

    @contextlib.contextmanager
    def _question(self, subject: str) -> Generator[int]:
        """Number one question and announce it if it is withdrawn (cancelled) before it is answered."""
        self._asked += 1
        number = self._asked
        try:
            yield number
        except anyio.get_cancelled_exc_class():
            self._input().discard_typed()
            self._say(
                f"\nquestion {number} withdrawn: its caller stopped waiting before you answered, so {subject}; "
                "anything typed for it is discarded\n"
            )
            raise

    async def _read_line(self, prompt: str, question: int) -> str:
        self._say(prompt)
        try:
            line = await self._input().read_line(question)
        except (OSError, ValueError) as err:
            raise PromptDeclined(f"the terminal could not be read: {err}") from err
        if not line:
            self._say("\n")
            raise PromptDeclined("end of input")
        return line.rstrip("\r\n")

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        command = sanitize_for_terminal(request.command, _OPTION_MAX_RUNES)
        tag = sanitize_for_terminal(request.tag, _OPTION_MAX_RUNES)
        display = sanitize_for_terminal(request.display)
        last = 5 if request.can_persist else 4
        async with self._one_at_a_time:
            with self._question(f'"{display}" was not approved') as number:
                self._show(
                    f'\nconfirmation required: "{command}" carries tag "{tag}"\n'
                    f"-> {display}\n"
                    f"Run this command? (question {number})\n"
                    "  1) No, do not run it\n"
                    "  2) Yes, run it once\n"
                    f'  3) Yes, and allow "{command}" (any arguments) for the rest of this session\n'
                    "  4) Yes, and allow this exact command line for the rest of this session\n"
                    + (
                        "  5) Yes, and save a rule for this agent (you choose which arguments it covers)\n"
                        if request.can_persist
                        else ""
                    )
                )
                for _ in range(_ATTEMPTS):
                    answer = (await self._read_line(f"Choose 1-{last} [1]: ", number)).strip().lower()
                    choice = _CHOICES.get(answer)
                    if choice is ConfirmChoice.RULE and not request.can_persist:
                        choice = None
                    if choice is ConfirmChoice.ALWAYS:
                        self._say(f'confirmation: will not ask again for "{command}" this session\n')
                    if choice is ConfirmChoice.COMMAND:
                        self._say("confirmation: will not ask again for this exact command line this session\n")
                    if choice is not None:
                        return choice
                    self._say(f"please answer a number from 1 to {last}\n")
        raise PromptDeclined("no valid answer")

    def report(self, request: GateRequest, outcome: str) -> None:
        self._say(f"confirmation: {sanitize_for_terminal(outcome)}\n")

    async def ask_confirm(self, question: str) -> bool:
        shown = sanitize_for_terminal(question, _QUESTION_MAX_RUNES)
        async with self._one_at_a_time:
            with self._question(_unanswered(shown)) as number:
                self._show(f"\n{shown}\n")
                for _ in range(_ATTEMPTS):
                    answer = (await self._read_line("[y/N]: ", number)).strip().lower()
                    if answer in ("", "n", "no"):
                        return False
                    if answer in ("y", "yes"):
                        return True
                    self._say("please answer y or n\n")
        raise PromptDeclined("no valid answer")

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        shown = sanitize_for_terminal(question, _QUESTION_MAX_RUNES)
        lines = [f"\n{shown}"]
        lines += [f"  {i}) {sanitize_for_terminal(option, _OPTION_MAX_RUNES)}" for i, option in enumerate(options, 1)]
        async with self._one_at_a_time:
            with self._question(_unanswered(shown)) as number:
                self._show("\n".join(lines) + "\n")
                for _ in range(_ATTEMPTS):
                    answer = (await self._read_line(f"Choose 1-{len(options)} (empty for none): ", number)).strip()
                    if not answer:
                        return -1
                    if answer.isdigit() and 1 <= int(answer) <= len(options):
                        return int(answer) - 1
                    self._say(f"please answer a number from 1 to {len(options)}\n")
        raise PromptDeclined("no valid answer")

    async def ask_input(self, question: str, default: str) -> str:
        shown = sanitize_for_terminal(question, _QUESTION_MAX_RUNES)
        prefilled = sanitize_for_terminal(default, _OPTION_MAX_RUNES)
        async with self._one_at_a_time:
            with self._question(_unanswered(shown)) as number:
                self._show(f"\n{shown}\n")
                answer = await self._read_line(f"[{prefilled}]: " if default else "> ", number)
        return answer if answer else default


def _unanswered(question: str) -> str:
    return f'"{sanitize_for_terminal(question, _WITHDRAWN_MAX_RUNES)}" was not answered'
