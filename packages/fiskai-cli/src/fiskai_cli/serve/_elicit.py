"""Elicitation on the prompts channel (`prompts.elicit: true`): a run's questions go to the caller.

A question is an `elicit.request.<kind>` message on the turn's reply set (`approve` for a gated command,
`confirm`/`select`/`input` for the ask_human tools), carrying a fresh `question_id`, the call's
`tool_use_id` when it has one, and `wait_ms` (the window, `expose.agent.a2a.request_timeout`). Answers and
`elicit.waiting` arrive on `choria.fisk-ai.elicit.<identity>.<request>`, each acked; an unknown or
expired question is a 404, an answer that does not fit its question a 400. `waiting` restarts the window
(not during a drain). `no` and `no_operator` leave the call unrun and the model is told the refusal is
final; `always` stops asking about that tool for the rest of the conversation (held by this worker).

No answer within the window: an approval parks the run (it ends `suspended`, the call unrun, and a
`request.answer` or a next prompt asks again); an ask_human question is declined and the model is told
nobody answered (fiskai has no deferred calls, so it cannot end the run `deferred`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio

from fiskai_a2a.errors import MessageError
from fiskai_a2a.nats_service import Inbound
from fiskai_a2a.protocol import Identity, new_id, reply_header, serve as wire
from fiskai_agent import RunControl
from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined

from ._channel import CallLedger

__all__ = ["CallerPrompter", "Preset"]

_log = logging.getLogger("fiskai.serve")
_CHOICES: Final = {"no": ConfirmChoice.NO, "once": ConfirmChoice.ONCE, "always": ConfirmChoice.ALWAYS}
_REPLIES: Final = frozenset({wire.WAITING, *(wire.REPLY_PREFIX + k for k in (*wire.QUESTION_KINDS, "no_operator"))})
NO_OPERATOR: Final = "the caller has no operator to answer"

Send = Callable[..., Awaitable[bool]]
"""Sends one message of the turn's reply set: `send(protocol, **fields)`."""


@dataclass(frozen=True, slots=True)
class Preset:
    """An approval given by `request.answer` for a call asked about before the run ended."""

    tool_use_id: str
    choice: str | None
    """`no`, `once` or `always`; None: `no_operator`."""


class _Open:
    __slots__ = ("acks", "answer", "deadline", "done", "kind", "shown")

    def __init__(self, kind: str, window: float) -> None:
        self.kind = kind
        self.shown = time.monotonic()
        self.deadline = self.shown + window
        self.answer: wire.QuestionReply | None = None
        self.done = anyio.Event()
        self.acks = 0


class CallerPrompter:
    """A `Prompter` that asks the prompts caller over the turn's reply set.

    Args:
        send: Sends a message of the turn's reply set.
        me: This worker's identity (stamped on acks).
        window: Seconds a question is held (restarted by `elicit.waiting`).
        calls: The turn's calls, to name the one an approval is about.
        control: Parks the run when an approval goes unanswered.
        always: Tools the caller allowed for the rest of the conversation (shared across its turns).
        draining: Whether the worker is draining (a `waiting` is acked but no longer restarts the window).
        preset: An answer a `request.answer` brought for one call.
    """

    def __init__(
        self,
        send: Send,
        *,
        me: Identity,
        window: float,
        calls: CallLedger,
        control: RunControl,
        always: set[str],
        draining: Callable[[], bool],
        preset: Preset | None = None,
    ) -> None:
        self._send = send
        self._me = me
        self.window = window
        self._calls = calls
        self._control = control
        self._always = always
        self._draining = draining
        self._preset = preset
        self._open: dict[str, _Open] = {}
        self.parked: str | None = None
        """The call whose approval went unanswered (the run was parked), or None."""

    @property
    def asking(self) -> bool:
        """Whether a question is open (a cancel then stops the run at once)."""
        return bool(self._open)

    def can_prompt(self) -> bool:
        return True

    def report(self, request: GateRequest, outcome: str) -> None:
        del request, outcome  # no rules are saved over this channel

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        if request.command in self._always:
            return ConfirmChoice.ALWAYS
        tool_use_id = self._calls.take(request.command)
        preset, self._preset = self._preset, None
        if preset is not None and preset.tool_use_id == tool_use_id:
            if preset.choice is None:
                raise PromptDeclined(NO_OPERATOR)
            answer = preset.choice
        else:
            self._preset = preset
            fields: dict[str, Any] = {"command": request.command, "display": request.display}
            if request.tag:
                fields["tag"] = request.tag
            answer = (await self._ask("approve", tool_use_id, **fields)).choice or ""
        choice = _CHOICES.get(answer, ConfirmChoice.NO)
        if choice is ConfirmChoice.ALWAYS:
            self._always.add(request.command)
        return choice

    async def ask_confirm(self, question: str) -> bool:
        reply = await self._ask("confirm", self._calls.take("ask_human_confirm"), question=question)
        return bool(reply.confirmed)

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        reply = await self._ask(
            "select", self._calls.take("ask_human_select"), question=question, options=list(options)
        )
        index = reply.index
        return index if index is not None and 0 <= index < len(options) else -1

    async def ask_input(self, question: str, default: str) -> str:
        fields: dict[str, Any] = {"question": question}
        if default:
            fields["default"] = default
        reply = await self._ask("input", self._calls.take("ask_human_input"), **fields)
        return reply.value or ""

    async def _ask(self, kind: str, tool_use_id: str, **fields: Any) -> wire.QuestionReply:
        await self._calls.settle()  # the events that led here go first
        question_id = new_id()
        wait_ms = round(self.window * 1000)
        held = _Open(kind, self.window)
        self._open[question_id] = held
        try:
            extra = {"tool_use_id": tool_use_id} if tool_use_id else {}
            await self._send(wire.QUESTION_PREFIX + kind, question_id=question_id, wait_ms=wait_ms, **extra, **fields)
            _log.info("Asked the caller a question question=%s kind=%s wait_ms=%d", question_id, kind, wait_ms)
            while not held.done.is_set():
                remaining = held.deadline - time.monotonic()
                if remaining <= 0:
                    break
                with anyio.move_on_after(remaining):
                    await held.done.wait()
        finally:
            del self._open[question_id]
        reply = held.answer
        if reply is None:
            return await self._unanswered(kind, tool_use_id)
        _log.info(
            "A question was answered question=%s held=%.1fs acks=%d",
            question_id,
            time.monotonic() - held.shown,
            held.acks,
        )
        if reply.kind == "no_operator":
            raise PromptDeclined(NO_OPERATOR)
        return reply

    async def _unanswered(self, kind: str, tool_use_id: str) -> wire.QuestionReply:
        if kind != "approve":
            raise PromptDeclined(f"nobody answered within {self.window:g}s")
        # The call stays unrun and unanswered in the journal: the next turn (or a request.answer) asks again.
        self.parked = tool_use_id or "?"
        self._control.abort()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover - the abort cancels the run

    async def on_message(self, inbound: Inbound) -> None:
        """An answer or a `waiting` on the turn's elicit subject."""
        try:
            message = wire.decode(inbound.data, expect=_REPLIES)
        except MessageError as err:
            await inbound.refuse(err.code, f"the request is not a valid v1 message: {err}")
            return
        assert isinstance(message, wire.QuestionReply | wire.Waiting)
        held = self._open.get(message.question_id)
        if held is None:
            await inbound.refuse("404", f'no question "{message.question_id}" is waiting for an answer')
            return
        if isinstance(message, wire.Waiting):
            if not self._draining():
                held.deadline = time.monotonic() + self.window
            held.acks += 1
        else:
            if message.kind != "no_operator":
                field = wire.REPLY_FIELDS[held.kind]
                if message.kind != held.kind or getattr(message, field) is None:
                    await inbound.refuse(
                        "400", f"question {message.question_id} asks for an {held.kind} answer with its {field} field"
                    )
                    return
            held.answer = message
            held.done.set()
        header = reply_header(wire.ACK, message.header, sender=self._me, sequence=1)
        await inbound.send(wire.encode(wire.Ack(header=header, accepted=True)))
