"""The `Store` / `Journal` seam: where a run's records live.

A run is an append-only record stream. A `Store` creates, opens, loads, lists and deletes runs; a
`Journal` is one run held open for appending by exactly one writer. Backends: `FileJournalStore`
(`fiskai_runstate.file`), `JetStreamJournalStore` (`fiskai_runstate.jetstream`, extra `nats`) and
`InMemoryJournalStore` (`fiskai_runstate.testing`); every one passes the contract suite in
`fiskai_runstate.testing`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final, Protocol

from .errors import InvalidRunIdError, JournalCorruptError, JournalTruncatedError, SequenceGapError
from .records import MetaRecord, Record

if TYPE_CHECKING:
    from .state import RunState

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
    """The terminal reason, or `open`; `truncated` when the journal holds fewer records than its mark."""
    updated: datetime
    """When the run was last written (timezone-aware)."""
    prompt: str
    created: str
    records: int
    """How many records the journal holds."""
    damaged: str = ""
    """Why the journal cannot be read (status `damaged`); empty for a readable one."""
    truncated: str = ""
    """Why the journal may be cut short (status `truncated`: a resume needs `force`); empty when it is not."""
    previous: str = ""
    """The session this one continues (a chat's `/clear` rotated from it); empty for a first session."""
    agent: str = ""
    """The agent identity its meta record names (empty before schema version 6)."""
    caller: str = ""
    """Who asked for it, as its meta record names them (empty for the local operator)."""


def run_summary(
    run_id: str, records: Sequence[Record], state: RunState, *, updated: datetime, problem: object = None
) -> RunSummary:
    """The `list` line of a readable journal; `problem` is why it may be cut short (status `truncated`)."""
    return RunSummary(
        run_id=run_id,
        model=state.fingerprint.model,
        status=state.status if problem is None else "truncated",
        updated=updated,
        prompt=state.prompt,
        created=state.created,
        records=len(records),
        previous=state.previous,
        agent=state.agent,
        caller=state.caller,
        truncated=str(problem) if problem is not None else "",
    )


def damaged_summary(run_id: str, reason: str, updated: datetime) -> RunSummary:
    """The `list` line of a journal that cannot be read: shown as `damaged` with why, never hidden."""
    return RunSummary(
        run_id=run_id, model="", status="damaged", updated=updated, prompt="", created="", records=0, damaged=reason
    )


def check_meta_run_id(records: Sequence[Record], run_id: str, *, where: str) -> None:
    """Refuse a journal whose meta record names another run than the one it is stored under.

    A renamed or copied journal would otherwise be shown, resumed and appended to under the wrong id.

    Raises:
        JournalCorruptError: the meta record's run id differs (names both).
    """
    meta = records[0].payload if records else None
    if isinstance(meta, MetaRecord) and meta.run_id != run_id:
        raise JournalCorruptError(
            run_id,
            f"its meta record belongs to run {meta.run_id!r}; the journal was renamed or copied "
            f"(store it as {meta.run_id!r} again, or remove it)",
            line=1 if not where else None,
            where=where,
        )


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
    `JournalLockedError`, `JournalCorruptError` (with `JournalVersionError`), `JournalTruncatedError`, all
    `JournalError`s.
    """

    async def create(self, meta: MetaRecord) -> Journal:
        """Create a run and write its meta record as seq 1; the returned journal holds the run."""
        ...

    async def open(self, run_id: str, *, force: bool = False) -> Journal:
        """Open an existing run for appending after its last durable record.

        A backend that keeps a high-water mark raises `JournalTruncatedError` when the journal holds fewer
        records than the mark counts (or a fiskai journal lost its mark): appending after the cut would
        repeat the lost steps. `force` opens it anyway and makes what it holds the new mark.
        """
        ...

    async def load(self, run_id: str) -> list[Record]:
        """Every durable record of a run, in sequence order (a truncated journal loads what it holds)."""
        ...

    async def truncation(self, run_id: str) -> JournalTruncatedError | None:
        """The error `open` would raise for a journal cut short, or None (always None without a mark)."""
        ...

    async def list(self) -> list[RunSummary]:
        """Every readable run, most recently updated first; unreadable ones are skipped."""
        ...

    async def delete(self, run_id: str) -> None:
        """Remove a run; deleting a missing run is not an error."""
        ...
