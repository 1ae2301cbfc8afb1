"""The 64 KiB head/tail cap on a command's combined output.

A command may print far more than a model can use (a 200 MB log dump), so capture keeps the first
`MAX_TOOL_OUTPUT_BYTES` bytes and a ring of the most recent half of that, and counts the rest. Memory stays
bounded however much the command writes. The cap is byte-based, like fisk-ai's, so it may split a UTF-8
sequence; decoding replaces the broken bytes with U+FFFD.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_TOOL_OUTPUT_BYTES", "TRUNCATION_MARKER", "CappedOutput", "HeadTailCapture"]

MAX_TOOL_OUTPUT_BYTES = 65536
"""Output up to this many bytes is returned whole; beyond it, head and tail halves with a marker."""

TRUNCATION_MARKER = b"\n...[output truncated]...\n"
"""Placed between the kept head and tail when output was dropped."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CappedOutput:
    """What survives the cap."""

    data: bytes
    """Everything when `total <= limit`, otherwise head half + `TRUNCATION_MARKER` + tail half."""
    truncated: bool
    total: int
    """How many bytes the command wrote in all."""

    def text(self) -> str:
        """The output as text; invalid UTF-8 (including a sequence split by the cap) becomes U+FFFD."""
        return self.data.decode("utf-8", errors="replace")


class HeadTailCapture:
    """A streaming sink that keeps the first `limit` bytes and the last `limit // 2` bytes.

    `write` always accepts more data (it returns True so it fits the exec sink contract): the command keeps
    running and its output beyond the cap is counted and dropped, never buffered.
    """

    __slots__ = ("_half", "_head", "_limit", "_tail", "_total")

    def __init__(self, limit: int = MAX_TOOL_OUTPUT_BYTES) -> None:
        """Create an empty capture.

        Args:
            limit: Output up to this many bytes is kept whole. Must be even and positive so the head and tail
                halves are equal, as in fisk-ai.

        Raises:
            ValueError: `limit` is not a positive even number.
        """
        if limit <= 0 or limit % 2:
            raise ValueError(f"output limit must be a positive even number of bytes, got {limit}")
        self._limit = limit
        self._half = limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    @property
    def total(self) -> int:
        """Bytes written so far, kept or not."""
        return self._total

    def write(self, data: bytes) -> bool:
        """Take the next chunk of output.

        Returns:
            Always True: the cap never asks the command to stop.
        """
        self._total += len(data)
        room = self._limit - len(self._head)
        if room > 0:
            self._head += data[:room]
        if len(data) >= self._half:
            # The chunk alone fills the ring: the older tail is gone entirely.
            self._tail = bytearray(data[-self._half :])
        else:
            self._tail += data
            excess = len(self._tail) - self._half
            if excess > 0:
                del self._tail[:excess]
        return True

    def result(self) -> CappedOutput:
        """The capped output as it stands now."""
        if self._total <= self._limit:
            return CappedOutput(data=bytes(self._head), truncated=False, total=self._total)
        data = bytes(self._head[: self._half]) + TRUNCATION_MARKER + bytes(self._tail)
        return CappedOutput(data=data, truncated=True, total=self._total)
