"""The Transport seam: what the a2a client and server need of whatever carries their bytes.

A transport moves opaque message bytes between agents. It never reads them: meaning comes from the
protocol id inside each message (see `fiskai_a2a.protocol`). A `Route` says where bytes go (which agent,
which path) and is a routing and permission seam only; the NATS binding turns it into a subject.

Implementations: `fiskai_a2a.nats_transport.NatsTransport`, `fiskai_a2a.testing.FakeTransport`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol

from anyio.abc import TaskStatus

__all__ = [
    "EventSink",
    "Handler",
    "OnEvent",
    "Reply",
    "ReplyReader",
    "Route",
    "RouteKind",
    "Streams",
    "Transport",
    "cancel_digest",
]

RouteKind = Literal["discovery", "tool", "control", "task", "cancel", "elicit"]
"""`discovery` and `tool` are the original's two paths; `control` (fiskai) carries Cancel to every instance;
`task` (0.0.5) carries prompts to an agent's prompts channel, `elicit` the answers to its questions."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """Where a message goes: an agent identity and a path. Never used to infer what a message means."""

    agent: str
    kind: RouteKind
    key: str = ""
    """A last subject token for per-request routes (the request id a `cancel` addresses)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """A server's answer: message bytes, plus an error code and text when the request itself was refused.

    `error_code` mirrors NATS micro error replies (`400` for a message that cannot be used, `500` for a
    failure on the serving side) so callers of either implementation see the refusal; the bytes are then a
    v1 `error` message saying the same.
    """

    payload: bytes
    error_code: str | None = None
    error_text: str | None = None


EventSink = Callable[[bytes], Awaitable[None]]
"""Sends one event message back to the caller of the request being handled (a no-op when none asked)."""

OnEvent = Callable[[bytes], None]
"""Receives one event message for a call in flight; called on the caller's event loop, must not block."""


def cancel_digest(key: str) -> str:
    """What a tool request commits to so that only the holder of `key` can cancel it ("" for no key).

    A caller sends a fresh random key's digest with its call and the key itself with its Cancel. Whoever
    can read the request (a declared sender name, the request id, even the reply subject) still cannot
    produce the key, so a Cancel is bound to the requester without trusting anything it says about itself.
    """
    return hashlib.sha256(key.encode()).hexdigest() if key else ""


class Handler(Protocol):
    """The serving side: answers one inbound message.

    Called by the transport once per inbound message, each in its own task, concurrently; the handler
    bounds its own concurrency. Returning None sends no reply (a Cancel for a call another instance holds,
    or one that does not prove it comes from the call's requester). Must not raise: every failure becomes
    a reply.

    `digest` binds a Cancel to the call it stops: on a tool request, the `cancel_digest` its requester
    committed to; on a control message, the `cancel_digest` of the key its sender presented; "" when the
    message carried none. Equal non-empty digests mean the Cancel comes from whoever sent the request.
    """

    async def __call__(self, route: Route, payload: bytes, events: EventSink, digest: str = "") -> Reply | None: ...


class Transport(Protocol):
    """Moves message bytes between agents.

    Methods are called from one event loop, concurrently. Errors: `AgentUnavailableError` when nothing
    answered in time (no responders, timeout, lost connection); nothing else is raised for a peer's
    behavior. Closing is the owner's business (the NATS transport is an async context manager).
    """

    async def round_trip(
        self,
        route: Route,
        payload: bytes,
        *,
        # A transport deadline, reported as AgentUnavailableError naming the subject; a cancel scope cannot say that.
        timeout: float,  # noqa: ASYNC109
        on_event: OnEvent | None = None,
        cancel_key: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Send `payload` and wait up to `timeout` seconds for the reply.

        `headers` go with the request beside the message (the caller's trace context, `traceparent`); a
        transport without headers may drop them, as they never change what the request means.

        With `on_event`, the server may stream event messages for this request before replying; each is
        handed to `on_event` as it arrives. They travel only to this request's own reply channel.

        `cancel_key` binds a Cancel to a call: a tool request carries its `cancel_digest`, the control
        message that cancels it carries the key itself (see `Handler`).

        Raises:
            AgentUnavailableError: no reply in time, no responders, or the connection is gone.
        """
        ...

    async def serve(
        self,
        *,
        identity: str,
        version: str,
        handler: Handler,
        task_status: TaskStatus[None],
    ) -> None:
        """Answer the `discovery`, `tool` and `control` routes of `identity` until cancelled.

        Instances serving one identity share the discovery and tool work (a queue group); every instance
        sees each control message. Calls `task_status.started()` once the routes are listening.
        """
        ...


class ReplyReader(Protocol):
    """The messages of one request's reply set (0.0.5 endpoints answer with several), one at a time."""

    async def receive(self, silence: float) -> Reply:
        """The next message, within `silence` seconds.

        Raises:
            AgentUnavailableError: nothing in time, no responders, or the connection is gone.
        """
        ...


class Streams(Protocol):
    """Requests whose reply is a set of messages (the 0.0.5 tool endpoint and prompts)."""

    def stream(
        self, route: Route, payload: bytes, *, headers: Mapping[str, str] | None = None
    ) -> AbstractAsyncContextManager[ReplyReader]:
        """Send `payload` on the route; read its replies inside the block."""
        ...
