"""The calling side: discover an agent, call one of its tools, cancel a call.

Requests are stamped and schema-checked before they leave; replies are size-capped, schema-checked and
must be the protocol asked for. A call that asked for progress is watched: once the server has sent an
event, silence longer than `stall_timeout` means the server is gone, and the call fails at once instead
of waiting out its whole timeout. Cancelling a call (its task is cancelled) sends a Cancel to the server,
which stops the command. Each call carries the digest of a fresh random key and only a Cancel holding
that key stops it, so nobody else can cancel this client's calls.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Final, cast

import anyio

from .errors import A2AError, AgentUnavailableError, MessageError, RemoteAgentError
from .protocol import (
    ACK,
    DISCOVERY_REPLY,
    ERROR,
    EVENT,
    TOOL_REPLY,
    Ack,
    Cancel,
    DiscoveryReply,
    DiscoveryRequest,
    ErrorMessage,
    Event,
    Header,
    Identity,
    Message,
    ToolReply,
    ToolRequest,
    decode,
    encode,
    request_header,
    serve as serve_wire,
)
from .transport import Reply, Route, Streams, Transport, cancel_digest

__all__ = ["CANCEL_DIGEST_HEADER", "DEFAULT_REQUEST_TIMEOUT", "DEFAULT_TIMEOUT", "A2AClient"]

CANCEL_DIGEST_HEADER: Final = "Fiskai-Cancel-Digest"
"""The header an older fiskai server reads a call's cancel digest from (same as `nats_transport`'s)."""
DEFAULT_REQUEST_TIMEOUT: Final = 120.0
"""Seconds of silence accepted from a 0.0.5 peer between the messages of one call."""

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds a request waits for its reply when the caller sets no budget (the original's default)."""


class A2AClient:
    """Talks to remote agents through a `Transport` as `identity`.

    Args:
        transport: Carries the bytes.
        identity: This agent's name, stamped as every request's sender.
        timeout: Seconds each request may wait for its reply.
        stall_timeout: Seconds of silence, after a first progress event, that mean the server is gone.
        cancel_timeout: Seconds a Cancel waits for its Ack (no Ack: the call was no longer in flight).
        streams: Reply sets (NATS: `nats_service.NatsStreams`); without it, the older protocol only.
        request_timeout: Seconds of silence accepted from a 0.0.5 peer once it acked
            (`expose.agent.a2a.request_timeout`).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        identity: str,
        timeout: float = DEFAULT_TIMEOUT,
        stall_timeout: float = 10.0,
        cancel_timeout: float = 2.0,
        streams: Streams | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        self.transport = transport
        self.streams = streams
        """With it, tool calls speak the 0.0.5 reply set as well as the older single reply."""
        self.request_timeout = request_timeout
        self.me = Identity(name=identity)
        self.timeout = timeout
        self.stall_timeout = stall_timeout
        self.cancel_timeout = cancel_timeout
        self._cancel_keys: dict[str, str] = {}
        """The cancel key of each call in flight, by request id."""

    async def discover(self, agent: str) -> DiscoveryReply:
        """The agent card of `agent`.

        Raises:
            AgentUnavailableError: nothing answered.
            RemoteAgentError: the agent answered with an error or an invalid reply.
        """
        request = DiscoveryRequest(header=request_header(DiscoveryRequest.PROTOCOL, sender=self.me, recipient=agent))
        reply = await self.transport.round_trip(
            Route(agent=agent, kind="discovery"), encode(request), timeout=self.timeout
        )
        return cast("DiscoveryReply", _expect(reply, DISCOVERY_REPLY, agent, request.header.request))

    async def call_tool(
        self,
        agent: str,
        tool_name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        on_progress: Callable[[Event], None] | None = None,
        trace: Mapping[str, str] | None = None,
    ) -> ToolReply:
        """Call `tool_name` on `agent` and return its reply (a failed command is a reply, not an error).

        Raises:
            AgentUnavailableError: nothing answered, or the server went silent mid-call.
            RemoteAgentError: the agent refused the request or sent an invalid reply.
        """
        header = request_header(ToolRequest.PROTOCOL, sender=self.me, recipient=agent)
        # The arguments go out as the model wrote them (numbers keep their text).
        payload = encode(ToolRequest(header=header, name=tool_name), exact_input=dict(arguments) if arguments else None)
        self._cancel_keys[header.request] = cancel_key = secrets.token_urlsafe(24)
        try:
            if self.streams is not None:
                return await self._call_streamed(self.streams, agent, tool_name, header, payload, cancel_key, trace)
            return await self._call(agent, tool_name, header, payload, cancel_key, on_progress, trace)
        finally:
            del self._cancel_keys[header.request]

    async def _call_streamed(
        self,
        streams: Streams,
        agent: str,
        tool_name: str,
        header: Header,
        payload: bytes,
        cancel_key: str,
        trace: Mapping[str, str] | None = None,
    ) -> ToolReply:
        """Both protocols: a 0.0.5 server's ack, keepalives and reply, or an older server's single reply.

        The first message may take `timeout` (an older server sends nothing until the tool is done); after
        an ack, every gap may take `request_timeout`. The caller's tool timeout bounds the whole call.
        """
        route = Route(agent=agent, kind="tool")
        headers = {**(trace or {}), CANCEL_DIGEST_HEADER: cancel_digest(cancel_key)}
        try:
            async with streams.stream(route, payload, headers=headers) as replies:
                silence = self.timeout
                while True:
                    reply = await replies.receive(silence)
                    final = _final_tool_reply(reply, agent, header.request)
                    if final is not None:
                        return final
                    silence = self.request_timeout
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self.cancel(agent, header, reason="the caller stopped waiting", key=cancel_key)
            raise

    async def _call(
        self,
        agent: str,
        tool_name: str,
        header: Header,
        payload: bytes,
        cancel_key: str,
        on_progress: Callable[[Event], None] | None,
        trace: Mapping[str, str] | None = None,
    ) -> ToolReply:
        heard = anyio.Event()

        def on_event(data: bytes) -> None:
            # Any event on this call's own reply channel shows the server is alive; only a caller that reads
            # the events pays for validating them.
            heard.set()
            if on_progress is None:
                return
            try:
                event = decode(data, expect={EVENT})
            except MessageError:
                return
            if event.header.request == header.request:
                on_progress(cast("Event", event))

        reply: Reply | None = None
        failure: A2AError | None = None
        try:
            async with anyio.create_task_group() as tasks:

                async def watch() -> None:
                    nonlocal heard
                    while True:
                        await heard.wait()
                        heard = anyio.Event()
                        with anyio.move_on_after(self.stall_timeout):
                            await heard.wait()
                            continue
                        tasks.cancel_scope.cancel()
                        return

                tasks.start_soon(watch)
                try:
                    reply = await self.transport.round_trip(
                        Route(agent=agent, kind="tool"),
                        payload,
                        timeout=self.timeout,
                        on_event=on_event,
                        cancel_key=cancel_key,
                        headers=trace,
                    )
                except A2AError as err:
                    # Raised after the group ends, so callers see it as itself, not in an exception group.
                    failure = err
                tasks.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self.cancel(agent, header, reason="the caller stopped waiting", key=cancel_key)
            raise
        if failure is not None:
            raise failure
        if reply is None:
            with anyio.CancelScope(shield=True):
                await self.cancel(agent, header, reason="no progress from the server", key=cancel_key)
            raise AgentUnavailableError(
                f'remote agent "{agent}" stopped answering: no progress on the call to "{tool_name}" for '
                f"{self.stall_timeout:g}s (the server died or lost its connection)"
            )
        return cast("ToolReply", _expect(reply, TOOL_REPLY, agent, header.request))

    async def cancel(self, agent: str, request: Header, *, reason: str = "", key: str | None = None) -> bool:
        """Ask `agent` to stop the call `request` started; True when a server stopped it.

        Best effort: a call already answered, a server that is gone, or a Cancel without the call's key
        gives False. `key` is the call's cancel key; by default the one this client sent the call with
        (calls made through `call_tool` and still in flight).
        """
        key = self._cancel_keys.get(request.request, "") if key is None else key
        if not key:
            return False  # no server would accept it
        header = request_header(Cancel.PROTOCOL, sender=self.me, recipient=agent, conversation=request.conversation)
        header = header.model_copy(update={"request": request.request})
        payload = encode(Cancel(header=header, reason=reason or None))
        try:
            reply = await self.transport.round_trip(
                Route(agent=agent, kind="control"), payload, timeout=self.cancel_timeout, cancel_key=key
            )
            ack = _expect(reply, ACK, agent, request.request)
        except A2AError:
            return False
        return isinstance(ack, Ack) and ack.accepted


def _final_tool_reply(reply: Reply, agent: str, request_id: str) -> ToolReply | None:
    """The call's answer when `reply` ends it, None for an ack or a keepalive (any message of this request).

    Raises:
        RemoteAgentError: an error, an invalid message, or one for another request.
    """
    if reply.error_code is not None:
        _expect(reply, TOOL_REPLY, agent, request_id)  # raises: a refusal before any ack
    try:
        message = serve_wire.decode(reply.payload)
    except MessageError as err:
        raise RemoteAgentError(f'remote agent "{agent}" sent an invalid reply: {err}') from None
    if message.header.request != request_id:
        raise RemoteAgentError(
            f'remote agent "{agent}" sent a reply for request "{message.header.request}" to request "{request_id}"'
        )
    if isinstance(message, serve_wire.ErrorReply):
        code = f" (code {message.code})" if message.code else ""
        raise RemoteAgentError(f'remote agent "{agent}" refused the request: {message.error}{code}', code=message.code)
    if not isinstance(message, serve_wire.ToolReply):
        return None
    output = message.output
    if message.code and message.is_error:
        # The model sees why (`capacity`: every slot busy, a retry may reach a free instance).
        output = f"{output or ''} (code {message.code})".strip()
    return ToolReply(header=message.header, is_error=message.is_error, output=output, exec=message.exec)


def _expect(reply: Reply, protocol: str, agent: str, request_id: str) -> Message:
    """The reply to request `request_id` as `protocol`, or the error it carries.

    Raises:
        RemoteAgentError: an error message, a bare micro error, an invalid reply, or a reply that
            correlates to another request.
    """
    if reply.error_code is not None and not reply.payload:
        raise RemoteAgentError(
            f'remote agent "{agent}" refused the request: {reply.error_text or "no reason given"} '
            f"(code {reply.error_code})",
            code=reply.error_code,
        )
    try:
        message = decode(reply.payload, expect={protocol, ERROR})
    except MessageError as err:
        raise RemoteAgentError(f'remote agent "{agent}" sent an invalid reply: {err}') from None
    if isinstance(message, ErrorMessage):
        code = message.code or reply.error_code
        raise RemoteAgentError(
            f'remote agent "{agent}" refused the request: {message.error}' + (f" (code {code})" if code else ""),
            code=code,
        )
    if message.header.request != request_id:
        raise RemoteAgentError(
            f'remote agent "{agent}" sent a reply for request "{message.header.request}" to request "{request_id}"'
        )
    return message
