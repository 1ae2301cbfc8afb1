"""The calling side of the prompts channel: send a turn, read its reply set, cancel it.

`send_turn` mints the request id before sending (so the caller can cancel early), sends one of the four
request kinds to `choria.fisk-ai.task.<agent>`, and hands every message of the reply set to `on_message`
in order until the terminal `result` or `error`, which it returns. Each gap between messages may last
`request_timeout` seconds. A gap in `sequence` numbers means a lost event; events are advisory and the
terminal message holds the answer.

Questions (an agent with `prompts.elicit`): each `elicit.request.<kind>` is handed to `on_question`, whose
returned fields (`{"choice": "once"}`, `{"confirmed": False}`, `{"index": 0}`, `{"value": ""}`, or
`None` for `no_operator`) are sent as the answer on `choria.fisk-ai.elicit.<agent>.<request>`; while it
decides, `elicit.waiting` goes out every `wait_ms / 3` so the question stays open.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import anyio

from .errors import AgentUnavailableError, MessageError, RemoteAgentError
from .protocol import Identity, new_id, request_header, serve as wire
from .transport import Route, Streams

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "QuestionHandler",
    "answer_question",
    "cancel_turn",
    "send_turn",
    "send_waiting",
]

QuestionHandler = Callable[[wire.Question], Awaitable["Mapping[str, Any] | None"]]
"""Decides a question: the answer's fields, or None for `no_operator` (nobody can answer)."""

DEFAULT_REQUEST_TIMEOUT: Final = 120.0


def _header(protocol: str, *, sender: str, agent: str, request: str) -> Any:
    header = request_header(protocol, sender=Identity(name=sender), recipient=agent)
    return header.model_copy(update={"request": request, "conversation": request})


async def send_turn(
    streams: Streams,
    agent: str,
    *,
    sender: str,
    prompt: str | None = None,
    token: str | None = None,
    read: int | None = None,
    request: str | None = None,
    stream: bool = True,
    on_message: Callable[[wire.ServeMessage], None] | None = None,
    on_question: QuestionHandler | None = None,
    answer: Mapping[str, Any] | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> wire.ServeMessage:
    """One request of the prompts protocol and its reply set; returns the terminal message.

    `prompt` sends `request.prompt` (joining `token`'s conversation when given); `read` sends
    `request.read` for `token`; `answer` sends `request.answer` for `token` (an answer to a question
    asked before the run ended); none of them sends `request.resume` for `token`. Without
    `on_question`, a question is answered `no_operator`.

    Raises:
        AgentUnavailableError: nobody serves the agent, or it went silent for `request_timeout`.
        RemoteAgentError: the request was refused before any ack (a 400), or a reply was invalid.
    """
    request = request or new_id()
    if read is not None:
        message: wire.ServeMessage = wire.ReadRequest(
            header=_header(wire.READ, sender=sender, agent=agent, request=request),
            conversation_token=token or "",
            replay=read,
        )
    elif answer is not None:
        message = wire.AnswerRequest(
            header=_header(wire.ANSWER, sender=sender, agent=agent, request=request),
            conversation_token=token or "",
            answer=dict(answer),
            stream=None if stream else False,
        )
    elif prompt is not None:
        message = wire.PromptRequest(
            header=_header(wire.PROMPT, sender=sender, agent=agent, request=request),
            prompt=prompt,
            conversation_token=token,
            stream=None if stream else False,
        )
    else:
        message = wire.ResumeRequest(
            header=_header(wire.RESUME, sender=sender, agent=agent, request=request),
            conversation_token=token or "",
            stream=None if stream else False,
        )
    async with streams.stream(Route(agent=agent, kind="task"), wire.encode(message)) as replies:
        while True:
            reply = await replies.receive(request_timeout)
            if reply.error_code is not None:
                raise RemoteAgentError(
                    f'agent "{agent}" refused the request: {reply.error_text or "no reason given"} '
                    f"(code {reply.error_code})",
                    code=reply.error_code,
                )
            try:
                received = wire.decode(reply.payload)
            except MessageError as err:
                raise RemoteAgentError(f'agent "{agent}" sent an invalid reply: {err}') from None
            if received.header.request != request:
                continue  # not ours (a stale message on a reused inbox cannot happen, but costs nothing)
            if on_message is not None:
                on_message(received)
            if isinstance(received, wire.Question):
                await _decide(streams, agent, request, received, sender=sender, on_question=on_question)
            if isinstance(received, wire.ResultReply | wire.ErrorReply):
                return received


async def cancel_turn(streams: Streams, agent: str, request: str, *, sender: str, reason: str = "") -> bool:
    """Ask the worker running `request` to stop it; False when no instance is running it."""
    header = _header(wire.CANCEL, sender=sender, agent=agent, request=request)
    message = wire.CancelRequest(header=header, reason=reason or None)
    try:
        async with streams.stream(Route(agent=agent, kind="cancel", key=request), wire.encode(message)) as replies:
            reply = await replies.receive(5.0)
    except AgentUnavailableError:
        return False
    try:
        ack = wire.decode(reply.payload)
    except MessageError:
        return False
    return isinstance(ack, wire.Ack) and ack.accepted


async def _decide(
    streams: Streams, agent: str, request: str, question: wire.Question, *, sender: str, on_question: Any
) -> None:
    """Ask `on_question` (keeping the question open with `waiting`), then send its answer."""
    if on_question is None:
        await answer_question(streams, agent, request, question, None, sender=sender)
        return
    decided: list[Mapping[str, Any] | None] = []
    async with anyio.create_task_group() as tasks:
        if question.wait_ms:
            tasks.start_soon(_keep_open, streams, agent, request, question, sender)
        decided.append(await on_question(question))
        tasks.cancel_scope.cancel()
    await answer_question(streams, agent, request, question, decided[0], sender=sender)


async def _keep_open(streams: Streams, agent: str, request: str, question: wire.Question, sender: str) -> None:
    interval = (question.wait_ms or 0) / 3000
    while True:
        await anyio.sleep(interval)
        if not await send_waiting(streams, agent, request, question, sender=sender):
            return  # the question is gone (answered, expired, or the run ended)


async def send_waiting(streams: Streams, agent: str, request: str, question: wire.Question, *, sender: str) -> bool:
    """Hold `question` open for another window; False when the worker no longer has it (404)."""
    header = _header(wire.WAITING, sender=sender, agent=agent, request=request)
    return await _send_elicit(streams, agent, request, wire.Waiting(header=header, question_id=question.question_id))


async def answer_question(
    streams: Streams,
    agent: str,
    request: str,
    question: wire.Question,
    fields: Mapping[str, Any] | None,
    *,
    sender: str,
) -> bool:
    """Send the answer to `question` (`fields` None: `no_operator`); False when the worker refused it."""
    kind = question.kind if fields is not None else "no_operator"
    header = _header(wire.REPLY_PREFIX + kind, sender=sender, agent=agent, request=request)
    reply = wire.QuestionReply.model_validate({"header": header, "question_id": question.question_id, **(fields or {})})
    return await _send_elicit(streams, agent, request, reply)


async def _send_elicit(streams: Streams, agent: str, request: str, message: wire.ServeMessage) -> bool:
    try:
        async with streams.stream(Route(agent=agent, kind="elicit", key=request), wire.encode(message)) as replies:
            reply = await replies.receive(5.0)
    except AgentUnavailableError:
        return False
    if reply.error_code is not None:
        return False
    try:
        return isinstance(wire.decode(reply.payload), wire.Ack)
    except MessageError:
        return False
