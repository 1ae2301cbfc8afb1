"""The `Store` / `Journal` seam: where a run's records live.

A run is an append-only record stream. A `Store` creates, opens, loads, lists and deletes runs; a
`Journal` is one run held open for appending by exactly one writer. Backends: `FileJournalStore`
(`fiskai_runstate.file`), `JetStreamJournalStore` (`fiskai_runstate.jetstream`, extra `nats`) and
`InMemoryJournalStore` (`fiskai_runstate.testing`); every one passes the contract suite in
`fiskai_runstate.testing`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Protocol

from .errors import InvalidRunIdError, SequenceGapError
from .records import MetaRecord, Record

__all__ = ["MAX_RUN_ID_BYTES", "Journal", "RunSummary", "Store", "check_append", "validate_run_id"]

MAX_RUN_ID_BYTES: Final = 128
_RUN_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def validate_run_id(run_id: str) -> str:
    """Check a run id is safe as a file name and a NATS subject token.

    Args:
        run_id: The candidate id.

    Returns:
        The id, unchanged.

    Raises:
        InvalidRunIdError: It is empty, too long, or has a character outside `[A-Za-z0-9_-]` (or starts
            with `-` or `_`), which rules out path traversal and subject wildcards.
    """
    if len(run_id.encode()) > MAX_RUN_ID_BYTES or _RUN_ID.fullmatch(run_id) is None:
        raise InvalidRunIdError(run_id)
    return run_id


def check_append(run_id: str, *, last_seq: int, seq: int) -> bool:
    """The append rule every backend applies.

    Args:
        run_id: The run, for the error message.
        last_seq: The highest durable sequence number.
        seq: The sequence number of the record being appended.

    Returns:
        True when the record must be written; False when it is already durable (`seq <= last_seq`), so a
        writer that re-sends a record after a lost acknowledgement or a resume is idempotent.

    Raises:
        SequenceGapError: `seq` skips ahead of `last_seq + 1`.
    """
    if seq <= last_seq:
        return False
    if seq > last_seq + 1:
        raise SequenceGapError(run_id, seq=seq, last_seq=last_seq)
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSummary:
    """One line of `fiskai session list`."""

    run_id: str
    model: str
    status: str
    """The terminal reason, or `open`."""
    updated: datetime
    """When the run was last written (timezone-aware)."""
    prompt: str
    created: str
    records: int
    """How many records the journal holds."""
    damaged: str = ""
    """Why the journal cannot be read (status `damaged`); empty for a readable one."""


class Journal(Protocol):
    """One run, open for appending by a single writer.

    Contract:
    - `append` returns only once the record is durable (fsynced, or acknowledged by the server); the
      caller may then act on it, for instance run the tool a tool_intent record announces.
    - `append` follows `check_append`: a sequence number at or below `last_seq` is an idempotent no-op,
      the next one is written, a gap raises `SequenceGapError`.
    - A second writer on the same run is refused: `JournalLockedError` at open (file and in-memory
      backends) or at its first conflicting append (JetStream), and nothing the first wrote is touched.
    - Calls are made from one task at a time; a journal is not shared between concurrent tasks.
    - `aclose` is idempotent and may be called during teardown after a failed append.
    """

    @property
    def run_id(self) -> str:
        """The run this journal appends to."""
        ...

    @property
    def last_seq(self) -> int:
        """The highest durable sequence number."""
        ...

    async def append(self, record: Record) -> None:
        """Write one record durably (see the class contract)."""
        ...

    async def aclose(self) -> None:
        """Release the run (the lock, for backends that hold one)."""
        ...

    async def __aenter__(self) -> Journal:
        """`async with await store.open(run_id) as journal:` closes the journal on the way out."""
        ...

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the journal."""
        ...


class Store(Protocol):
    """Where runs live. `load`, `list` and `delete` take no lock, so an operator can inspect a live run.

    Errors: `InvalidRunIdError` for a bad id, `JournalNotFoundError`, `JournalExistsError`,
    `JournalLockedError`, `JournalCorruptError` (with `JournalVersionError`), all `JournalError`s.
    """

    async def create(self, meta: MetaRecord) -> Journal:
        """Create a run and write its meta record as seq 1; the returned journal holds the run."""
        ...

    async def open(self, run_id: str) -> Journal:
        """Open an existing run for appending after its last durable record."""
        ...

    async def load(self, run_id: str) -> list[Record]:
        """Every durable record of a run, in sequence order."""
        ...

    async def list(self) -> list[RunSummary]:
        """Every readable run, most recently updated first; unreadable ones are skipped."""
        ...

    async def delete(self, run_id: str) -> None:
        """Remove a run; deleting a missing run is not an error."""
        ...
