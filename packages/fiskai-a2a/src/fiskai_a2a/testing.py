"""FakeTransport: an in-memory `Transport` for tests of the client, the engine and the invoker.

It keeps the NATS binding's semantics that matter to callers: several servers of one identity share
discovery and tool work round-robin (a queue group), every server sees control messages, no server
means `AgentUnavailableError`, events reach the caller that asked for them, and a Cancel is bound to its
call by the caller's cancel key.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping

import anyio
from anyio.abc import TaskGroup, TaskStatus

from .errors import AgentUnavailableError
from .transport import Handler, OnEvent, Reply, Route, cancel_digest

__all__ = ["FakeTransport"]


class FakeTransport:
    """Routes bytes between clients and servers in one process; share one instance between both sides.

    Each inbound message is handled in the serving side's own task, as over a network, so cancelling a
    caller never cancels the server's work directly.
    """

    def __init__(self) -> None:
        self._servers: dict[str, list[tuple[Handler, TaskGroup]]] = defaultdict(list)
        self._turn = itertools.count()
        self.sent: list[tuple[Route, bytes]] = []
        """Every request sent, in order."""

    async def round_trip(
        self,
        route: Route,
        payload: bytes,
        *,
        # Same meaning as the NATS transport's: a deadline reported as AgentUnavailableError.
        timeout: float,  # noqa: ASYNC109
        on_event: OnEvent | None = None,
        cancel_key: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Hand `payload` to a server of `route.agent` and return its reply (in-memory: `headers` are dropped)."""
        self.sent.append((route, payload))
        servers = list(self._servers.get(route.agent, ()))
        if not servers:
            raise AgentUnavailableError(f'remote agent unavailable: no agent "{route.agent}" is serving')
        if route.kind != "control":
            servers = [servers[next(self._turn) % len(servers)]]
        answered = anyio.Event()
        replies: list[Reply] = []

        async def deliver(data: bytes) -> None:
            if on_event is not None:
                on_event(data)

        # As over NATS: the request commits to the key's digest, a Cancel presents the key.
        digest = cancel_digest(cancel_key)

        async def handle(handler: Handler) -> None:
            reply = await handler(route, payload, deliver, digest)
            if reply is not None and not answered.is_set():
                replies.append(reply)
                answered.set()

        for handler, tasks in servers:
            tasks.start_soon(handle, handler)
        with anyio.move_on_after(timeout):
            await answered.wait()
            return replies[0]
        raise AgentUnavailableError(f'remote agent unavailable: no reply from "{route.agent}" within {timeout:g}s')

    async def serve(
        self,
        *,
        identity: str,
        version: str,
        handler: Handler,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Register `handler` for `identity` until cancelled; in-flight work is cancelled with it."""
        del version
        async with anyio.create_task_group() as tasks:
            entry = (handler, tasks)
            self._servers[identity].append(entry)
            try:
                task_status.started()
                await anyio.sleep_forever()
            finally:
                self._servers[identity].remove(entry)
