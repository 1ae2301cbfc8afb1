"""The single-writer lock: one process at a time may write a knowledge index.

WAL lets any number of processes open the database for writing, and SQLite's own locking only
serialises transactions, not whole indexing runs, so the writer takes an advisory lock on
`knowledge.lock` before it touches the database. On unix that is a non-blocking `flock`, which the
kernel drops when the process dies, so a crash never leaves a stale lock. Windows has no `flock`; there
the lock is a file created with `O_EXCL` and removed on release (a crash leaves it behind, and the
error says which process held it).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from fiskai_rag.errors import IndexLockedError

__all__ = ["WriterLock"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class WriterLock:
    """An exclusive, non-blocking, cross-process lock on one file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or fail at once.

        Raises:
            IndexLockedError: Another process holds the lock; the message names its pid.
        """
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            self._acquire_exclusive_file()
            return
        import fcntl  # unix only; the module does not exist on Windows

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise self._locked_error() from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Drop the lock; safe to call twice."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            os.close(fd)
            with contextlib.suppress(OSError):
                self.path.unlink()
            return
        # Clear the pid before unlocking so a later reader never blames a finished process.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)

    def _acquire_exclusive_file(self) -> None:  # pragma: no cover - exercised on Windows only
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise self._locked_error() from None
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def _locked_error(self) -> IndexLockedError:
        pid: int | None = None
        with contextlib.suppress(OSError, ValueError):
            pid = int(self.path.read_text(encoding="ascii").strip())
        who = f"process {pid}" if pid is not None else "another process"
        return IndexLockedError(
            f"index is being written by {who} (lock {self.path}); wait for it to finish, there is one writer at a time",
            pid=pid,
        )
