"""The file backend: one JSON-lines journal per run under a private state directory.

Layout: `<dir>/<run_id>.json` (the journal, mode 0600), `<dir>/<run_id>.hwm` (its high-water mark, see
`fiskai_runstate.high_water`) and `<dir>/<run_id>.lock` (an advisory `flock` held while a writer has the run
open, holding that writer's pid), in a directory created 0700. The default directory is
`$XDG_STATE_HOME/fiskai/runs`, else `~/.local/state/fiskai/runs`.

Durability: each append is one `write` of the whole line plus `fsync`; the first append of a new journal
also fsyncs the directory so the file's name survives a power loss. A record counts only once its line
ends in a newline, so a crash mid-write leaves at most one unterminated tail, which readers ignore and
the next writer truncates before appending (the original left it in place, which corrupted the journal
on the following append). Anything else unreadable is an error naming the line, and nothing is repaired.
After each durable append the record count is written over the mark; `open` refuses a journal holding fewer
records than its mark (`JournalTruncatedError`) unless forced.

Reading (`load`, `list`) never locks, so an operator can inspect a live run. Journals and lock files are
opened with `O_NOFOLLOW`: a symlinked journal is refused rather than followed somewhere unexpected.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gc
import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import anyio.to_thread

from ._codec import decode_lines, encode_record
from .claims import CLAIM_SUFFIX, check_claim, new_owner, write_claim
from .errors import (
    JournalCorruptError,
    JournalError,
    JournalExistsError,
    JournalLockedError,
    JournalNotFoundError,
    JournalTruncatedError,
    RecordTooLargeError,
)
from .high_water import MARK_SUFFIX, fresh_mark, mark_problem, open_mark, read_mark, write_mark
from .records import MAX_RECORD_BYTES, MetaRecord, Record
from .state import fold
from .store import RunSummary, check_append, check_meta_run_id, damaged_summary, run_summary, validate_run_id

__all__ = ["FileJournal", "FileJournalStore", "default_runs_dir", "parse_journal"]

_SUFFIX: Final = ".json"
_LOCK_SUFFIX: Final = ".lock"
_OPEN_FLAGS: Final = os.O_NOFOLLOW | os.O_CLOEXEC


def default_runs_dir() -> Path:
    """`$XDG_STATE_HOME/fiskai/runs` when that variable is an absolute path, else `~/.local/state/fiskai/runs`."""
    xdg = os.environ.get("XDG_STATE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "fiskai" / "runs"


class FileJournalStore:
    """Runs as JSON-lines files in one directory. Satisfies `fiskai_runstate.store.Store`."""

    def __init__(self, directory: Path | None = None) -> None:
        """Use `directory`, or `default_runs_dir()`; it is created (0700) on the first create or open."""
        self.directory = directory if directory is not None else default_runs_dir()

    def journal_path(self, run_id: str) -> Path:
        """The journal file of a run (validates the id)."""
        return self.directory / f"{validate_run_id(run_id)}{_SUFFIX}"

    def mark_path(self, run_id: str) -> Path:
        """The high-water mark file of a run (validates the id)."""
        return self.directory / f"{validate_run_id(run_id)}{MARK_SUFFIX}"

    async def claim(self, run_id: str) -> str:
        """Take the run over (see `fiskai_runstate.claims`): its current writer stops at its next append."""
        owner = new_owner()
        self._ensure_directory()
        write_claim(self.directory / f"{validate_run_id(run_id)}{CLAIM_SUFFIX}", owner)
        return owner

    def _claimed(self, run_id: str) -> tuple[Path, str]:
        """A fresh writer's claim, written under the run's lock."""
        path, owner = self.directory / f"{run_id}{CLAIM_SUFFIX}", new_owner()
        write_claim(path, owner)
        return path, owner

    async def create(self, meta: MetaRecord) -> FileJournal:
        run_id = validate_run_id(meta.run_id)
        self._ensure_directory()
        lock_fd = _acquire_lock(self.directory / f"{run_id}{_LOCK_SUFFIX}", run_id)
        try:
            try:
                fd = os.open(
                    self.journal_path(run_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _OPEN_FLAGS, 0o600
                )
            except FileExistsError:
                fd = _reclaim_unwritten(self.journal_path(run_id), run_id)
            try:
                mark_fd = fresh_mark(self.mark_path(run_id))
                claim = self._claimed(run_id)
            except BaseException:
                os.close(fd)
                raise
        except BaseException:
            os.close(lock_fd)
            raise
        journal = FileJournal(
            run_id=run_id,
            fd=fd,
            lock_fd=lock_fd,
            mark_fd=mark_fd,
            directory=self.directory,
            last_seq=0,
            truncate_to=None,
            fresh=True,
            claim=claim,
        )
        try:
            await journal.append(Record(seq=1, payload=meta))
        except BaseException:
            await journal.aclose()
            raise
        return journal

    async def open(self, run_id: str, *, force: bool = False) -> FileJournal:
        validate_run_id(run_id)
        if not self.directory.is_dir():
            raise JournalNotFoundError(run_id)
        self._ensure_directory()
        lock_fd = _acquire_lock(self.directory / f"{run_id}{_LOCK_SUFFIX}", run_id)
        fds = [lock_fd]
        try:
            fd = _open_journal(self.journal_path(run_id), run_id, os.O_RDWR | os.O_APPEND)
            fds.append(fd)
            records, complete_end, torn = _read_fd(fd, run_id)
            if not records:
                raise JournalCorruptError(run_id, "the journal has no complete record")
            # Read under the lock: only a writer holding it moves the mark.
            mark_path = self.mark_path(run_id)
            stored = read_mark(mark_path)
            problem = mark_problem(run_id, records, stored, name=mark_path.name)
            if problem is not None and not force:
                raise problem
            mark_fd = open_mark(mark_path, 0)
            fds.append(mark_fd)
            if stored != len(records):
                # Catch the mark up (a kill between append and mark), start one (a Go journal), or, forced,
                # accept the journal as it is; durable now so the next open agrees.
                write_mark(mark_fd, len(records), sync=True)
                if stored is None:
                    _fsync_directory(self.directory)
            claim = self._claimed(run_id)
        except BaseException:
            for opened in reversed(fds):
                os.close(opened)
            raise
        return FileJournal(
            run_id=run_id,
            fd=fd,
            lock_fd=lock_fd,
            mark_fd=mark_fd,
            directory=self.directory,
            last_seq=records[-1].seq,
            truncate_to=complete_end if torn else None,
            fresh=False,
            claim=claim,
        )

    async def load(self, run_id: str) -> list[Record]:
        path = self.journal_path(run_id)
        return await anyio.to_thread.run_sync(_load_path, path, run_id)

    async def list(self) -> list[RunSummary]:
        return await anyio.to_thread.run_sync(self._list_sync)

    async def truncation(self, run_id: str) -> JournalTruncatedError | None:
        return await anyio.to_thread.run_sync(self._truncation_sync, run_id)

    def _truncation_sync(self, run_id: str) -> JournalTruncatedError | None:
        _, problem = self._load_checked(run_id)
        return problem

    def _load_checked(self, run_id: str) -> tuple[list[Record], JournalTruncatedError | None]:
        mark_path = self.mark_path(run_id)
        # The mark first: it never leads the journal, so a run being appended to is never seen as cut short.
        mark = read_mark(mark_path)
        records = _load_path(self.journal_path(run_id), run_id)
        return records, mark_problem(run_id, records, mark, name=mark_path.name)

    async def delete(self, run_id: str) -> None:
        path = self.journal_path(run_id)
        if not self.directory.is_dir():
            return
        lock_path = self.directory / f"{run_id}{_LOCK_SUFFIX}"
        # Deleting a run a live writer holds would lose what it appends next, so refuse like a second writer.
        lock_fd = _acquire_lock(lock_path, run_id)
        try:
            for victim in (path, self.mark_path(run_id), self.directory / f"{run_id}{CLAIM_SUFFIX}", lock_path):
                try:
                    victim.unlink()
                except FileNotFoundError:
                    pass
        finally:
            os.close(lock_fd)

    def _ensure_directory(self) -> None:
        if not self.directory.is_dir():
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            # mkdir's mode is filtered by the umask; the runs directory must be private regardless.
            os.chmod(self.directory, 0o700)

    def _list_sync(self) -> list[RunSummary]:
        if not self.directory.is_dir():
            return []
        summaries: list[RunSummary] = []
        for path in self.directory.glob(f"*{_SUFFIX}"):
            run_id = path.name[: -len(_SUFFIX)]
            try:
                mtime = path.lstat().st_mtime
            except OSError:
                continue  # removed since the directory was read
            try:
                validate_run_id(run_id)
                records, problem = self._load_checked(run_id)
                state = fold(records)
            except (JournalError, OSError) as err:
                # Listed, not hidden: an operator must see that a run exists and cannot be read.
                reason = str(err) if isinstance(err, JournalError) else f"unreadable: {err.strerror or err}"
                summaries.append(damaged_summary(run_id, reason, datetime.fromtimestamp(mtime, tz=UTC)))
                continue
            summaries.append(
                run_summary(run_id, records, state, updated=datetime.fromtimestamp(mtime, tz=UTC), problem=problem)
            )
        summaries.sort(key=lambda s: (s.updated, s.run_id), reverse=True)
        return summaries


class FileJournal:
    """One run open for appending; holds the run's lock until `aclose`. Satisfies `Journal`."""

    def __init__(
        self,
        *,
        run_id: str,
        fd: int,
        lock_fd: int,
        mark_fd: int,
        directory: Path,
        last_seq: int,
        truncate_to: int | None,
        fresh: bool,
        claim: tuple[Path, str] | None = None,
    ) -> None:
        self._run_id = run_id
        self._fd: int | None = fd
        self._lock_fd: int | None = lock_fd
        self._mark_fd: int | None = mark_fd
        self._directory = directory
        self._last_seq = last_seq
        self._truncate_to = truncate_to
        self._sync_directory = fresh
        self._failure: str | None = None
        self._claim = claim
        """The claim file and this writer's token: checked before every append."""

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def last_seq(self) -> int:
        return self._last_seq

    async def append(self, record: Record) -> None:
        if self._fd is None:
            raise JournalError(f"journal for run {self._run_id!r} is closed")
        if self._failure is not None:
            raise JournalError(
                f"journal for run {self._run_id!r} stopped accepting records after a failed write "
                f"({self._failure}); close it and open the run again"
            )
        if not check_append(self._run_id, last_seq=self._last_seq, seq=record.seq):
            return
        line = encode_record(record)
        if len(line) > MAX_RECORD_BYTES:
            raise RecordTooLargeError(self._run_id, seq=record.seq, size=len(line), limit=MAX_RECORD_BYTES)
        if self._claim is not None:
            check_claim(*self._claim, self._run_id)
        # The syscalls run inline rather than in a worker thread: the caller awaits durability before doing
        # anything else (that is the point of a write-ahead record), and a thread hop costs a large fraction
        # of an fsync on a fast disk (bench/journal.py measures both).
        fd = self._fd
        try:
            if self._truncate_to is not None:
                os.ftruncate(fd, self._truncate_to)
                self._truncate_to = None
            _write_all(fd, line + b"\n")
            os.fsync(fd)
            if self._sync_directory:
                _fsync_directory(self._directory)
                self._sync_directory = False
            if self._mark_fd is not None:
                # After the record is durable, so the mark never counts a record the journal lacks. Not
                # fsynced per append (it would double an append's cost): a kill keeps it in the page
                # cache, and a power loss can only leave it behind the journal, which is never refused.
                write_mark(self._mark_fd, record.seq, sync=False)
        except OSError as err:
            # A partial line may be on disk, and after a failed fsync the page cache cannot be trusted, so
            # this handle takes no more records; reopening truncates the partial line as a torn tail.
            self._failure = err.strerror or str(err)
            raise JournalError(f"appending record {record.seq} to run {self._run_id!r}: {self._failure}") from err
        self._last_seq = record.seq

    async def aclose(self) -> None:
        fd, self._fd = self._fd, None
        lock_fd, self._lock_fd = self._lock_fd, None
        mark_fd, self._mark_fd = self._mark_fd, None
        if mark_fd is not None:
            # One fsync per run makes a finished run's mark durable; a failure leaves it behind the
            # journal, which is safe, so it does not fail the close.
            with contextlib.suppress(OSError):
                os.fsync(mark_fd)
            os.close(mark_fd)
        if fd is not None:
            os.close(fd)
        if lock_fd is not None:
            # Closing the descriptor releases the flock; the lock file stays so no two writers can ever
            # hold locks on different inodes of the same path.
            os.close(lock_fd)

    async def __aenter__(self) -> FileJournal:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _reclaim_unwritten(path: Path, run_id: str) -> int:
    """The journal a creator killed before its first record was whole, emptied for this create (we hold the lock).

    A SIGKILL between the exclusive create and the meta record's write leaves a file with no complete line:
    nothing in it can be resumed, yet every later create of the run (a job's redelivery) would fail on it.

    Raises:
        JournalExistsError: The file holds a complete record: a real run.
    """
    fd = _open_journal(path, run_id, os.O_RDWR | os.O_APPEND)
    try:
        if b"\n" in _read_all(fd):
            raise JournalExistsError(run_id)
        os.ftruncate(fd, 0)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _fsync_directory(directory: Path) -> None:
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _acquire_lock(lock_path: Path, run_id: str) -> int:
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | _OPEN_FLAGS, 0o600)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise JournalError(f"lock file {lock_path} is a symlink; refusing to follow it") from None
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_pid(fd)
        os.close(fd)
        raise JournalLockedError(run_id, pid=holder) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
        return int(text) if text else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _open_journal(path: Path, run_id: str, flags: int) -> int:
    try:
        fd = os.open(path, flags | _OPEN_FLAGS)
    except FileNotFoundError:
        raise JournalNotFoundError(run_id) from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise JournalError(f"journal {path} is a symlink; refusing to follow it") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise JournalError(f"journal {path} is not a regular file")
    return fd


def _load_path(path: Path, run_id: str) -> list[Record]:
    fd = _open_journal(path, run_id, os.O_RDONLY)
    try:
        records, _, _ = _read_fd(fd, run_id)
    finally:
        os.close(fd)
    return records


def _without_gc(decode: Callable[..., list[Record]], lines: list[bytes], run_id: str) -> list[Record]:
    # Decoding allocates tens of thousands of acyclic objects that all stay alive; the cyclic collector
    # would rescan them over and over (it doubled the load time of a 10,000-record journal). Reference
    # counting still frees everything, and the collector's previous state is restored.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return decode(lines, run_id=run_id)
    finally:
        if enabled:
            gc.enable()


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _read_fd(fd: int, run_id: str) -> tuple[list[Record], int, bool]:
    """Records, the offset just past the last complete line, and whether an unterminated tail follows it."""
    return parse_journal(_read_all(fd), run_id)


def parse_journal(data: bytes, run_id: str) -> tuple[list[Record], int, bool]:
    """Parse a journal file's bytes: records, the end of the last complete line, whether a torn tail follows.

    Raises:
        JournalCorruptError: A complete line is damaged, oversize or out of sequence (names the line).
    """
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the data ends in a newline; otherwise the torn, unterminated tail
    if lines and max(map(len, lines)) > MAX_RECORD_BYTES:
        number = next(n for n, line in enumerate(lines, start=1) if len(line) > MAX_RECORD_BYTES)
        raise JournalCorruptError(
            run_id, f"{len(lines[number - 1])}-byte line is over the {MAX_RECORD_BYTES}-byte record limit", line=number
        )
    records = _without_gc(decode_lines, lines, run_id)
    for number, record in enumerate(records, start=1):
        if record.seq != number:
            raise JournalCorruptError(run_id, f"record seq {record.seq} does not follow seq {number - 1}", line=number)
    check_meta_run_id(records, run_id, where="")
    return records, len(data) - len(tail), bool(tail)
