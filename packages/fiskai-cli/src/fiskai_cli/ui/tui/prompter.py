"""The full-screen prompter: approvals and ask_human questions as modal questions in the live view.

Same choices as the line prompter (`fiskai_cli.ui.prompter`). The question is posted to the view's
loop; the run waits on the answer. Escape, Ctrl-C and a screen that goes away (the terminal lost,
the operator quit) raise `PromptDeclined`; the callers turn that into "no". Each answer is recorded in
the transcript (`approved (once): ...`, `refused: ...`); "save a rule" is recorded only when the gate
reports the rule saved, since the operator may still dismiss the rule question (which asks again).
After `decline_all` (the run is suspending on a signal) every question is declined without asking.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from fiskai_cli.ui.tui.transcript import entry
from fiskai_cli.ui.tui.view import LiveView, Question
from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined
from fiskai_core.sanitize import sanitize_for_terminal

__all__ = ["TuiPrompter"]

_QUESTION_MAX_RUNES = 500
_OPTION_MAX_RUNES = 200


class TuiPrompter:
    """A `fiskai_core.prompter.Prompter` drawing into a `LiveView`."""

    def __init__(self, view: LiveView) -> None:
        self._view = view
        self.closed = False
        """Set when the screen is gone: every question is then declined without asking."""
        self._declining = ""

    def decline_all(self, why: str) -> None:
        """Decline the open question and every later one with `why` (the screen stays up)."""
        self._declining = why
        self._view.post(lambda: self._view.decline_pending(why))

    def can_prompt(self) -> bool:
        return not self.closed

    async def _ask(self, lines: Sequence[str], choices: Sequence[str] = (), default: str | None = None) -> int | str:
        if self.closed:
            raise PromptDeclined("the terminal is gone")
        if self._declining:
            raise PromptDeclined(self._declining)
        future: asyncio.Future[int | str] = asyncio.get_running_loop().create_future()
        question = Question(lines=lines, choices=choices, default=default, future=future)
        self._view.post(lambda: self._view.ask(question))
        try:
            return await future
        except asyncio.CancelledError:
            self._view.post(lambda: self._view.decline_pending("the run was cancelled"))
            raise

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        command = sanitize_for_terminal(request.command, _OPTION_MAX_RUNES)
        tag = sanitize_for_terminal(request.tag, _OPTION_MAX_RUNES)
        display = sanitize_for_terminal(request.display)
        choices = [
            ("No, do not run it", ConfirmChoice.NO),
            ("Yes, run it once", ConfirmChoice.ONCE),
            (f'Yes, and allow "{command}" (any arguments) for the rest of this session', ConfirmChoice.ALWAYS),
            ("Yes, and allow this exact command line for the rest of this session", ConfirmChoice.COMMAND),
        ]
        if request.can_persist:
            choices.append(
                ("Yes, and save a rule for this agent (you choose which arguments it covers)", ConfirmChoice.RULE)
            )
        lines = [f'confirmation required: "{command}" carries tag "{tag}"', f"-> {display}", "Run this command?"]
        try:
            answer = await self._ask(lines, [label for label, _ in choices])
        except PromptDeclined:
            self._view.post(lambda: self._view.add([entry("meta", f"declined: {display}")]))
            raise
        choice = choices[int(answer)][1]
        if choice is not ConfirmChoice.RULE:
            word = {ConfirmChoice.NO: "refused"}.get(choice, f"approved ({choice.value})")
            self._view.post(lambda: self._view.add([entry("meta", f"{word}: {display}")]))
        return choice

    def report(self, request: GateRequest, outcome: str) -> None:
        self._view.post(lambda: self._view.add([entry("meta", outcome)]))

    async def ask_confirm(self, question: str) -> bool:
        answer = await self._ask([sanitize_for_terminal(question, _QUESTION_MAX_RUNES)], ["No", "Yes"])
        return answer == 1

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        shown = [sanitize_for_terminal(option, _OPTION_MAX_RUNES) for option in options]
        answer = await self._ask([sanitize_for_terminal(question, _QUESTION_MAX_RUNES)], shown)
        return int(answer)

    async def ask_input(self, question: str, default: str) -> str:
        answer = await self._ask([sanitize_for_terminal(question, _QUESTION_MAX_RUNES)], default=default)
        return str(answer) or default
