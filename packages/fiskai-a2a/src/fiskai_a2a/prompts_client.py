"""The calling side of the prompts channel: send a turn, read its reply set, cancel it.

`send_turn` mints the request id before sending (so the caller can cancel early), sends one of the four
request kinds to `choria.fisk-ai.task.<agent>`, and hands every message of the reply set to `on_message`
in order until the terminal `result` or `error`, which it returns. Each gap between messages may last
`request_timeout` seconds. A gap in `sequence` numbers means a lost event; events are advisory and the
terminal message holds the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .errors import AgentUnavailableError, MessageError, RemoteAgentError
from .protocol import Identity, new_id, request_header, serve as wire
from .transport import Route, Streams

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "cancel_turn", "send_turn"]

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
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> wire.ServeMessage:
    """One request of the prompts protocol and its reply set; returns the terminal message.

    `prompt` sends `request.prompt` (joining `token`'s conversation when given); `read` sends
    `request.read` for `token`; neither sends `request.resume` for `token`.

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
                answer = wire.decode(reply.payload)
            except MessageError as err:
                raise RemoteAgentError(f'agent "{agent}" sent an invalid reply: {err}') from None
            if answer.header.request != request:
                continue  # not ours (a stale message on a reused inbox cannot happen, but costs nothing)
            if on_message is not None:
                on_message(answer)
            if isinstance(answer, wire.ResultReply | wire.ErrorReply):
                return answer


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
