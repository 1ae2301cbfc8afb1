"""The fiskai_runstate exception tree.

Every failure a journal reader or writer raises on purpose derives from `JournalError`, so a caller (the
agent runner, the `fiskai session` command) can turn any of them into one clear message and no traceback.
This is a leaf library, so the tree has its own base rather than fiskai_core's.

    JournalError
    +-- JournalConfigError       a session backend name or `options` block that is not allowed
    +-- InvalidRunIdError        a run id that is not `[A-Za-z0-9][A-Za-z0-9_-]*`, at most 128 bytes
    +-- JournalNotFoundError     no journal for that run id
    +-- JournalExistsError       create() on a run id that already has a journal
    +-- JournalLockedError       another writer holds the run (names its process when known)
    +-- JournalCorruptError      a record that cannot be trusted (names the line or record)
    |   +-- JournalVersionError  written by a newer schema version than this reader knows
    +-- JournalTruncatedError    fewer records than the run's high-water mark counts; `force` overrides
    +-- SequenceGapError         an append that skips a sequence number
    +-- RecordTooLargeError      an encoded record over MAX_RECORD_BYTES
    +-- ResumeError              the run cannot be resumed with the current configuration
        +-- ResumeMismatchError  the fingerprint changed (lists every changed field); `force` overrides
        +-- ProviderChangedError the provider changed; `force` does not apply
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FieldChange",
    "InvalidRunIdError",
    "JournalConfigError",
    "JournalCorruptError",
    "JournalError",
    "JournalExistsError",
    "JournalLockedError",
    "JournalNotFoundError",
    "JournalTruncatedError",
    "JournalVersionError",
    "ProviderChangedError",
    "RecordTooLargeError",
    "ResumeError",
    "ResumeMismatchError",
    "SequenceGapError",
]


class JournalError(Exception):
    """Base of every error the run journal raises on purpose."""


class JournalConfigError(JournalError):
    """A session backend or its `options` block is not allowed; the message names the key and the fix."""


class InvalidRunIdError(JournalError):
    """A run id that is unsafe as a file name or a NATS subject token."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"invalid run id: {run_id!r} (use letters, digits, '-' or '_', at most 128 bytes)")
        self.run_id = run_id


class JournalNotFoundError(JournalError):
    """No journal exists for the run id."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run not found: {run_id!r}")
        self.run_id = run_id


class JournalExistsError(JournalError):
    """A journal already exists for the run id, so it cannot be created again."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run already exists: {run_id!r}")
        self.run_id = run_id


class JournalLockedError(JournalError):
    """Another writer holds the run, so this one must not append to it."""

    def __init__(self, run_id: str, *, pid: int | None = None, detail: str = "") -> None:
        holder = f"process {pid}" if pid is not None else "another process"
        message = f"run {run_id!r} is open in {holder}"
        if detail:
            message = f"{message}: {detail}"
        super().__init__(message)
        self.run_id = run_id
        self.pid = pid


class JournalClaimedError(JournalLockedError):
    """Another writer claimed the run since this one opened it: this writer must stop and write nothing more."""

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id, detail="another worker took it over; this writer stopped before its next record")
        self.args = (f"run {run_id!r} was taken over by another worker; this writer stopped before its next record",)


class JournalCorruptError(JournalError):
    """A stored record cannot be trusted; nothing was changed on disk."""

    def __init__(self, run_id: str, reason: str, *, line: int | None = None, where: str = "") -> None:
        location = f"line {line}" if line is not None else where
        prefix = f"journal for run {run_id!r}"
        if location:
            prefix = f"{prefix}, {location}"
        super().__init__(f"corrupt record sequence: {prefix}: {reason}")
        self.run_id = run_id
        self.line = line
        self.reason = reason


class JournalVersionError(JournalCorruptError):
    """A record was written by a newer schema version than this reader supports."""

    def __init__(self, run_id: str, *, found: int, supported: int, line: int | None = None, where: str = "") -> None:
        super().__init__(
            run_id,
            f"written by schema version {found}, this fiskai reads versions up to {supported}; upgrade fiskai-runstate",
            line=line,
            where=where,
        )
        self.found = found
        self.supported = supported


class JournalTruncatedError(JournalError):
    """The journal may have lost records off its end (a partial copy, a restore); `force` overrides this.

    Resuming such a run would repeat the steps the lost records announced, side effects included. The
    records the journal still holds are sound: `load` returns them, only opening for a resume refuses.
    """

    def __init__(self, run_id: str, reason: str, *, expected: int | None, found: int, fix: str) -> None:
        super().__init__(f"journal for run {run_id!r} {reason}; {fix}")
        self.run_id = run_id
        self.reason = reason
        self.expected = expected
        """Records the high-water mark counts; None when the mark is missing or unreadable."""
        self.found = found
        """Complete records the journal holds."""


class SequenceGapError(JournalError):
    """An append skipped ahead of the next sequence number."""

    def __init__(self, run_id: str, *, seq: int, last_seq: int) -> None:
        super().__init__(f"record seq gap in run {run_id!r}: seq {seq} skips ahead of {last_seq}")
        self.run_id = run_id
        self.seq = seq
        self.last_seq = last_seq


class RecordTooLargeError(JournalError):
    """An encoded record is larger than the journal accepts."""

    def __init__(self, run_id: str, *, seq: int, size: int, limit: int) -> None:
        super().__init__(f"record seq {seq} of run {run_id!r} is {size} bytes, over the {limit}-byte record limit")
        self.run_id = run_id
        self.size = size
        self.limit = limit


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldChange:
    """One fingerprint field that differs between the saved run and the current configuration."""

    field: str
    """The fingerprint field name (`model`, `system_hash`, ...)."""
    old: str | int
    """The value the run was started with."""
    new: str | int
    """The value the current configuration has."""

    def describe(self) -> str:
        """One diff line; hashes are reported as changed, never printed."""
        if self.field == "system_hash":
            return "system prompt: changed"
        if self.field == "tools_hash":
            return "tool set: changed"
        label = "thinking" if self.field == "thinking_mode" else self.field
        return f"{label}: {self.old} -> {self.new}"


class ResumeError(JournalError):
    """The run cannot be resumed with the current configuration."""


class ResumeMismatchError(ResumeError):
    """The configuration changed since the run was saved; `force` overrides this."""

    def __init__(self, run_id: str, changes: tuple[FieldChange, ...]) -> None:
        lines = "\n  ".join(change.describe() for change in changes)
        super().__init__(
            f"cannot resume {run_id!r}, the configuration changed since it was saved:\n  {lines}\n"
            "re-run against the original configuration, or pass --force to continue with the current one"
        )
        self.run_id = run_id
        self.changes = changes


class ProviderChangedError(ResumeError):
    """The provider changed; a run cannot change provider, even with `force`."""

    def __init__(self, run_id: str, *, old: str, new: str) -> None:
        super().__init__(
            f"cannot resume {run_id!r}: it was started with provider {old!r} but the current configuration uses "
            f"{new!r}; a run cannot change provider, and --force does not apply"
        )
        self.run_id = run_id
        self.old = old
        self.new = new
