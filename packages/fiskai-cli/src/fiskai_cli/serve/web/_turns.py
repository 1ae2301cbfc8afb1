"""Admitting and running web turns: the fixed 5-turn limit, one turn per conversation, the question rule.

Each admitted turn runs in the channel's task group, not in the request's task: a page that goes away
(a reload) leaves its turn running to its end, and the journal keeps the answer for the page to read
back. The request's task only relays the turn's events to its stream.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from fiskai_agent import RunControl
from fiskai_agent.llm import message_from_json
from fiskai_cli.serve._channel import EventKind, Work, WorkOutcome, WorkRunner
from fiskai_cli.serve._replay import session_exists
from fiskai_runstate import JournalNotFoundError, fold

from ._ids import session_for
from ._questions import ASK_KINDS, Answer, Question, WebPrompter

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from fiskai_runstate import Store

__all__ = ["MAX_TURNS", "PING_SECONDS", "RETRY_AFTER", "Admission", "Refused", "TurnEvent", "Turns", "relay"]

MAX_TURNS: Final = 5
"""Turns at once, fixed (reference 1.4): no key changes it."""
RETRY_AFTER: Final = "5"
PING_SECONDS: Final = 15.0
"""Silence after which the stream carries an SSE comment, so proxies keep it open."""
_log = logging.getLogger("fiskai.serve")

TurnEvent = tuple[EventKind | Literal["end", "ping"], dict[str, Any]]
"""A run's event, a keep-alive `("ping", {})`, or the last one: `("end", {reason, answer, error, code, question})`."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A turn not taken: the HTTP status and why (503 carries `Retry-After`)."""

    status: int
    message: str
    code: str


@dataclass(frozen=True, slots=True)
class Admission:
    """An admitted turn: its events, until the `end` event."""

    session: str
    run_id: str
    events: MemoryObjectReceiveStream[TurnEvent]


class Turns:
    """The channel's turns: admission, the questions waiting for answers, the running controls."""

    def __init__(self, identity: str, store: Store, *, gated: Callable[[], Collection[str]] = frozenset) -> None:
        self.identity = identity
        self.store = store
        self.gated = gated
        """The tools the confirm gate asks about (the card's destructive ones), read when a question is recovered."""
        self.runner: WorkRunner | None = None
        self.group: TaskGroup | None = None
        self.draining = False
        self.running: dict[str, RunControl] = {}
        """Running turns by session."""
        self.questions: dict[str, Question] = {}
        """The question each conversation waits on; after a restart, recovered from the journal (`waiting`)."""
        self._looked: set[str] = set()
        """Conversations whose journal was looked at for a question since this worker started."""
        self.idle = anyio.Event()
        self.idle.set()

    async def admit(self, thread: str, text: str, answer: Answer | None, *, run_id: str) -> Admission | Refused:
        """Take a turn of `thread` (new text, or the answer to its question), or say why not."""
        if self.draining:
            return Refused(503, f"agent {self.identity} is shutting down; this turn was not started", "draining")
        if len(self.running) >= MAX_TURNS:
            return Refused(503, f"agent {self.identity} is busy: {MAX_TURNS} turns are running; retry", "capacity")
        session = session_for(self.identity, thread)
        if session in self.running:
            return Refused(409, "a turn of this conversation is running; wait for its end", "conversation_busy")
        waiting = await self.waiting(session)
        if session in self.running:  # recovering the question took a turn of it
            return Refused(409, "a turn of this conversation is running; wait for its end", "conversation_busy")
        if waiting is not None and answer is None:
            return Refused(
                409,
                f"the conversation waits for an answer to {waiting.kind} {waiting.tool_use_id}; send it as the answer",
                "question_waiting",
            )
        if answer is None and not text.strip():
            return Refused(400, "the last message holds no text", "empty_prompt")
        if waiting is not None and answer is not None and answer.tool_use_id != waiting.tool_use_id:
            return Refused(409, f"no question waits on call {answer.tool_use_id}", "unknown_call")
        control = RunControl()
        self.running[session] = control  # taken before the first await: a second POST sees it
        self.idle = anyio.Event()
        try:
            resume = await session_exists(self.store, session)
            # The call a question was about is the journal's first unanswered one (the worker may have
            # restarted since it asked, so its memory is not the judge).
            asked = await self._locator(session)() if answer is not None and resume else None
        except BaseException:
            self._release(session)
            raise
        if answer is not None and not resume:
            self._release(session)
            return Refused(404, "no such conversation to answer in", "unknown_conversation")
        if answer is not None and (asked is None or asked[0] != answer.tool_use_id):
            self._release(session)
            return Refused(409, f"no question waits on call {answer.tool_use_id}", "unknown_call")
        send, receive = anyio.create_memory_object_stream[TurnEvent](math.inf)
        prompter = WebPrompter(control=control, locate=self._locator(session), answer=answer)
        work = Work(
            channel="web",
            session_id=session,
            prompt="" if answer is not None else text,
            caller="web",
            resume=resume,
            prompter=prompter,
            sink=_sink(send),
            control=control,
            argv=True,
        )
        assert self.group is not None and self.runner is not None, "turns are admitted only while serving"
        self.group.start_soon(self._run, work, prompter, send)
        return Admission(session=session, run_id=run_id, events=receive)

    async def _run(self, work: Work, prompter: WebPrompter, send: MemoryObjectSendStream[TurnEvent]) -> None:
        session = work.session_id
        self.questions.pop(session, None)
        try:
            assert self.runner is not None
            outcome = await self.runner.run(work)
            end: dict[str, Any]
            if prompter.asked is not None:
                self.questions[session] = prompter.asked
                end = {"reason": "question", "question": prompter.asked}
            elif work.control is not None and work.control.aborted:
                end = {"reason": "failed", "error": "the worker stopped", "code": "stopped"}
            else:
                end = _end(outcome)
            _log.info("Web turn ended session=%s reason=%s", session, end["reason"])
            with anyio.CancelScope(shield=True):
                await _send(send, ("end", end))
        finally:
            send.close()
            self._release(session)

    async def waiting(self, session: str) -> Question | None:
        """The question `session` waits on; once per worker, one the journal shows is asked again.

        A restarted worker has no question in memory, but the journal keeps the call it was about
        (unanswered, the run interrupted); a resume re-dispatches it and the gate or the ask_human tool
        asks again, with its text, before any model call. That resume is run here, ending at the question.
        """
        question = self.questions.get(session)
        if question is not None or session in self.running or session in self._looked or self.runner is None:
            return question
        if self.draining or len(self.running) >= MAX_TURNS:
            return None  # no turn to spare for asking again now; a later look will
        self._looked.add(session)
        if not await self._asks_again(session) or session in self.running:
            return self.questions.get(session)  # (a turn taken while the journal was read decides)
        control = RunControl()
        self.running[session] = control
        self.idle = anyio.Event()
        prompter = WebPrompter(control=control, locate=self._locator(session))
        work = Work(
            channel="web",
            session_id=session,
            prompt="",
            caller="web",
            resume=True,
            prompter=prompter,
            control=control,
            argv=True,
        )
        try:
            await self.runner.run(work)
        finally:
            self._release(session)
        if prompter.asked is not None:
            self.questions[session] = prompter.asked
            _log.info("Web question recovered from the journal session=%s call=%s", session, prompter.asked.tool_use_id)
        return prompter.asked

    async def _asks_again(self, session: str) -> bool:
        """Whether the journal shows a run interrupted while its first unanswered call waited on a person.

        That is an ask_human call (asked again on resume, reference 8.3), or a call of a gated tool that
        never started (no intent: the gate asks before the intent is journaled). Anything else is left
        alone: resuming it would run a tool (or call the model) on a mere look at the conversation.
        """
        try:
            state = fold(await self.store.load(session))
        except JournalNotFoundError:
            return False
        pending, terminal = state.pending, state.terminal
        if pending is None or not pending.unanswered or terminal is None or terminal.reason != "error":
            return False
        wanted = pending.unanswered[0]
        names = [use.name for use in message_from_json(pending.assistant).tool_uses if use.id == wanted]
        if not names:
            return False
        if names[0] in ASK_KINDS:
            return True
        started = any(intent.tool_use_id == wanted for intent in state.intents_without_results)
        return not started and names[0] in self.gated()

    def _release(self, session: str) -> None:
        self.running.pop(session, None)
        if not self.running:
            self.idle.set()

    def _locator(self, session: str):
        store = self.store

        async def locate() -> tuple[str, str] | None:
            try:
                state = fold(await store.load(session))
            except JournalNotFoundError:
                return None
            pending = state.pending
            if pending is None or not pending.unanswered:
                return None
            wanted = pending.unanswered[0]
            for use in message_from_json(pending.assistant).tool_uses:
                if use.id == wanted:
                    return wanted, use.name
            return wanted, ""

        return locate

    def stop(self) -> None:
        for control in self.running.values():
            control.abort()


def _end(outcome: WorkOutcome) -> dict[str, Any]:
    if outcome.reason == "completed":
        return {"reason": "completed", "answer": outcome.answer, "usage": outcome.usage}
    if outcome.reason == "crashed":
        return {"reason": "failed", "error": "the worker hit a bug; see its log", "code": "crashed"}
    code = outcome.code or outcome.reason
    return {"reason": "failed", "error": outcome.error or outcome.reason, "code": code, "usage": outcome.usage}


def _sink(send: MemoryObjectSendStream[TurnEvent]):
    async def sink(kind: EventKind, block: dict[str, Any]) -> None:
        await _send(send, (kind, block))

    return sink


async def _send(send: MemoryObjectSendStream[TurnEvent], event: TurnEvent) -> None:
    try:
        send.send_nowait(event)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return  # the page went away; the turn goes on and the journal keeps it


async def relay(admission: Admission, *, ping: float = PING_SECONDS) -> AsyncIterator[TurnEvent]:
    """The turn's events until its end, with a `("ping", {})` after each `ping` seconds of silence.

    A long tool call would otherwise leave the stream silent long enough for a proxy to close it.
    """
    async with admission.events as events:
        while True:
            with anyio.move_on_after(ping) as quiet:
                try:
                    event = await events.receive()
                except anyio.EndOfStream:
                    return
            if quiet.cancelled_caught:
                yield ("ping", {})
            else:
                yield event  # pyright: ignore[reportPossiblyUnboundVariable] - set unless the wait timed out
