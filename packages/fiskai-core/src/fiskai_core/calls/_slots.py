"""Bounded places to run calls in, shared by every client of a server.

At most `running` calls run at once. A call that finds no free place waits up to `queue_timeout`
seconds, at most `waiting` of them at a time, in arrival order (anyio's semaphore is FIFO); past
either bound it is refused with a busy message, so every call gets an answer and none waits without
bound. A caller that goes away while waiting (its task is cancelled) leaves the queue and never starts.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio

from fiskai_core.errors import FiskaiError

__all__ = ["CallSlots", "SlotsBusyError"]

DEFAULT_QUEUE_TIMEOUT = 10.0


class SlotsBusyError(FiskaiError):
    """No place came free in time, or the queue is full; the message is for the caller (a model)."""


class CallSlots:
    """A semaphore of `running` places with a bounded, timed queue in front of it.

    Args:
        running: Calls that run at once (at least 1).
        waiting: Calls that may wait for a place at once; None: 16 per running place.
        queue_timeout: Seconds a call may wait; None: 10 s.
        owner: Named in the busy message (`agent "x" is busy`, `the server is busy`).
    """

    def __init__(
        self,
        running: int,
        *,
        waiting: int | None = None,
        queue_timeout: float | None = None,
        owner: str = "the server",
    ) -> None:
        self.running = max(1, running)
        self.waiting_limit = 16 * self.running if waiting is None else max(0, waiting)
        self.queue_timeout = DEFAULT_QUEUE_TIMEOUT if queue_timeout is None else queue_timeout
        self._owner = owner
        self._places = anyio.Semaphore(self.running)
        self._waiting = 0

    @property
    def full(self) -> bool:
        """No place is free right now."""
        return self._places.value == 0

    @property
    def waiting(self) -> int:
        """Calls waiting for a place now."""
        return self._waiting

    @asynccontextmanager
    async def place(self) -> AsyncGenerator[None]:
        """Hold a place for the body.

        Raises:
            SlotsBusyError: the queue is full, or no place came free within `queue_timeout`.
        """
        if self.full:
            if self._waiting >= self.waiting_limit:
                raise SlotsBusyError(self._busy(f"{self._waiting} calls are already waiting"))
            self._waiting += 1
            try:
                with anyio.move_on_after(self.queue_timeout) as waited:
                    await self._places.acquire()
            finally:
                self._waiting -= 1
            if waited.cancelled_caught:
                raise SlotsBusyError(self._busy(f"no place freed within {self.queue_timeout:g}s"))
        else:
            await self._places.acquire()
        try:
            yield
        finally:
            self._places.release()

    def _busy(self, why: str) -> str:
        return f"{self._owner} is busy: {self.running} calls running and {why}; retry later"
