"""The high-water mark: how many records a run's journal reached, kept where cutting the journal cannot reach.

A journal cut back at a record boundary (a partial copy, a restore of an older backup) reads as a sound,
shorter run, and a resume would repeat whatever the lost records announced, side effects included. So the
writer keeps a count beside the journal (the file backend: `<run>.hwm`), and opening a journal that holds
fewer complete records than its mark is refused unless forced.

The mark is written only after the record it counts is durable, so it can lag the journal (a kill between
the two writes, a power loss before the mark's page reaches the disk) but never lead it: an intact journal,
torn tail included, is never refused. A journal restored together with its mark from the same backup is
indistinguishable from the run at that point; resuming it is the operator's call.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from .errors import JournalError, JournalTruncatedError
from .records import LEGACY_VERSION, MetaRecord, Record

__all__ = [
    "MARK_SUFFIX",
    "encode_mark",
    "fresh_mark",
    "mark_problem",
    "open_mark",
    "read_mark",
    "truncated",
    "write_mark",
]

MARK_SUFFIX: Final = ".hwm"
_FORCE: Final = "or resume with --force if you restored or cut it back on purpose"


def encode_mark(count: int) -> bytes:
    """The mark's bytes: fixed width, so every update overwrites the same bytes in one `pwrite`."""
    return b"%020d\n" % count


def truncated(run_id: str, *, expected: int, found: int, mark: str) -> JournalTruncatedError | None:
    """The error for a journal holding fewer records than its mark counts, or None when it holds enough."""
    if expected <= found:
        return None
    return JournalTruncatedError(
        run_id,
        f"is truncated: its high-water mark {mark} counts {expected} records but the journal holds {found}, so "
        f"resuming would run the steps after record {found} again",
        expected=expected,
        found=found,
        fix=f"restore the complete journal, {_FORCE}",
    )


def read_mark(path: Path) -> int | str | None:
    """The count a mark file holds; None when there is no mark file; a sentence when it cannot be read.

    An empty file counts 0: the run was created and the first count had not reached the disk yet.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:
        return err.strerror or str(err)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "it is not a regular file"
        data = os.read(fd, 64)
    except OSError as err:
        return err.strerror or str(err)
    finally:
        os.close(fd)
    text = data.strip()
    if not text:
        return 0
    if not text.isdigit() or len(text) > 20:
        return f"it holds {data[:24]!r}, not a record count"
    return int(text)


def mark_problem(
    run_id: str, records: Sequence[Record], mark: int | str | None, *, name: str
) -> JournalTruncatedError | None:
    """Why `records` may be cut short given the run's mark (as `read_mark` returns it), or None.

    A journal without a mark file is checked only when fiskai wrote it: one written by the Go agent (meta
    version 3) never had a mark, so there is nothing to check it against and it resumes as it always did.
    """
    found = len(records)
    if isinstance(mark, int):
        return truncated(run_id, expected=mark, found=found, mark=name)
    if mark is None:
        meta = records[0].payload if records else None
        if not isinstance(meta, MetaRecord) or meta.version <= LEGACY_VERSION:
            return None
        return JournalTruncatedError(
            run_id,
            f"has no high-water mark ({name} is missing), so records cut off its end cannot be ruled out",
            expected=None,
            found=found,
            fix=f"copy {name} along with the journal, or resume with --force if the journal is complete",
        )
    return JournalTruncatedError(
        run_id,
        f"has an unreadable high-water mark ({name}: {mark}), so records cut off its end cannot be ruled out",
        expected=None,
        found=found,
        fix="resume with --force if the journal is complete (a new mark is written)",
    )


def open_mark(path: Path, flags: int) -> int:
    """The mark file, opened read-write (created if missing); never through a symlink."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as err:
        reason = "is a symlink" if err.errno == errno.ELOOP else f"cannot be opened: {err.strerror or err}"
        raise JournalError(f"high-water mark {path} {reason}; remove it and resume with --force") from None


def fresh_mark(path: Path) -> int:
    """The mark of a run being created; the first append's directory fsync makes its name durable."""
    fd = open_mark(path, 0)
    try:
        if os.fstat(fd).st_size:
            # Left by a removed run: emptied, durably, before the new meta record exists, so it can never
            # count against the new run.
            os.ftruncate(fd, 0)
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_mark(fd: int, count: int, *, sync: bool) -> None:
    """Write `count` over the mark (one `pwrite`); with `sync`, also cut it to size and fsync it."""
    data = encode_mark(count)
    os.pwrite(fd, data, 0)
    if sync:
        os.ftruncate(fd, len(data))  # drops whatever longer, unreadable content a forced open replaced
        os.fsync(fd)
