"""A prompter that answers from a script and records what it was asked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined

__all__ = ["ScriptedPrompter"]

Answer = ConfirmChoice | bool | int | str | PromptDeclined


@dataclass
class ScriptedPrompter:
    """Answers prompts in order from `answers`; an exhausted script declines, as a closed terminal would.

    A `PromptDeclined` in the script is raised in place of an answer. Every question lands in `asked`
    (a `GateRequest` for approvals, the question text otherwise).
    """

    __test__ = False

    answers: list[Answer] = field(default_factory=list[Answer])
    interactive: bool = True
    asked: list[GateRequest | str] = field(default_factory=list[GateRequest | str])
    reports: list[str] = field(default_factory=list[str])
    """What the gate reported after an approval (`Prompter.report`), in order."""

    @classmethod
    def of(cls, *answers: Answer, interactive: bool = True) -> ScriptedPrompter:
        """A prompter answering `answers` in order."""
        return cls(answers=list(answers), interactive=interactive)

    def can_prompt(self) -> bool:
        return self.interactive

    def _next(self, expected: type | tuple[type, ...]) -> Answer:
        if not self.answers:
            raise PromptDeclined("end of input")
        answer = self.answers.pop(0)
        if isinstance(answer, PromptDeclined):
            raise answer
        if not isinstance(answer, expected):
            raise TypeError(f"scripted answer {answer!r} does not fit this prompt (wanted {expected})")
        return answer

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        self.asked.append(request)
        answer = self._next(ConfirmChoice)
        assert isinstance(answer, ConfirmChoice)
        return answer

    async def ask_confirm(self, question: str) -> bool:
        self.asked.append(question)
        answer = self._next(bool)
        assert isinstance(answer, bool)
        return answer

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        self.asked.append(question)
        answer = self._next(int)
        assert isinstance(answer, int) and not isinstance(answer, bool)
        return answer

    async def ask_input(self, question: str, default: str) -> str:
        self.asked.append(question)
        answer = self._next(str)
        assert isinstance(answer, str)
        return answer

    def report(self, request: GateRequest, outcome: str) -> None:
        self.reports.append(outcome)

    def extend(self, answers: Iterable[Answer]) -> None:
        """Queue more answers."""
        self.answers.extend(answers)
