"""Questions a web turn asks, and the prompter that ends the turn on each one.

A web caller is not connected while a run waits, so a question ends the turn (reference 8.2): the
prompter records it, stops the run at once (the call stays unanswered in the journal) and the answer
arrives with the page's next POST, which resumes the conversation. On resume the journal re-dispatches
the unanswered call; the gate or the ask_human tool asks again, and this time the prompter answers
from the POST. Which call is being asked about is read from the journal: calls run one at a time in
block order, so it is the first unanswered call of the last model turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

import anyio

from fiskai_agent import RunControl
from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined

__all__ = ["ASK_KINDS", "Answer", "AnswerError", "Locator", "Question", "WebPrompter", "parse_answer"]

Kind = Literal["approval", "confirm", "select", "input"]
ASK_KINDS: dict[str, Kind] = {
    "ask_human_confirm": "confirm",
    "ask_human_select": "select",
    "ask_human_input": "input",
}
"""The kind of question each built-in question tool asks; any other tool's question is an approval."""

_APPROVALS: dict[str, ConfirmChoice] = {
    "once": ConfirmChoice.ONCE,
    "conversation": ConfirmChoice.ALWAYS,
    "decline": ConfirmChoice.NO,
}

Locator = Callable[[], Awaitable["tuple[str, str] | None"]]
"""The call being dispatched now: (tool_use_id, tool name), or None when the journal shows none."""


class AnswerError(ValueError):
    """An answer that does not parse; the message names the field and the fix."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """What the page shows and must answer on its next POST."""

    kind: Kind
    tool_use_id: str
    tool: str
    text: str
    """The question, or for an approval the exact command line."""
    options: tuple[str, ...] = ()
    default: str = ""
    tag: str = ""
    """For an approval: the tag that gated the command."""

    @property
    def interrupt_id(self) -> str:
        """AG-UI's id for it: `<kind>:<toolUseId>`."""
        return f"{self.kind}:{self.tool_use_id}"

    def wire(self) -> dict[str, Any]:
        """The JSON both protocols carry (camelCase, like the answer)."""
        body: dict[str, Any] = {"toolUseId": self.tool_use_id, "kind": self.kind, "tool": self.tool, "text": self.text}
        if self.kind == "approval":
            body["tag"] = self.tag
            body["choices"] = list(_APPROVALS)
        if self.kind == "select":
            body["options"] = list(self.options)
        if self.kind == "input":
            body["default"] = self.default
        return body


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """A `fiskAnswer` (AI SDK) or a `resume` entry (AG-UI), checked for its kind."""

    tool_use_id: str
    kind: Kind
    approval: str = ""
    confirmed: bool = False
    index: int = -1
    value: str | None = None


def parse_answer(raw: object) -> Answer:
    """`{toolUseId, kind, approval|confirmed|index|value}` to an `Answer`.

    Raises:
        AnswerError: a missing or mistyped field.
    """
    if not isinstance(raw, dict):
        raise AnswerError("fiskAnswer must be an object {toolUseId, kind, ...}")
    body: dict[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    tool_use_id, kind = body.get("toolUseId"), body.get("kind")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        raise AnswerError("fiskAnswer.toolUseId must name the call the question was about")
    if kind == "approval":
        approval = body.get("approval")
        if approval not in _APPROVALS:
            raise AnswerError("fiskAnswer.approval must be once, conversation or decline")
        return Answer(tool_use_id=tool_use_id, kind="approval", approval=str(approval))
    if kind == "confirm":
        confirmed = body.get("confirmed")
        if not isinstance(confirmed, bool):
            raise AnswerError("fiskAnswer.confirmed must be true or false")
        return Answer(tool_use_id=tool_use_id, kind="confirm", confirmed=confirmed)
    if kind == "select":
        index = body.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise AnswerError("fiskAnswer.index must be the chosen option's index, or -1 for none")
        return Answer(tool_use_id=tool_use_id, kind="select", index=index)
    if kind == "input":
        value = body.get("value")
        if value is not None and not isinstance(value, str):
            raise AnswerError("fiskAnswer.value must be text, or null for no answer")
        return Answer(tool_use_id=tool_use_id, kind="input", value=value)
    raise AnswerError("fiskAnswer.kind must be approval, confirm, select or input")


@dataclass(slots=True, kw_only=True)
class WebPrompter:
    """A `Prompter` for one web turn: answers from the POST's answer, else asks and ends the turn."""

    control: RunControl
    locate: Locator
    answer: Answer | None = None
    asked: Question | None = None
    _used: bool = field(default=False)

    def can_prompt(self) -> bool:
        return True

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        found = await self._given("approval")
        if found is not None:
            return _APPROVALS[found.approval]
        await self._ask("approval", request.display, tag=request.tag, tool=request.command)

    async def ask_confirm(self, question: str) -> bool:
        found = await self._given("confirm")
        if found is not None:
            return found.confirmed
        await self._ask("confirm", question)

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        found = await self._given("select")
        if found is not None:
            return found.index if 0 <= found.index < len(options) else -1
        await self._ask("select", question, options=tuple(options))

    async def ask_input(self, question: str, default: str) -> str:
        found = await self._given("input")
        if found is not None:
            if found.value is None:
                raise PromptDeclined("the person gave no answer")
            return found.value
        await self._ask("input", question, default=default)

    def report(self, request: GateRequest, outcome: str) -> None:
        del request, outcome

    async def _given(self, kind: Kind) -> Answer | None:
        """The POST's answer when it is about the call being dispatched now (and not used yet)."""
        answer = self.answer
        if answer is None or self._used or answer.kind != kind:
            return None
        located = await self.locate()
        if located is None or located[0] != answer.tool_use_id:
            return None
        self._used = True
        return answer

    async def _ask(
        self, kind: Kind, text: str, *, tag: str = "", tool: str = "", options: tuple[str, ...] = (), default: str = ""
    ) -> NoReturn:
        located = await self.locate()
        tool_use_id, name = located if located is not None else ("", tool)
        self.asked = Question(
            kind=kind, tool_use_id=tool_use_id, tool=name or tool, text=text, options=options, default=default, tag=tag
        )
        # Stops the run here: the call keeps no result, so the next turn dispatches it again.
        self.control.abort()
        await anyio.sleep_forever()
        raise AssertionError("unreachable: the abort cancels the run")  # pragma: no cover
