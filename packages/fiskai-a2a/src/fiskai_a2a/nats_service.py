"""The NATS side of `fiskai serve`: one micro service per identity, replies that are sets of messages.

The 0.0.5 endpoints answer a request with several messages on the caller's inbox: the first through the
single-reply path (a plain `nats req` sees only it), the rest published to the same inbox. `ServiceHost`
registers the identity's micro service (version `0.0.0`, queue group = identity, so instances sharing an
identity share the work) with every endpoint a channel or the tool endpoint adds, and opens the
per-request subscriptions (cancel, elicit) that exist only while the request is served here, so a message
for a request this instance is not running gets NATS's "no responders".

`open_stream` is the calling side: publish one request and read the messages of its reply set one at a
time, each within a silence window.
"""

from __future__ import annotations

try:
    import nats.errors
    from nats.aio.client import Client as NatsClient
    from nats.aio.msg import Msg
    from nats.aio.subscription import Subscription
    from nats.micro import add_service  # pyright: ignore[reportUnknownVariableType]
    from nats.micro.request import Request as MicroRequest
    from nats.micro.service import EndpointConfig, Service
except ImportError as import_error:  # pragma: no cover - nats-py is a dependency of fiskai-a2a
    raise ImportError("The a2a NATS binding needs nats-py: install `fiskai-a2a`.") from import_error

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Final

import anyio
from anyio.abc import TaskGroup, TaskStatus

from fiskai_core.telemetry import joined

from .errors import AgentUnavailableError
from .nats_transport import (
    SERVICE_DESCRIPTION,
    SERVICE_VERSION,
    SUBJECT_PREFIX,
    NatsTransport,
    flush_in_order,
    subject_for,
)
from .transport import Reply, Route

__all__ = ["Inbound", "InboundHandler", "NatsStreams", "ReplyStream", "ServiceHost", "open_stream", "serve_subject"]

_NO_RESPONDERS: Final = "503"
_log = logging.getLogger("fiskai_a2a")


def serve_subject(kind: str, identity: str, request: str = "") -> str:
    """`choria.fisk-ai.<kind>.<identity>[.<request>]` (task, tool, discovery; cancel and elicit per request)."""
    subject = f"{SUBJECT_PREFIX}.{kind}.{identity}"
    return f"{subject}.{request}" if request else subject


class Inbound:
    """One inbound request: its bytes, and the ways to answer whoever sent it (never another address)."""

    __slots__ = ("_client", "data", "headers", "reply_to", "subject")

    def __init__(self, client: NatsClient, msg: Msg) -> None:
        self._client = client
        self.data: bytes = msg.data
        self.headers: dict[str, str] = dict(msg.headers or {})
        self.reply_to: str = msg.reply
        self.subject: str = msg.subject

    async def send(self, data: bytes) -> bool:
        """Publish one message of the reply set to the caller's inbox; False when it could not be sent."""
        if not self.reply_to:
            return False
        try:
            await self._client.publish(self.reply_to, data)
        except (nats.errors.Error, OSError):
            return False
        return True

    async def refuse(self, code: str, text: str, data: bytes = b"") -> bool:
        """A micro service error reply (`Nats-Service-Error`, `Nats-Service-Error-Code`), before any ack."""
        if not self.reply_to:
            return False
        headers = {"Nats-Service-Error": text, "Nats-Service-Error-Code": code}
        try:
            await self._client.publish(self.reply_to, data, headers=headers)
        except (nats.errors.Error, OSError):
            return False
        return True


InboundHandler = Callable[[Inbound], Awaitable[None]]
"""Answers one inbound request; runs in its own task and must not raise."""


class ServiceHost:
    """The micro service of one identity, with the endpoints added before `serve`.

    Args:
        transport: The connection (its error reports stop the service when NATS refuses a subject).
        identity: Service name and queue group.
    """

    def __init__(self, transport: NatsTransport, identity: str) -> None:
        self.transport = transport
        self.identity = identity
        self._endpoints: list[tuple[str, str, InboundHandler]] = []
        self._service: Service | None = None
        self._tasks: TaskGroup | None = None
        self._stopped = anyio.Event()

    @property
    def client(self) -> NatsClient:
        return self.transport.client

    def add(self, name: str, subject: str, handler: InboundHandler) -> None:
        """An endpoint of the service (before `serve`)."""
        self._endpoints.append((name, subject, handler))

    @property
    def subjects(self) -> list[str]:
        return [subject for _name, subject, _handler in self._endpoints]

    async def serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Register and answer until cancelled or `stop_intake`; then wait for the requests in flight.

        Raises:
            AgentUnavailableError: the service cannot be registered, or NATS refused one of its subjects (a
                fault: the operator's supervisor restarts the worker after the fix).
        """
        client = self.client
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks

            def spawn(handler: InboundHandler) -> Callable[[MicroRequest], Awaitable[None]]:
                async def on_request(request: MicroRequest) -> None:
                    # micro runs one handler at a time per endpoint: hand off so a slow request never blocks intake.
                    inbound = Inbound(client, request._msg)  # pyright: ignore[reportPrivateUsage]
                    tasks.start_soon(_guarded, handler, inbound)

                return on_request

            try:
                service: Service = await add_service(
                    client,
                    name=self.identity,
                    version=SERVICE_VERSION,
                    description=SERVICE_DESCRIPTION,
                    queue_group=self.identity,
                )
                for name, subject, handler in self._endpoints:
                    await service.add_endpoint(EndpointConfig(name=name, subject=subject, handler=spawn(handler)))
                await flush_in_order(client)
            except (nats.errors.Error, OSError) as err:
                raise AgentUnavailableError(
                    f"cannot register the a2a service of {self.identity} on {self.transport.context.describe()}: {err}"
                ) from None
            self._service = service
            task_status.started()
            try:
                async with anyio.create_task_group() as watch:
                    watch.start_soon(self._watch_refusals)
                    await self._stopped.wait()
                    watch.cancel_scope.cancel()
            finally:
                # Requests in flight (in `tasks`) go on answering; intake stops here.
                await self._stop_service()

    async def _watch_refusals(self) -> None:
        refused = await self.transport.refused(self.subjects)
        raise AgentUnavailableError(
            f"the NATS user of {self.transport.context.describe()} may not serve as {self.identity}: {refused}; "
            f"grant it subscribe permission on {SUBJECT_PREFIX}.*.{self.identity}"
        )

    def stop_intake(self) -> None:
        """Leave the queue group: no new request reaches this instance; requests in flight go on."""
        self._stopped.set()

    async def _stop_service(self) -> None:
        service, self._service = self._service, None
        if service is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                try:
                    await service.stop()
                except (nats.errors.Error, OSError):
                    pass

    @asynccontextmanager
    async def subscription(self, subject: str, handler: InboundHandler) -> AsyncGenerator[None]:
        """A plain subscription (every message handled in its own task) held open for the block."""
        client = self.client
        tasks = self._tasks
        assert tasks is not None, "subscriptions are opened while serving"

        async def on_message(msg: Msg) -> None:
            tasks.start_soon(_guarded, handler, Inbound(client, msg))

        subscription = await client.subscribe(subject, cb=on_message)  # pyright: ignore[reportUnknownMemberType]
        try:
            await flush_in_order(client)
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await _quiet_unsubscribe(subscription)


async def _guarded(handler: InboundHandler, inbound: Inbound) -> None:
    try:
        # A caller's trace context (`traceparent`) makes the handler's spans children of the caller's span.
        with joined(inbound.headers):
            await handler(inbound)
    # The serving boundary: a handler bug answers nothing for this request, and the service goes on.
    except Exception:  # noqa: BLE001
        _log.exception("a2a handler failed subject=%s", inbound.subject)
        await inbound.refuse("500", "internal error")


async def _quiet_unsubscribe(subscription: Subscription) -> None:
    try:
        await subscription.unsubscribe()
    except (nats.errors.Error, OSError):
        return


class ReplyStream:
    """The messages of one request's reply set, read one at a time."""

    def __init__(self, subscription: Subscription, subject: str, describe: str) -> None:
        self._subscription = subscription
        self.subject = subject
        self._describe = describe

    async def receive(self, silence: float) -> Reply:
        """The next message, waiting at most `silence` seconds for it.

        Raises:
            AgentUnavailableError: nothing arrived in time, nobody serves the subject, or the connection is gone.
        """
        try:
            msg = await self._subscription.next_msg(timeout=silence)
        except (nats.errors.TimeoutError, TimeoutError):
            raise AgentUnavailableError(
                f'remote agent unavailable: nothing on "{self.subject}" for {silence:g}s'
            ) from None
        except (nats.errors.Error, OSError) as err:
            raise AgentUnavailableError(
                f'remote agent unavailable: no reply on "{self.subject}": connection to {self._describe} lost '
                f"({err.__class__.__name__})"
            ) from None
        headers = msg.headers or {}
        if headers.get("Status") == _NO_RESPONDERS and not msg.data:
            agent = self.subject.rsplit(".", 1)[-1]
            raise AgentUnavailableError(
                f'remote agent unavailable: no reply on "{self.subject}": no agent "{agent}" is serving on '
                f"{self._describe}"
            )
        return Reply(
            payload=msg.data,
            error_code=headers.get("Nats-Service-Error-Code"),
            error_text=headers.get("Nats-Service-Error"),
        )


@asynccontextmanager
async def open_stream(
    transport: NatsTransport, subject: str, payload: bytes, *, headers: dict[str, str] | None = None
) -> AsyncGenerator[ReplyStream]:
    """Send `payload` to `subject` with a fresh inbox as its reply address; read the reply set in the block.

    Raises:
        AgentUnavailableError: the request cannot be sent.
    """
    client = transport.client
    inbox = client.new_inbox()
    try:
        subscription = await client.subscribe(inbox)  # pyright: ignore[reportUnknownMemberType]
        await client.publish(subject, payload, reply=inbox, headers=headers)
    except (nats.errors.Error, OSError) as err:
        raise AgentUnavailableError(
            f'remote agent unavailable: cannot send on "{subject}" over {transport.context.describe()}: {err}'
        ) from None
    try:
        yield ReplyStream(subscription, subject, transport.context.describe())
    finally:
        with anyio.CancelScope(shield=True):
            await _quiet_unsubscribe(subscription)


class NatsStreams:
    """`Streams` over a NATS connection (what `A2AClient` takes to speak the 0.0.5 reply sets)."""

    def __init__(self, transport: NatsTransport) -> None:
        self.transport = transport

    def stream(
        self, route: Route, payload: bytes, *, headers: Mapping[str, str] | None = None
    ) -> AbstractAsyncContextManager[ReplyStream]:
        """See `Streams.stream`."""
        return open_stream(self.transport, subject_for(route), payload, headers=dict(headers) if headers else None)
