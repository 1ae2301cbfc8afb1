"""The in-memory journal store: a working `Store` for tests, shipped through `fiskai_runstate.testing`."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from ._codec import decode_record, encode_record
from .claims import new_owner
from .errors import (
    JournalClaimedError,
    JournalError,
    JournalExistsError,
    JournalLockedError,
    JournalNotFoundError,
    JournalTruncatedError,
    RecordTooLargeError,
)
from .high_water import truncated
from .records import MAX_RECORD_BYTES, MetaRecord, Record
from .state import fold
from .store import RunSummary, check_append, check_meta_run_id, damaged_summary, run_summary, validate_run_id

__all__ = ["InMemoryJournal", "InMemoryJournalStore"]


class InMemoryJournalStore:
    """A `Store` in a dict, holding encoded lines so it round-trips through the real codec.

    One writer per run per store instance: a second `open` of a run that is open raises
    `JournalLockedError` naming this process, as the file backend does. It keeps a high-water mark per run
    like the file backend, so a test that cuts `raw_lines` back sees `open` refuse the run.

    Claims work as the file backend's (`fiskai_runstate.claims`): `claim` gives the run a fresh owner token,
    `create` and `open` take one for the new writer, and a writer whose token no longer holds the run raises
    `JournalClaimedError` at its next append without writing. As with the file's lock, the claimed writer
    keeps the run until it closes, so the claimant's `open` is refused (`JournalLockedError`) until then.
    """

    __test__ = False

    def __init__(self) -> None:
        self._runs: dict[str, list[bytes]] = {}
        self._updated: dict[str, datetime] = {}
        self._open: set[str] = set()
        self._marks: dict[str, int] = {}
        self._owners: dict[str, str] = {}
        """The token holding each run (the file backend's `<run>.claim`)."""

    async def claim(self, run_id: str) -> str:
        """Take the run over: its current writer stops at its next append (see `fiskai_runstate.claims`)."""
        owner = new_owner()
        self._owners[validate_run_id(run_id)] = owner
        return owner

    async def create(self, meta: MetaRecord) -> InMemoryJournal:
        run_id = validate_run_id(meta.run_id)
        if run_id in self._runs:
            raise JournalExistsError(run_id)
        self._lock(run_id)
        self._runs[run_id] = []
        journal = InMemoryJournal(self, run_id, last_seq=0, owner=self._claimed(run_id))
        await journal.append(Record(seq=1, payload=meta))
        return journal

    async def open(self, run_id: str, *, force: bool = False) -> InMemoryJournal:
        validate_run_id(run_id)
        if run_id not in self._runs:
            raise JournalNotFoundError(run_id)
        problem = self._truncation(run_id)
        if problem is not None and not force:
            raise problem
        self._lock(run_id)
        count = len(self._runs[run_id])
        self._marks[run_id] = count
        return InMemoryJournal(self, run_id, last_seq=count, owner=self._claimed(run_id))

    async def truncation(self, run_id: str) -> JournalTruncatedError | None:
        validate_run_id(run_id)
        if run_id not in self._runs:
            raise JournalNotFoundError(run_id)
        return self._truncation(run_id)

    def _truncation(self, run_id: str) -> JournalTruncatedError | None:
        found = len(self._runs[run_id])
        return truncated(run_id, expected=self._marks.get(run_id, 0), found=found, mark="(in memory)")

    async def load(self, run_id: str) -> list[Record]:
        validate_run_id(run_id)
        lines = self._runs.get(run_id)
        if lines is None:
            raise JournalNotFoundError(run_id)
        records = [decode_record(line, run_id=run_id, line_no=n) for n, line in enumerate(lines, start=1)]
        check_meta_run_id(records, run_id, where="")
        return records

    async def list(self) -> list[RunSummary]:
        out: list[RunSummary] = []
        for run_id in list(self._runs):
            try:
                records = await self.load(run_id)
                state = fold(records)
            except JournalError as err:
                out.append(damaged_summary(run_id, str(err), self._updated[run_id]))
                continue
            problem = self._truncation(run_id)
            out.append(run_summary(run_id, records, state, updated=self._updated[run_id], problem=problem))
        out.sort(key=lambda s: (s.updated, s.run_id), reverse=True)
        return out

    async def delete(self, run_id: str) -> None:
        validate_run_id(run_id)
        if run_id in self._open:
            raise JournalLockedError(run_id, pid=os.getpid())
        self._runs.pop(run_id, None)
        self._updated.pop(run_id, None)
        self._marks.pop(run_id, None)
        self._owners.pop(run_id, None)

    def raw_lines(self, run_id: str) -> list[bytes]:
        """The stored lines of a run, for tests that inspect or damage them."""
        return self._runs[run_id]

    def _lock(self, run_id: str) -> None:
        if run_id in self._open:
            raise JournalLockedError(run_id, pid=os.getpid())
        self._open.add(run_id)

    def _claimed(self, run_id: str) -> str:
        """A fresh writer's token, taken under the run's lock."""
        owner = new_owner()
        self._owners[run_id] = owner
        return owner

    def _check_claim(self, run_id: str, owner: str) -> None:
        holder = self._owners.get(run_id)
        if holder is not None and holder != owner:
            raise JournalClaimedError(run_id)

    def _write(self, run_id: str, line: bytes) -> None:
        lines = self._runs[run_id]
        lines.append(line)
        self._marks[run_id] = len(lines)
        self._updated[run_id] = datetime.now(UTC)

    def _release(self, run_id: str) -> None:
        self._open.discard(run_id)


class InMemoryJournal:
    """A run of an `InMemoryJournalStore` open for appending. Satisfies `Journal`."""

    __test__ = False

    def __init__(self, store: InMemoryJournalStore, run_id: str, *, last_seq: int, owner: str) -> None:
        self._store = store
        self._owner = owner
        self._run_id = run_id
        self._last_seq = last_seq
        self._closed = False

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def last_seq(self) -> int:
        return self._last_seq

    async def append(self, record: Record) -> None:
        if self._closed:
            raise JournalError(f"journal for run {self._run_id!r} is closed")
        if not check_append(self._run_id, last_seq=self._last_seq, seq=record.seq):
            return
        line = encode_record(record)
        if len(line) > MAX_RECORD_BYTES:
            raise RecordTooLargeError(self._run_id, seq=record.seq, size=len(line), limit=MAX_RECORD_BYTES)
        self._store._check_claim(self._run_id, self._owner)  # pyright: ignore[reportPrivateUsage]
        self._store._write(self._run_id, line)  # pyright: ignore[reportPrivateUsage]
        self._last_seq = record.seq

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._store._release(self._run_id)  # pyright: ignore[reportPrivateUsage]

    async def __aenter__(self) -> InMemoryJournal:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
