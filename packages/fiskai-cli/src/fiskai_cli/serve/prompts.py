"""The prompts channel (`expose.agent.a2a.prompts`): other agents send prompts over NATS, answers stream back.

Requests arrive on `choria.fisk-ai.task.<identity>` (queue group = identity). Each is answered on the
caller's inbox with a numbered reply set: `ack` (sequence 1), `event.<kind>` blocks as the run produces
them, then a terminal `result` or `error`. Refusals after parsing are a negative ack then an `error`; a
malformed request is refused before any ack with a micro service error (400). A turn holds a slot from
its ack to its end; a caller finding every slot busy is refused (`capacity`), never queued.

Conversations: an accepting ack carries a `conversation_token` (128 random bits, never logged); the
journal is `t-` plus a hash of the identity and the token, so holding the token is what lets a caller add
a turn, and any worker seeing the journal store can take it. Cancel: `choria.fisk-ai.cancel.<identity>.
<request>`, subscribed only while the turn runs here (else the caller gets no responders); it parks the
run at its next boundary and stops a command in flight (its process group), ending `suspended`.

Elicitation (`elicit: true`, see `_elicit`): approvals and ask_human questions go to the caller on the
reply set, answers come back on `choria.fisk-ai.elicit.<identity>.<request>`; `request.answer` answers an
approval left unanswered by a turn that then parked. Without `elicit`, a gated tool is refused (nobody to
ask) and the model is told why and not to retry.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, Final

import anyio
from anyio.abc import TaskStatus

from fiskai_a2a.errors import MessageError
from fiskai_a2a.nats_service import Inbound, ServiceHost, serve_subject
from fiskai_a2a.protocol import Identity, new_id, reply_header, serve as wire
from fiskai_agent import RunControl

from ._channel import CallLedger, EventKind, Work, WorkOutcome, WorkRunner
from ._elicit import CallerPrompter, Preset
from ._replay import PendingCalls

__all__ = ["PromptsChannel", "session_for"]

_REQUEST_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_log = logging.getLogger("fiskai.serve")

Reader = Callable[[str, int], Awaitable["tuple[list[tuple[str, dict[str, Any]]], bool, dict[str, int]] | None"]]
"""Reads `replay` blocks of a session back: (blocks, truncated, usage), or None when there is no such session."""


def session_for(identity: str, token: str) -> str:
    """The journal of a conversation: `t-` and a hash of identity and token (never the token itself)."""
    return "t-" + hashlib.sha256(f"{identity}\x00{token}".encode()).hexdigest()[:48]


class _ReplySet:
    """The numbered messages of one request's reply set; the sequence advances only on a sent message."""

    def __init__(self, inbound: Inbound, request: wire.ServeMessage, me: Identity) -> None:
        self.inbound = inbound
        self.request = request.header
        self.me = me
        self.sequence = 0
        self.stream = True

    async def send(self, protocol: str, **body: Any) -> bool:
        header = reply_header(protocol, self.request, sender=self.me, sequence=self.sequence + 1)
        if protocol.startswith(wire.EVENT_PREFIX):
            cls: type[wire.ServeMessage] = wire.EventMessage
        elif protocol.startswith(wire.QUESTION_PREFIX):
            cls = wire.Question
        else:
            cls = _CLASSES[protocol]
        data = wire.encode(cls.model_validate({"header": header, **body}))
        if await self.inbound.send(data):
            self.sequence += 1
            return True
        return False

    async def event(self, kind: EventKind, block: dict[str, Any]) -> None:
        if self.stream:
            await self.send(wire.EVENT_PREFIX + kind, block=block)

    async def refuse(self, code: str, text: str) -> None:
        await self.send(wire.ACK, accepted=False, reason=text)
        await self.send(wire.ERROR, error=text, code=code, stop_reason="error")


_CLASSES: Final[dict[str, type[wire.ServeMessage]]] = {
    wire.ACK: wire.Ack,
    wire.RESULT: wire.ResultReply,
    wire.ERROR: wire.ErrorReply,
}


class PromptsChannel:
    """A `Channel`: prompts over NATS for one identity.

    Args:
        host: The identity's micro service (shared with the tool endpoint).
        workers: Turns run at once (`prompts.workers`).
        reader: Reads a conversation back (`request.read`).
        exists: Whether a session's journal exists (a follow-up to an unknown token is refused before its ack).
        elicit: Put approvals and questions to the caller (`prompts.elicit`).
        window: Seconds a question is held (`expose.agent.a2a.request_timeout`).
        pending: A conversation's calls still without a result (what `request.answer` may address).
    """

    name = "a2a/prompts"

    def __init__(
        self,
        host: ServiceHost,
        *,
        workers: int,
        reader: Reader,
        exists: Callable[[str], Awaitable[bool]],
        elicit: bool = False,
        window: float = 120.0,
        pending: Callable[[str], Awaitable[PendingCalls | None]] | None = None,
    ) -> None:
        self.host = host
        self.identity = host.identity
        self.workers = max(1, workers)
        self.me = Identity(name=self.identity, instance=new_id())
        self._reader = reader
        self._exists = exists
        self.elicit = elicit
        self.window = window
        self._pending = pending
        self._always: dict[str, set[str]] = {}
        """Per conversation: tools the caller allowed with `always` (this worker's memory)."""
        self._runner: WorkRunner | None = None
        self._running: dict[str, RunControl] = {}
        """Turns running here, by request id."""
        self._conversations: set[str] = set()
        self._draining = False
        self._idle = anyio.Event()
        self._idle.set()
        self._drained = anyio.Event()
        host.add("task", serve_subject("task", self.identity), self._on_request)

    def banner(self) -> list[tuple[str, str]]:
        return [
            ("", "Answering prompts over a2a:"),
            ("Requests", serve_subject("task", self.identity)),
            ("Cancels", serve_subject("cancel", self.identity, "*")),
            ("Workers", str(self.workers)),
            (
                "",
                "Answering a prompt runs the agent loop and reaches every tool the top-level include and exclude "
                "selected.",
            ),
        ]

    async def serve(self, runner: WorkRunner, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Intake rides on the host's service; this waits for a drain, then for the turns in flight."""
        self._runner = runner
        task_status.started()
        await self._drained.wait()
        await self._idle.wait()

    def drain(self) -> None:
        self._draining = True
        self._drained.set()

    def stop(self) -> None:
        self.drain()
        for control in self._running.values():
            control.abort()

    async def _on_request(self, inbound: Inbound) -> None:
        try:
            request = wire.decode(inbound.data, expect=set(wire.REQUEST_KINDS))
        except MessageError as err:
            await inbound.refuse(err.code, f"the request is not a valid v1 message: {err}")
            return
        header = request.header
        if not _REQUEST_ID.fullmatch(header.request):
            await inbound.refuse(
                "400", "the request is not a valid v1 message: request must be 1 to 64 of [A-Za-z0-9_-]"
            )
            return
        replies = _ReplySet(inbound, request, self.me)
        if isinstance(request, wire.TurnRequest) and request.stream is False:
            replies.stream = False
        if self._draining:
            await replies.refuse("draining", f"agent {self.identity} is shutting down; this prompt was not started")
            return
        if header.request in self._running:
            await replies.refuse("duplicate_request", f'a run with request id "{header.request}" is already in flight')
            return
        if isinstance(request, wire.ReadRequest):
            await self._read(replies, request)
            return
        preset: Preset | None = None
        if isinstance(request, wire.AnswerRequest):
            problem = _answer_problem(request.answer)
            if problem:
                await inbound.refuse("400", f"the request is not a valid v1 message: {problem}")
                return
            if not self.elicit:
                await replies.refuse("unknown_call", "no call is waiting for an answer (this agent does not elicit)")
                return
            answer = request.answer
            choice = answer.get("choice") if answer.get("answer") == "choice" else None
            preset = Preset(tool_use_id=str(answer["tool_use_id"]), choice=str(choice) if choice else None)
            if answer.get("kind") != "approve":
                # Only an approval parks a run; an ask_human question left unanswered was declined, not kept.
                await replies.refuse(
                    "unknown_call", f"no {answer.get('kind')} question waits for call {preset.tool_use_id}"
                )
                return
        if len(self._running) >= self.workers:
            await replies.refuse(
                "capacity", f"agent {self.identity} is busy: every worker slot ({self.workers}) is taken; retry"
            )
            return
        await self._turn(replies, request, preset)

    async def _turn(self, replies: _ReplySet, request: wire.ServeMessage, preset: Preset | None) -> None:
        header = request.header
        token = getattr(request, "conversation_token", None)
        if token is None:
            token = secrets.token_urlsafe(16)
        session = session_for(self.identity, token)
        resume = isinstance(request, wire.ResumeRequest) or getattr(request, "conversation_token", None) is not None
        if session in self._conversations:
            await replies.refuse("conversation_busy", "a turn of this conversation is running; wait for its end")
            return
        control = RunControl()
        self._running[header.request] = control
        self._conversations.add(session)
        self._idle = anyio.Event()
        try:
            if resume and not await self._exists(session):
                await replies.refuse("unknown_conversation", "the token names no conversation; send without a token")
                return
            calls = CallLedger()
            if resume and self.elicit and not await self._seed(replies, session, calls, preset):
                return
            prompter = None
            if self.elicit:
                prompter = CallerPrompter(
                    replies.send,
                    me=self.me,
                    window=self.window,
                    calls=calls,
                    control=control,
                    always=self._always.setdefault(session, set()),
                    draining=lambda: self._draining,
                    preset=preset,
                )
            in_tool = [False]
            cancel_subject = serve_subject("cancel", self.identity, header.request)
            async with AsyncExitStack() as subscriptions:
                await subscriptions.enter_async_context(
                    self.host.subscription(cancel_subject, self._canceller(replies, control, in_tool, prompter))
                )
                if prompter is not None:
                    elicit_subject = serve_subject("elicit", self.identity, header.request)
                    await subscriptions.enter_async_context(self.host.subscription(elicit_subject, prompter.on_message))
                await replies.send(wire.ACK, accepted=True, conversation_token=token)
                prompt = getattr(request, "prompt", "")
                _log.info(
                    "Accepted a prompt channel=%s request=%s caller=%s session=%s prompt_bytes=%d",
                    self.name,
                    header.request,
                    header.sender.name,
                    session,
                    len(prompt.encode()),
                )

                async def sink(kind: EventKind, block: dict[str, Any]) -> None:
                    in_tool[0] = kind == "tool_call"
                    await replies.event(kind, block)

                work = Work(
                    channel=self.name,
                    session_id=session,
                    prompt=prompt,
                    caller=header.sender.name,
                    resume=resume,
                    force=bool(getattr(request, "force", False)),
                    sink=sink,
                    control=control,
                    prompter=prompter,
                    unasked="" if prompter is not None else _UNASKED,
                    calls=calls if prompter is not None else None,
                    max_tokens=_budget(request, "max_tokens"),
                    max_iterations=_budget(request, "max_iterations"),
                )
                assert self._runner is not None
                # The caller's name is its own claim: nothing on this channel verifies it (reference 3.14).
                _log.info(
                    "Running channel=%s work=%s caller=%s caller_verified=false resume=%s",
                    self.name,
                    header.request,
                    header.sender.name,
                    str(resume).lower(),
                )
                outcome = await self._runner.run(work)
                if control.aborted and outcome.reason != "suspended" and not self._draining:
                    why = ""
                    if prompter is not None and prompter.parked:
                        why = (
                            f"nobody answered the approval of call {prompter.parked} within {self.window:g}s; the call "
                            "did not run: answer it with request.answer, or send another prompt to be asked again"
                        )
                    outcome = WorkOutcome(reason="suspended", error=why, usage=outcome.usage)
                code, reason = await _terminal(replies, outcome, stopped=self._draining and control.aborted)
                _log.info(
                    "Ending a run channel=%s work=%s caller=%s code=%s reason=%s",
                    self.name,
                    header.request,
                    header.sender.name,
                    code,
                    reason,
                )
        finally:
            del self._running[header.request]
            self._conversations.discard(session)
            if not self._running:
                self._idle.set()

    async def _seed(self, replies: _ReplySet, session: str, calls: CallLedger, preset: Preset | None) -> bool:
        """Name a resumed turn's pending calls for its questions; check what a `request.answer` addresses."""
        found = await self._pending(session) if self._pending is not None else None
        pending: list[tuple[str, str]] = found[0] if found else []
        answered: set[str] = found[1] if found else set()
        for tool_use_id, name in pending:
            calls.seen(tool_use_id, name)
        if preset is None or any(tool_use_id == preset.tool_use_id for tool_use_id, _name in pending):
            return True
        if preset.tool_use_id in answered:
            await replies.refuse("already_answered", f"call {preset.tool_use_id} already has an answer")
        else:
            await replies.refuse("unknown_call", f"no call {preset.tool_use_id} is waiting for an answer")
        return False

    def _canceller(
        self, replies: _ReplySet, control: RunControl, in_tool: list[bool], prompter: CallerPrompter | None
    ) -> Callable[[Inbound], Awaitable[None]]:
        async def on_cancel(inbound: Inbound) -> None:
            try:
                cancel = wire.decode(inbound.data, expect={wire.CANCEL})
            except MessageError as err:
                await inbound.refuse(err.code, f"the request is not a valid v1 message: {err}")
                return
            control.request_suspend()
            if in_tool[0] or (prompter is not None and prompter.asking):
                control.abort()  # the command in flight is stopped with its process group; a question is closed
            header = reply_header(wire.ACK, cancel.header, sender=self.me, sequence=1)
            await inbound.send(wire.encode(wire.Ack(header=header, accepted=True)))
            _log.info("Canceled a prompt request=%s by=%s", replies.request.request, cancel.header.sender.name)

        return on_cancel

    async def _read(self, replies: _ReplySet, request: wire.ReadRequest) -> None:
        session = session_for(self.identity, request.conversation_token)
        found = await self._reader(session, min(request.replay, 200))
        if found is None:
            await replies.refuse("unknown_conversation", "the token names no conversation; send without a token")
            return
        blocks, truncated, usage = found
        await replies.send(wire.ACK, accepted=True, conversation_token=request.conversation_token)
        await replies.send(wire.EVENT_PREFIX + "status", block={"phase": "replay_start"})
        for kind, block in blocks:
            await replies.send(wire.EVENT_PREFIX + kind, block=block)
        end = {"phase": "replay_end", "count": len(blocks), "truncated": truncated, "usage": usage}
        await replies.send(wire.EVENT_PREFIX + "status", block=end)
        await replies.send(wire.RESULT, stop_reason="end_turn", usage=usage)


_UNASKED: Final = (
    "this agent answers prompts over NATS and does not put approvals to its callers "
    "(expose.agent.a2a.prompts.elicit is off), so no one could approve this command"
)
_ANSWER_FIELDS: Final = {"approve": "choice", "confirm": "confirmed", "select": "value", "input": "value"}
_ANSWER_TYPES: Final = {"choice": str, "confirmed": bool, "value": str}


def _answer_problem(answer: dict[str, Any]) -> str:
    """Why a `request.answer`'s `answer` does not fit its kind (a 400), or ""."""
    kind, which, tool_use_id = answer.get("kind"), answer.get("answer"), answer.get("tool_use_id")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        return "at '/answer/tool_use_id': the call the question named is required"
    if not isinstance(kind, str) or kind not in _ANSWER_FIELDS:
        return f"at '/answer/kind': must be one of {', '.join(_ANSWER_FIELDS)}"
    if which == "no_operator":
        return ""
    field = _ANSWER_FIELDS[kind]
    if which != field:
        return f"at '/answer/answer': a {kind} answer is in {field} (or no_operator)"
    value = answer.get(field)
    if not isinstance(value, _ANSWER_TYPES[field]):
        return f"at '/answer/{field}': missing or of the wrong type"
    if which == "choice" and value not in ("no", "once", "always"):
        return "at '/answer/choice': must be no, once or always"
    return ""


def _budget(request: wire.ServeMessage, key: str) -> int | None:
    """A caller's budget value (only ever lowers the worker's; the runner takes the smaller)."""
    budget: dict[str, object] = getattr(request, "budget", None) or {}
    value = budget.get(key)
    return value if isinstance(value, int) and value > 0 else None


async def _terminal(replies: _ReplySet, outcome: WorkOutcome, *, stopped: bool) -> tuple[str, str]:
    """Send the turn's terminal message; (code, stop_reason) for the log (`code` empty on a result)."""
    usage = outcome.usage or None
    if stopped:
        code, reason, text = "failed", "canceled", "the worker stopped"
    elif outcome.reason == "completed":
        await replies.send(wire.RESULT, stop_reason="end_turn", text=outcome.answer, usage=usage)
        return "", "end_turn"
    elif outcome.reason == "suspended":
        text = outcome.error or "stopped at a resumable point; send another prompt with the token to go on"
        code, reason = "suspended", "suspended"
    elif outcome.reason == "budget_exhausted":
        code, reason, text = "budget_exhausted", "budget_exhausted", outcome.error
    elif outcome.reason == "max_iterations":
        code, reason, text = "failed", "max_iterations", outcome.error
    elif outcome.reason == "crashed":
        code, reason, text, usage = "crashed", "error", "the worker hit a bug; see its log", None
    elif outcome.reason == "refused":
        code, reason, text, usage = outcome.code, "error", outcome.error, None
    else:  # `failed`, or the provider's own code (`provider_busy`, `provider_refused`, `context_exceeded`)
        code, reason, text = outcome.code or "failed", "error", outcome.error
    await replies.send(wire.ERROR, error=text, code=code, stop_reason=reason, usage=usage)
    return code, reason
