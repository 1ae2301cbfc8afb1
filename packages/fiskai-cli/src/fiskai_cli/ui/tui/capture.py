"""Stderr captured at the file-descriptor level while the screen is up, flushed once it is restored.

A library that logs to stderr (or a warning printed by Python itself) would otherwise write into the
middle of the full-screen display; the bytes are kept in an unnamed temporary file, not in memory,
so a chatty library cannot exhaust memory, and are written to the real stderr after teardown.
"""

from __future__ import annotations

import os
import sys
import tempfile
from types import TracebackType
from typing import IO

__all__ = ["StderrCapture"]


class StderrCapture:
    """`with StderrCapture():` redirects fd 2 into a temporary file, then restores it and replays it."""

    def __init__(self) -> None:
        self._saved: int | None = None
        self._file: IO[bytes] | None = None

    def __enter__(self) -> StderrCapture:
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._file is not None and self._saved is not None
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        data = self._file.read()
        self._file.close()
        view = memoryview(data)
        while view:
            written = os.write(2, view)
            view = view[written:]
