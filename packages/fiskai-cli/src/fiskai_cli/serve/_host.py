"""The serve host: one agent behind every endpoint its configuration turns on, until interrupted.

Endpoints: channels (`Channel`: prompts, queued jobs; web plugs in beside them) and the tool
endpoint (no agent loop, one tool per call). The NATS ones share one micro service per identity on the
harness's one connection. Two-stage shutdown: the first interrupt drains (no new work; running work goes
on to its end or its next resumable point), the second stops now. A fault on any endpoint drains the
rest and ends the process non-zero, so a supervisor restarts it.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, cast

import anyio

from ._channel import Channel, WorkRunner

if TYPE_CHECKING:
    from fiskai_a2a.nats_service import ServiceHost
    from fiskai_a2a.tool_endpoint import ToolEndpoint

__all__ = ["DRAIN_NOTICE", "DRAIN_NOTICE_TOOLS", "ServeHost"]

DRAIN_NOTICE = "draining: no new work is taken and running work stops where it can resume. Interrupt again to stop now"
DRAIN_NOTICE_TOOLS = "draining: the endpoints stop answering. Interrupt again to stop now"
_log = logging.getLogger("fiskai.serve")


class ServeHost:
    """Runs the endpoints; `run` returns the fault that ended it, or None after a drain.

    Args:
        runner: Runs the channels' work.
        channels: The enabled channels.
        service: The identity's NATS micro service, when a NATS endpoint is on.
        tools: The tool endpoint, when `serve_tools` is on.
        say: Prints a line for the operator (stderr).
    """

    def __init__(
        self,
        runner: WorkRunner,
        channels: Sequence[Channel],
        *,
        service: ServiceHost | None,
        tools: ToolEndpoint | None,
        say: Callable[[str], None],
    ) -> None:
        self.runner = runner
        self.channels = list(channels)
        self.service = service
        self.tools = tools
        self.say = say
        self.draining = False

    def drain(self) -> None:
        """The first interrupt (or a fault): stop intake everywhere."""
        if self.draining:
            return
        self.draining = True
        self.say(DRAIN_NOTICE if self.channels else DRAIN_NOTICE_TOOLS)
        for channel in self.channels:
            channel.drain()
        if self.tools is not None:
            self.tools.drain()
        if self.service is not None:
            self.service.stop_intake()

    def stop(self) -> None:
        """The second interrupt: running work is stopped now."""
        for channel in self.channels:
            channel.stop()

    async def run(self, *, ready: Callable[[], None]) -> BaseException | None:
        """Serve until drained; `ready` is called once every endpoint listens (print the banner there)."""
        fault: list[BaseException] = []
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._signals, outer.cancel_scope)
            try:
                async with anyio.create_task_group() as endpoints:
                    if self.service is not None:
                        await endpoints.start(self._guard, self.service.serve, fault)
                    for channel in self.channels:
                        await endpoints.start(self._guard, _bind(channel, self.runner), fault)
                    ready()
            finally:
                outer.cancel_scope.cancel()
        return fault[0] if fault else None

    async def _guard(
        self,
        serve: Callable[..., Awaitable[None]],
        fault: list[BaseException],
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run one endpoint; its failure is a fault: recorded, and every endpoint drains."""
        try:
            await serve(task_status=task_status)
        except Exception as err:  # noqa: BLE001 - the serving boundary: any endpoint failure drains the worker
            cause: BaseException = err
            while isinstance(cause, BaseExceptionGroup):
                # A failure inside an endpoint's task group arrives grouped; the operator needs the cause.
                group = cast("BaseExceptionGroup[BaseException]", cause)
                cause = group.exceptions[0]
            _log.error("endpoint failed: %s", cause)
            fault.append(cause)
            self.drain()

    async def _signals(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                if not self.draining:
                    self.drain()
                    continue
                self.say("stopping now")
                self.stop()
                with anyio.move_on_after(5):
                    await anyio.sleep_forever()
                scope.cancel()
                return


def _bind(channel: Channel, runner: WorkRunner) -> Callable[..., Awaitable[None]]:
    async def serve(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        await channel.serve(runner, task_status=task_status)

    return serve
