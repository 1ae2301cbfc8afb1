"""The line prompter: asks the operator on stderr and reads the answer from the terminal.

Questions go to stderr so a piped answer on stdout stays clean. Every model-influenced text is
sanitized before it is printed (the approval line is already rendered safe by the gate). End of input
raises `PromptDeclined`; the callers turn that into "no".

Reads happen on a helper thread so an MCP server's event loop keeps serving while a prompt waits. A
read abandoned by cancellation is kept and delivers the next line to the next prompt, so two threads
never compete for the terminal.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import TextIO

import anyio.to_thread

from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined
from fiskai_core.sanitize import sanitize_for_terminal

__all__ = ["LinePrompter"]

_QUESTION_MAX_RUNES = 500
_OPTION_MAX_RUNES = 200
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
        self._pending: Future[str] | None = None
        self._lock = threading.Lock()

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

    def _start_read(self) -> Future[str]:
        with self._lock:
            if self._pending is None:
                future: Future[str] = Future()

                def read() -> None:
                    try:
                        future.set_result(self._stdin.readline())
                    except (OSError, ValueError) as err:
                        future.set_exception(err)

                threading.Thread(target=read, name="fiskai-prompt-read", daemon=True).start()
                self._pending = future
            return self._pending

    async def _read_line(self, prompt: str) -> str:
        self._say(prompt)
        future = self._start_read()
        try:
            line = await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except (OSError, ValueError) as err:
            with self._lock:
                self._pending = None
            raise PromptDeclined(f"the terminal could not be read: {err}") from err
        with self._lock:
            self._pending = None
        if not line:
            self._say("\n")
            raise PromptDeclined("end of input")
        return line.rstrip("\r\n")

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        command = sanitize_for_terminal(request.command, _OPTION_MAX_RUNES)
        tag = sanitize_for_terminal(request.tag, _OPTION_MAX_RUNES)
        self._say(
            f'\nconfirmation required: "{command}" carries tag "{tag}"\n'
            f"-> {sanitize_for_terminal(request.display)}\n"
            "Run this command?\n"
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
        last = 5 if request.can_persist else 4
        for _ in range(_ATTEMPTS):
            answer = (await self._read_line(f"Choose 1-{last} [1]: ")).strip().lower()
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
        self._say(f"\n{sanitize_for_terminal(question, _QUESTION_MAX_RUNES)}\n")
        for _ in range(_ATTEMPTS):
            answer = (await self._read_line("[y/N]: ")).strip().lower()
            if answer in ("", "n", "no"):
                return False
            if answer in ("y", "yes"):
                return True
            self._say("please answer y or n\n")
        raise PromptDeclined("no valid answer")

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        lines = [f"\n{sanitize_for_terminal(question, _QUESTION_MAX_RUNES)}"]
        lines += [f"  {i}) {sanitize_for_terminal(option, _OPTION_MAX_RUNES)}" for i, option in enumerate(options, 1)]
        self._say("\n".join(lines) + "\n")
        for _ in range(_ATTEMPTS):
            answer = (await self._read_line(f"Choose 1-{len(options)} (empty for none): ")).strip()
            if not answer:
                return -1
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return int(answer) - 1
            self._say(f"please answer a number from 1 to {len(options)}\n")
        raise PromptDeclined("no valid answer")

    async def ask_input(self, question: str, default: str) -> str:
        shown = sanitize_for_terminal(default, _OPTION_MAX_RUNES)
        self._say(f"\n{sanitize_for_terminal(question, _QUESTION_MAX_RUNES)}\n")
        answer = await self._read_line(f"[{shown}]: " if default else "> ")
        return answer if answer else default
