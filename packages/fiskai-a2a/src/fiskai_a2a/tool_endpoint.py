"""The 0.0.5 tool endpoint (`expose.agent.a2a.serve_tools` under `fiskai serve`).

What it changes from the older single-reply server (`Server` on `NatsTransport.serve`):
* the reply is a set: an `ack`, a keepalive every `keepalive` seconds while the tool runs (a status event,
  see `protocol.serve.KEEPALIVE`), then the `tool.reply`;
* saturation refuses at once, no command started: `ack accepted:false`, then `tool.reply is_error:true
  code:capacity` (a retry reaches whichever member of the queue group is free);
* default concurrency is the CPU count clamped to 2..8 (the container's limit, not the host's).
Discovery is unchanged (one request, one card). The served set, argument checks, the per-call
`tool_timeout` and every in-band failure are the `Server`'s.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Final, cast

import anyio

from ._engine import Server
from .errors import MessageError
from .nats_service import Inbound, ServiceHost, serve_subject
from .protocol import TOOL_REQUEST, Identity, ToolRequest, decode_exact, reply_header, serve as wire
from .transport import Reply, Route

__all__ = ["DEFAULT_KEEPALIVE", "ToolEndpoint", "default_max_concurrent"]

DEFAULT_KEEPALIVE: Final = 10.0
"""Seconds between keepalives while a served call runs."""
_CGROUP_CPU: Final = Path("/sys/fs/cgroup/cpu.max")
_log = logging.getLogger("fiskai_a2a")


def default_max_concurrent(cgroup_cpu: Path = _CGROUP_CPU) -> int:
    """The CPUs this process may use (a container's quota wins over the host's count), clamped to 2..8."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = cgroup_cpu.read_text(encoding="utf-8").split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return min(8, max(2, cpus))


async def _no_events(data: bytes) -> None:
    del data


class ToolEndpoint:
    """Answers discovery and tool calls for one `Server` with the 0.0.5 reply set.

    Args:
        server: The served set, the card and the per-call runner.
        max_concurrent: Calls running at once; one more is refused with `capacity`.
        keepalive: Seconds between keepalives.
    """

    def __init__(self, server: Server, *, max_concurrent: int, keepalive: float = DEFAULT_KEEPALIVE) -> None:
        self.server = server
        self.max_concurrent = max(1, max_concurrent)
        self.keepalive = keepalive
        self.running = 0
        self.draining = False
        self._calls: set[anyio.CancelScope] = set()

    def drain(self) -> None:
        """Refuse new calls and stop the running ones: each is answered in-band and its command killed.

        The caller gets an answer now instead of silence until its own timeout (the pre-0.0.5 fiskai
        server did the same; the Go 0.0.5 worker leaves the call running with nowhere to reply).
        """
        self.draining = True
        for scope in self._calls:
            scope.cancel()

    def add_to(self, host: ServiceHost) -> None:
        """The discovery and tool endpoints of the service."""
        identity = self.server.identity
        host.add("discovery", serve_subject("discovery", identity), self.discovery)
        host.add("tool", serve_subject("tool", identity), self.tool)

    @property
    def me(self) -> Identity:
        return self.server.me

    async def discovery(self, inbound: Inbound) -> None:
        reply = await self.server(Route(agent=self.server.identity, kind="discovery"), inbound.data, _no_events)
        assert reply is not None, "discovery is always answered"
        await _answer(inbound, reply)

    async def tool(self, inbound: Inbound) -> None:
        try:
            message, exact = decode_exact(inbound.data, expect={TOOL_REQUEST})
        except MessageError as err:
            refusal = self.server.refusal(err, inbound.data)
            await inbound.refuse(err.code, f"the request is not a valid v1 message: {err}", refusal.payload)
            return
        request = cast("ToolRequest", message)
        if self.draining:
            await self._refuse(inbound, request, "draining", f"agent {self.server.identity} is shutting down")
            return
        if self.running >= self.max_concurrent:
            await self._refuse(
                inbound,
                request,
                "capacity",
                f"agent {self.server.identity} is busy: {self.running} calls running (max_concurrent_tools "
                f"{self.max_concurrent}); retry, another instance may be free",
            )
            return
        self.running += 1
        try:
            await inbound.send(self._ack(request, accepted=True))
            reply: Reply | None = None
            with anyio.CancelScope() as scope:
                self._calls.add(scope)
                async with anyio.create_task_group() as beats:
                    beats.start_soon(self._beat, inbound, request)
                    reply = await self.server.run_request(request, exact.get("input") or {})
                    beats.cancel_scope.cancel()
            self._calls.discard(scope)
            if reply is None:  # stopped by a drain; cancelling the call killed its command's process group
                text = f'tool call stopped: agent "{self.server.identity}" is shutting down'
                header = reply_header(wire.TOOL_REPLY, request.header, sender=self.me)
                await inbound.send(
                    wire.encode(wire.ToolReply(header=header, is_error=True, output=text, code="draining"))
                )
                return
            await inbound.send(reply.payload)
        finally:
            self.running -= 1

    async def _beat(self, inbound: Inbound, request: ToolRequest) -> None:
        sequence = 1
        while True:
            await anyio.sleep(self.keepalive)
            sequence += 1
            header = reply_header(wire.KEEPALIVE, request.header, sender=self.me, sequence=sequence)
            beat = wire.EventMessage(header=header, block={"phase": "executing-tool"})
            if not await inbound.send(wire.encode(beat)):
                sequence -= 1

    def _ack(self, request: ToolRequest, *, accepted: bool, reason: str | None = None) -> bytes:
        header = reply_header(wire.ACK, request.header, sender=self.me, sequence=1)
        return wire.encode(wire.Ack(header=header, accepted=accepted, reason=reason))

    async def _refuse(self, inbound: Inbound, request: ToolRequest, code: str, text: str) -> None:
        _log.info("Refused tool call tool=%s code=%s", request.name, code)
        await inbound.send(self._ack(request, accepted=False, reason=text))
        header = reply_header(wire.TOOL_REPLY, request.header, sender=self.me, sequence=2)
        await inbound.send(wire.encode(wire.ToolReply(header=header, is_error=True, output=text, code=code)))


async def _answer(inbound: Inbound, reply: Reply) -> None:
    if reply.error_code is not None:
        await inbound.refuse(reply.error_code, reply.error_text or "", reply.payload)
    else:
        await inbound.send(reply.payload)
