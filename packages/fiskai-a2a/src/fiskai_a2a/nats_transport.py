"""The NATS binding of the a2a transport: the only module that imports nats-py.

Subjects (the original's, so a Go fisk-ai agent and a fiskai agent reach each other):
`choria.fisk-ai.discovery.<identity>` and `choria.fisk-ai.tool.<identity>`, served by a NATS micro
service named after the identity (version `0.0.0`, queue group = identity, so instances sharing an
identity share the work). fiskai adds `choria.fisk-ai.control.<identity>`, a plain subscription every
instance hears, for Cancel. Headers and subjects route and bind; they never carry meaning:
* A caller that wants progress names its request's own reply subject in the `Fiskai-Events` header; the
  server publishes Event messages (marked with a `Fiskai-Event` header) to that reply subject and nowhere
  else, so a request cannot aim the server's messages at another client's inbox.
* A tool request carries the digest of a random key in `Fiskai-Cancel-Digest`; the Cancel for it carries
  the key in `Fiskai-Cancel-Key`, and the server stops the call only when the two match.
A Go fisk-ai client sends none of these headers: it gets its reply, no events, and sends no Cancel.

Also here, because it connects: `connect` (failing fast with a line naming the server and the fix).
"""

from __future__ import annotations

try:
    import nats.errors
    from nats.aio.client import Client as NatsClient
    from nats.aio.msg import Msg
    from nats.micro import add_service  # pyright: ignore[reportUnknownVariableType]
    from nats.micro.request import Request as MicroRequest
    from nats.micro.service import EndpointConfig, Service
except ImportError as import_error:  # pragma: no cover - nats-py is a dependency of fiskai-a2a
    raise ImportError("The a2a NATS binding needs nats-py: install `fiskai-a2a`.") from import_error

import itertools
import logging
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
from anyio.abc import TaskStatus

from fiskai_core.telemetry import joined

from ._nats_options import connect_options, failure_reason
from .errors import AgentUnavailableError
from .natscontext import NatsContext
from .transport import EventSink, Handler, OnEvent, Reply, Route, cancel_digest

if TYPE_CHECKING:
    pass

__all__ = [
    "CANCEL_DIGEST_HEADER",
    "CANCEL_KEY_HEADER",
    "EVENTS_HEADER",
    "EVENT_HEADER",
    "SERVICE_DESCRIPTION",
    "SERVICE_VERSION",
    "SUBJECT_PREFIX",
    "NatsTransport",
    "connect",
    "flush_in_order",
    "subject_for",
]

SUBJECT_PREFIX: Final = "choria.fisk-ai"
SERVICE_VERSION: Final = "0.0.0"
SERVICE_DESCRIPTION: Final = "fisk-ai a2a tool server"
EVENTS_HEADER: Final = "Fiskai-Events"
"""NATS header of a tool request asking for Event messages; its value must be the request's own reply subject."""
EVENT_HEADER: Final = "Fiskai-Event"
"""NATS header marking an Event message on a reply subject, apart from the reply that ends the call."""
CANCEL_DIGEST_HEADER: Final = "Fiskai-Cancel-Digest"
"""NATS header of a tool request: the `cancel_digest` of the key that may cancel it."""
CANCEL_KEY_HEADER: Final = "Fiskai-Cancel-Key"
"""NATS header of a Cancel: the key whose digest the call's request carried."""
_DIGEST = re.compile(r"[0-9a-f]{64}")
_MAX_KEY_CHARS: Final = 128
_NO_RESPONDERS: Final = "503"
_CONNECT_TIMEOUT: Final = 5.0
_log = logging.getLogger("fiskai_a2a")


async def flush_in_order(client: NatsClient) -> None:
    """Flush so that the server has handled every command queued before this call, a SUB just made included.

    nats-py 2.16 writes a flush's PING straight to the socket while a new SUB may still wait in its queue
    for the flusher task, so the first PONG can come back before the server has the SUB: a peer told "ready"
    then publishes to no one (453 of 3,000 rounds on this machine). Waiting for that PONG lets the flusher
    write the queue, so the second PING goes out behind it.
    """
    await client.flush()
    await client.flush()


def subject_for(route: Route) -> str:
    """The subject of a route: `choria.fisk-ai.<kind>.<identity>[.<key>]`."""
    subject = f"{SUBJECT_PREFIX}.{route.kind}.{route.agent}"
    return f"{subject}.{route.key}" if route.key else subject


class NatsTransport:
    """A `Transport` over one NATS connection (borrowed; `connect` owns and closes it)."""

    def __init__(self, client: NatsClient, *, context: NatsContext) -> None:
        self._nc = client
        self.context = context
        """Where this transport is connected, for messages."""
        self._errors: list[str] = []
        """What NATS reported asynchronously on this connection (`connect` reports it through `note_error`)."""
        self._error_seen = anyio.Event()
        # One wildcard subscription carries the replies and events of every call that wants events; each call
        # gets its own reply subject under it.
        self._reply_prefix = ""
        self._pending: dict[str, _Pending] = {}
        self._reply_lock = anyio.Lock()
        self._reply_tokens = itertools.count()

    @property
    def client(self) -> NatsClient:
        """The NATS connection itself, lent to the other NATS-backed parts (journal, KV memory)."""
        return self._nc

    async def round_trip(
        self,
        route: Route,
        payload: bytes,
        *,
        # A transport deadline: running out of it is AgentUnavailableError naming the subject.
        timeout: float,  # noqa: ASYNC109
        on_event: OnEvent | None = None,
        cancel_key: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Request/reply on the route's subject; see `Transport.round_trip`."""
        subject = subject_for(route)
        headers = dict(headers or {})
        if cancel_key:
            if route.kind == "control":
                headers[CANCEL_KEY_HEADER] = cancel_key
            else:
                headers[CANCEL_DIGEST_HEADER] = cancel_digest(cancel_key)
        try:
            if on_event is None:
                msg = await self._nc.request(subject, payload, timeout=timeout, headers=headers or None)
            else:
                msg = await self._request_with_events(subject, payload, headers, timeout, on_event)
        except nats.errors.NoRespondersError:
            raise AgentUnavailableError(
                f'remote agent unavailable: no reply on "{subject}": no agent "{route.agent}" is serving on '
                f"{self.context.describe()}; start it with `fiskai -c agent.yaml a2a`"
            ) from None
        except (nats.errors.TimeoutError, TimeoutError):
            raise AgentUnavailableError(
                f'remote agent unavailable: no reply on "{subject}" within {timeout:g}s'
            ) from None
        except (nats.errors.ConnectionClosedError, nats.errors.ConnectionDrainingError, OSError) as err:
            raise AgentUnavailableError(
                f'remote agent unavailable: no reply on "{subject}": connection to {self.context.describe()} '
                f"lost ({err.__class__.__name__})"
            ) from None
        code = (msg.headers or {}).get("Nats-Service-Error-Code")
        text = (msg.headers or {}).get("Nats-Service-Error")
        return Reply(payload=msg.data, error_code=code, error_text=text)

    async def _request_with_events(
        self,
        subject: str,
        payload: bytes,
        headers: dict[str, str],
        timeout: float,  # noqa: ASYNC109 - the caller's transport deadline, as in round_trip
        on_event: OnEvent,
    ) -> Msg:
        """A request whose reply subject also receives the call's events (the server sends them nowhere else)."""
        reply_to = f"{await self._replies()}.{next(self._reply_tokens)}"
        pending = _Pending(on_event=on_event)
        self._pending[reply_to] = pending
        try:
            await self._nc.publish(subject, payload, reply=reply_to, headers={**headers, EVENTS_HEADER: reply_to})
            with anyio.move_on_after(timeout):
                await pending.done.wait()
        finally:
            del self._pending[reply_to]
        msg = pending.reply
        if msg is None:
            raise nats.errors.TimeoutError
        if (msg.headers or {}).get("Status") == _NO_RESPONDERS and not msg.data:
            raise nats.errors.NoRespondersError
        return msg

    async def _replies(self) -> str:
        """The prefix of this connection's reply subjects for calls with events, subscribed on first use."""
        if not self._reply_prefix:
            async with self._reply_lock:
                if not self._reply_prefix:
                    prefix = self._nc.new_inbox()

                    async def dispatch(msg: Msg) -> None:
                        pending = self._pending.get(msg.subject)
                        if pending is None or pending.reply is not None:
                            return
                        if EVENT_HEADER in (msg.headers or {}):
                            pending.on_event(msg.data)
                        else:
                            pending.reply = msg
                            pending.done.set()

                    await self._nc.subscribe(f"{prefix}.*", cb=dispatch)  # pyright: ignore[reportUnknownMemberType]
                    self._reply_prefix = prefix
        return self._reply_prefix

    async def serve(
        self,
        *,
        identity: str,
        version: str,
        handler: Handler,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Register the micro service and the control subscription, then answer until cancelled.

        `version` is the agent's own version (in the card); the micro service registers as `0.0.0`, as the
        original does, because micro insists on semantic versions.
        """
        del version
        async with anyio.create_task_group() as tasks:

            def spawn(route: Route) -> Callable[[MicroRequest], Awaitable[None]]:
                async def on_request(request: MicroRequest) -> None:
                    # Micro runs one handler at a time per endpoint: hand off so slow calls never block intake.
                    tasks.start_soon(self._answer, route, request, handler)

                return on_request

            control = Route(agent=identity, kind="control")

            async def on_control(msg: Msg) -> None:
                tasks.start_soon(self._answer_control, control, msg, handler)

            try:
                service: Service = await add_service(
                    self._nc,
                    name=identity,
                    version=SERVICE_VERSION,
                    description=SERVICE_DESCRIPTION,
                    queue_group=identity,
                )
            except (nats.errors.Error, OSError) as err:
                raise AgentUnavailableError(
                    f"cannot register the a2a service on {self.context.describe()}: {err}"
                ) from None
            try:
                try:
                    for kind in ("discovery", "tool"):
                        route = Route(agent=identity, kind=kind)
                        await service.add_endpoint(
                            EndpointConfig(name=kind, subject=subject_for(route), handler=spawn(route))
                        )
                    control_sub = await self._nc.subscribe(subject_for(control), cb=on_control)  # pyright: ignore[reportUnknownMemberType]
                    # A refused subscription usually comes back before this flush's PONG (not always: the
                    # watch below catches a late one).
                    await flush_in_order(self._nc)
                except (nats.errors.Error, OSError) as err:
                    raise AgentUnavailableError(
                        f"cannot subscribe to the a2a subjects on {self.context.describe()}: {err}"
                    ) from None
                self._raise_if_refused(identity)
                task_status.started()
                try:
                    while True:
                        await self._error_seen.wait()
                        self._error_seen = anyio.Event()
                        self._raise_if_refused(identity)
                finally:
                    with anyio.CancelScope(shield=True):
                        await _quiet_unsubscribe(control_sub)
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                    await service.stop()

    def note_error(self, text: str) -> None:
        """Record an error NATS reported on this connection; a server refused its subjects stops on it."""
        self._errors.append(text)
        self._error_seen.set()

    async def refused(self, subjects: list[str]) -> str:
        """Wait until NATS reports a permissions violation on one of `subjects`; its text."""
        wanted = [f'"{subject.lower()}"' for subject in subjects]  # nats-py lowercases the server's text
        while True:
            found = [e for e in self._errors if "permissions violation" in e and any(w in e for w in wanted)]
            if found:
                return found[0]
            seen = self._error_seen
            await seen.wait()
            if self._error_seen is seen:
                self._error_seen = anyio.Event()

    def _raise_if_refused(self, identity: str) -> None:
        # nats-py lowercases the server's error text.
        ours = [f'"{subject_for(Route(agent=identity, kind=kind)).lower()}"' for kind in ("discovery", "tool")]
        refused = [e for e in self._errors if "permissions violation" in e and any(s in e for s in ours)]
        if refused:
            raise AgentUnavailableError(
                f"the NATS user of {self.context.describe()} may not serve as {identity}: {refused[0]}; "
                f"grant it subscribe permission on {SUBJECT_PREFIX}.*.{identity}"
            )

    def _events_to(self, headers: dict[str, str] | None, reply_to: str) -> EventSink:
        # Events go to the request's own reply subject or nowhere: a header naming any other subject (another
        # client's inbox, a subject in the same inbox family) is a request for a reply and nothing more.
        subject = reply_to if reply_to and (headers or {}).get(EVENTS_HEADER) == reply_to else ""
        marker = {EVENT_HEADER: "1"}

        async def publish(data: bytes) -> None:
            if not subject:
                return
            try:
                await self._nc.publish(subject, data, headers=marker)
            except (nats.errors.Error, OSError):
                # Progress is best effort: a lost event must never fail the call it describes.
                return

        return publish

    async def _answer(self, route: Route, request: MicroRequest, handler: Handler) -> None:
        try:
            # micro's Request keeps the message it wraps in `_msg` and offers no other way to its reply subject.
            reply_to = request._msg.reply  # pyright: ignore[reportPrivateUsage]
            headers = request.headers or {}
            digest = headers.get(CANCEL_DIGEST_HEADER, "")
            digest = digest if _DIGEST.fullmatch(digest) else ""
            # A caller's trace context (`traceparent`) makes the handler's spans children of the caller's span.
            with joined(headers):
                reply = await handler(route, request.data, self._events_to(headers, reply_to), digest)
        # The serving boundary: a handler bug answers this one request with a 500 and the server keeps serving.
        except Exception as err:  # noqa: BLE001
            _log.exception("a2a handler failed")
            reply = Reply(payload=b"", error_code="500", error_text=f"internal error: {err.__class__.__name__}")
        if reply is None:
            return
        try:
            if reply.error_code is not None:
                await request.respond_error(reply.error_code, reply.error_text or "", data=reply.payload)
            else:
                await request.respond(reply.payload)
        except (nats.errors.Error, OSError):
            # The connection is gone; the caller sees a timeout or a stall, nothing more can be sent.
            return

    async def _answer_control(self, route: Route, msg: Msg, handler: Handler) -> None:
        key = (msg.headers or {}).get(CANCEL_KEY_HEADER, "")
        digest = cancel_digest(key) if len(key) <= _MAX_KEY_CHARS else ""
        try:
            reply = await handler(route, msg.data, _no_events, digest)
        # The serving boundary, as in _answer: a handler bug must not take the server down.
        except Exception:  # noqa: BLE001
            _log.exception("a2a handler failed")
            return
        if reply is None or not msg.reply:
            return
        try:
            await msg.respond(reply.payload)
        except (nats.errors.Error, OSError):
            return


@dataclass(slots=True, kw_only=True)
class _Pending:
    """A call with events, waiting on its reply subject."""

    on_event: OnEvent
    done: anyio.Event = field(default_factory=anyio.Event)
    reply: Msg | None = None


async def _no_events(data: bytes) -> None:
    """The event sink of a message that never has events (a Cancel)."""
    del data


async def _quiet_unsubscribe(subscription: Any) -> None:
    try:
        await subscription.unsubscribe()
    except (nats.errors.Error, OSError):
        return


@asynccontextmanager
async def connect(
    context: NatsContext,
    *,
    name: str = "fiskai",
    # Bounds the initial connection only; later reconnects go on in the background.
    timeout: float = _CONNECT_TIMEOUT,  # noqa: ASYNC109
) -> AsyncGenerator[NatsTransport]:
    """Connect to the server a context names; closes the connection on exit.

    Raises:
        AgentUnavailableError: the server cannot be reached or refused the credentials.
        NatsContextError: the context's TLS or credential files cannot be used.
    """
    options = connect_options(context)
    client = NatsClient()
    first_error: list[BaseException] = []
    failed = anyio.Event()
    # Only a connection that was up and is not being closed by us is worth a line to the operator.
    watching = [False]
    transport = NatsTransport(client, context=context)

    async def on_error(error: Exception) -> None:
        if watching[0]:
            # After start-up, NATS reports problems only here (a permissions violation, a slow consumer).
            _log.warning("NATS reported an error on %s: %s", context.describe(), error)
            transport.note_error(str(error))
        elif not client.is_connected and not first_error:
            first_error.append(error)
            failed.set()

    async def on_disconnected() -> None:
        if watching[0]:
            _log.warning("NATS connection to %s lost; reconnecting", context.describe())

    async def on_reconnected() -> None:
        if watching[0]:
            _log.info("NATS connection to %s restored", context.describe())

    async def quiet() -> None:
        return

    try:
        async with anyio.create_task_group() as tasks:

            async def give_up_on_first_failure() -> None:
                await failed.wait()
                tasks.cancel_scope.cancel()

            if len(context.servers) <= 1:
                tasks.start_soon(give_up_on_first_failure)
            with anyio.fail_after(timeout):
                await client.connect(
                    servers=context.servers,
                    name=name,
                    error_cb=on_error,
                    disconnected_cb=on_disconnected,
                    reconnected_cb=on_reconnected,
                    closed_cb=quiet,
                    connect_timeout=max(1, int(timeout)),
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=1,
                    **options,
                )
            tasks.cancel_scope.cancel()
    except TimeoutError:
        first_error.append(TimeoutError(f"no connection within {timeout:g}s"))
    except (nats.errors.Error, OSError) as err:
        first_error.append(err)
    if not client.is_connected:
        with anyio.CancelScope(shield=True):
            await _close(client)
        reason = first_error[0] if first_error else "connection failed"
        raise AgentUnavailableError(
            f"cannot connect to NATS at {context.describe()}: {failure_reason(reason)}; start nats-server there, or "
            "point --server/--context (or nats_context in agent.yaml) at a running one"
        )
    watching[0] = True
    try:
        yield transport
    finally:
        watching[0] = False
        with anyio.CancelScope(shield=True):
            await _close(client)


async def _close(client: NatsClient) -> None:
    try:
        with anyio.move_on_after(5):
            await client.close()
    except (nats.errors.Error, OSError):
        pass
    # A connect cancelled while nats-py was tearing down a failed attempt leaves the client marked closed
    # with its socket still open, and close() then returns early: close the socket itself.
    leftover: Any = getattr(client, "_transport", None)
    if leftover is not None:
        leftover.close()
