"""Reading an operator's answers so that each one belongs to the question it was typed for.

An answer typed for one question must never answer another: when a question is withdrawn (its caller
stopped waiting, e.g. an MCP client disconnected) while the operator was typing, or input was typed
before a question was on the screen, that input is discarded rather than handed to the next question.

- A terminal is read from the event loop, and only while a question is shown. Showing a question and
  withdrawing one both flush the terminal's input queue (`tcflush(TCIFLUSH)`), which drops complete
  lines not yet read and the half-typed line in the terminal's line editor alike.
- Any other stream (a pipe, a test's `StringIO`) is read on a helper thread, since it cannot be waited
  on portably. A read abandoned by a withdrawn question is kept, so two threads never compete for the
  stream, but the line it returns belongs to that question and is dropped.
"""

from __future__ import annotations

import contextlib
import os
import termios
import threading
from concurrent.futures import Future
from typing import Protocol, TextIO

import anyio
import anyio.to_thread

__all__ = ["Answers", "StreamAnswers", "TerminalAnswers", "answers_for"]

_CHUNK = 4096


class Answers(Protocol):
    """Lines typed by the operator, each bound to one question."""

    def discard_typed(self) -> None:
        """Drop everything typed so far: call right after a question is shown, and when one is withdrawn."""
        ...

    async def read_line(self, question: int) -> str:
        """The next line typed for `question`, newline included; "" at end of input.

        Raises:
            OSError, ValueError: the input cannot be read.
        """
        ...


class TerminalAnswers:
    """Answers from a terminal's file descriptor, read only while a question waits for one."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._typed = bytearray()

    def discard_typed(self) -> None:
        self._typed.clear()
        # A terminal that went away has nothing left to flush; reading it will say so.
        with contextlib.suppress(termios.error, OSError):
            termios.tcflush(self._fd, termios.TCIFLUSH)

    async def read_line(self, question: int) -> str:
        while b"\n" not in self._typed:
            await anyio.wait_readable(self._fd)
            # Readable: a canonical-mode terminal holds a whole line (or end of input), so this returns at once.
            chunk = os.read(self._fd, _CHUNK)
            if not chunk:
                rest, self._typed = bytes(self._typed), bytearray()
                return rest.decode("utf-8", errors="replace")
            self._typed += chunk
        line, _, rest = self._typed.partition(b"\n")
        self._typed = bytearray(rest)
        return line.decode("utf-8", errors="replace") + "\n"


class StreamAnswers:
    """Answers from a stream that is not a terminal, read with `readline` on a helper thread."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pending: tuple[int, Future[str]] | None = None
        self._lock = threading.Lock()

    def discard_typed(self) -> None:
        """Nothing to do: a stream has no line editor, and a stale read is dropped in `read_line`."""

    def _start(self, question: int) -> tuple[int, Future[str]]:
        with self._lock:
            if self._pending is None:
                future: Future[str] = Future()

                def read() -> None:
                    try:
                        future.set_result(self._stream.readline())
                    except (OSError, ValueError) as err:
                        future.set_exception(err)

                threading.Thread(target=read, name="fiskai-prompt-read", daemon=True).start()
                self._pending = (question, future)
            return self._pending

    def _finish(self) -> None:
        with self._lock:
            self._pending = None

    async def read_line(self, question: int) -> str:
        while True:
            owner, future = self._start(question)
            try:
                line = await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
            except (OSError, ValueError):
                self._finish()
                raise
            self._finish()
            # A line read for a question that was withdrawn is no answer to this one; end of input still is.
            if owner == question or not line:
                return line


def answers_for(stream: TextIO) -> Answers:
    """`TerminalAnswers` when `stream` is a terminal, else `StreamAnswers`."""
    try:
        fd = stream.fileno()
        is_terminal = os.isatty(fd)
    except (OSError, ValueError):
        return StreamAnswers(stream)
    return TerminalAnswers(fd) if is_terminal else StreamAnswers(stream)
