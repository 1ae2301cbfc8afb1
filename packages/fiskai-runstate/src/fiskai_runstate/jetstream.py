"""The JetStream backend (extra `nats`): every run in one stream, one subject per record.

Subjects: the meta record at `<prefix>.<run>._meta`, record n > 1 at `<prefix>.<run>.<n>`, a run's records
under `<prefix>.<run>.>`. The stream is never created here; it must exist with one message per subject,
discard-new per subject and no age limit, so a record can never be replaced or expire:

    nats stream add RUNS --subjects 'runs.>' --max-msgs-per-subject=1 --discard=new --discard-per-subject

Two writers cannot interleave: each append carries the expected last sequence of the run's subjects
(`Nats-Expected-Last-Subject-Sequence` filtered by the run wildcard), so a writer whose view is stale is
refused by the server, and is told the run is held by another writer. There is no lock, so opening a
run twice succeeds; the loser finds out at its first append, before anything of the winner's is touched.
A lost acknowledgement is resolved through the message id (`Nats-Msg-Id: <nonce>-<seq>`): the record that
is already there is adopted if it is ours. This is the only module that imports nats.

No high-water mark is kept (`truncation` is always None, `force` changes nothing): every way to cut a run's
tail on the server (`nats stream rmm`, a per-subject purge, restoring an older snapshot) would remove a mark
kept in the same stream as well, and one kept elsewhere is infrastructure the operator would have to create.
A record missing from the middle is refused by `load`; a writer whose run is cut back while it is open is
refused at its next append by the expected-last-sequence fence (`JournalTruncatedError`). A run cut back
while no writer has it open resumes from what is left.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Final, TypeVar

try:
    import nats.errors
    from nats.aio.client import Client as NatsClient
    from nats.js.api import DeliverPolicy, DiscardPolicy, RawStreamMsg
    from nats.js.client import JetStreamContext
    from nats.js.errors import APIError, NotFoundError
except ImportError as import_error:
    raise ImportError(
        "The JetStream journal backend needs `nats-py`: install `fiskai-runstate[nats]`."
    ) from import_error

from ._codec import decode_record, encode_record
from .errors import (
    JournalClaimedError,
    JournalCorruptError,
    JournalError,
    JournalExistsError,
    JournalLockedError,
    JournalNotFoundError,
    JournalTruncatedError,
    RecordTooLargeError,
)
from .records import MAX_RECORD_BYTES, MetaRecord, Record
from .state import fold
from .store import RunSummary, check_append, check_meta_run_id, damaged_summary, run_summary, validate_run_id

__all__ = ["JetStreamJournal", "JetStreamJournalStore", "StreamConfigError"]

_T = TypeVar("_T")
_META: Final = "_meta"
_CLAIM: Final = "_claim"
_OP_TIMEOUT: Final = 15.0
_FETCH_WAIT: Final = 5.0
_WRONG_LAST_SEQUENCE: Final = 10071
_SUBJECT_FULL: Final = 10077
# Headers and protocol framing share the server's max_payload with the record itself.
_HEADER_ALLOWANCE: Final = 512


class StreamConfigError(JournalError):
    """The stream is missing or configured so records could be replaced, dropped or expired."""


class JetStreamJournalStore:
    """Runs in one JetStream stream. Satisfies `fiskai_runstate.store.Store`.

    Construct with `bind`; the NATS connection is borrowed and never closed here.
    """

    def __init__(self, js: JetStreamContext, *, stream: str, prefix: str, max_payload: int) -> None:
        """Use `bind`, which checks the stream; this constructor trusts its arguments."""
        self._js = js
        self.stream = stream
        self.prefix = prefix
        self._limit = min(MAX_RECORD_BYTES, max_payload - _HEADER_ALLOWANCE)

    @classmethod
    async def bind(cls, nc: NatsClient, stream: str) -> JetStreamJournalStore:
        """Check the stream exists and fits the journal, and derive the subject prefix from it.

        Args:
            nc: A connected NATS client (borrowed).
            stream: The stream name.

        Returns:
            The store.

        Raises:
            StreamConfigError: The stream is missing or misconfigured; the message says how to fix it.
            JournalError: The server could not be asked.
        """
        js = nc.jetstream(timeout=_OP_TIMEOUT)  # pyright: ignore[reportUnknownMemberType]
        try:
            info = await js.stream_info(stream)
        except NotFoundError:
            raise StreamConfigError(
                f"jetstream session: stream {stream!r} does not exist; create it first, e.g. `nats stream add "
                f"{stream} --subjects '<prefix>.>' --max-msgs-per-subject=1 --discard=new --discard-per-subject` "
                "(choose any single-token <prefix>)"
            ) from None
        except (nats.errors.Error, TimeoutError) as err:
            raise JournalError(f"jetstream session: reading stream {stream!r}: {err}") from err
        config = info.config
        problems: list[str] = []
        if config.max_msgs_per_subject != 1:
            problems.append("--max-msgs-per-subject=1")
        if config.discard != DiscardPolicy.NEW or not config.discard_new_per_subject:
            problems.append("--discard=new --discard-per-subject")
        if config.max_age:
            problems.append("--max-age=0 (records must not expire)")
        if config.max_msg_size is not None and 0 < config.max_msg_size < 4096:
            problems.append("--max-msg-size of at least 4096 bytes (or unlimited)")
        if problems:
            raise StreamConfigError(
                f"jetstream session: stream {stream!r} cannot hold run journals safely; it needs " + ", ".join(problems)
            )
        prefix = _prefix(stream, config.subjects or [])
        return cls(js, stream=stream, prefix=prefix, max_payload=nc.max_payload)

    def _wildcard(self, run_id: str) -> str:
        return f"{self.prefix}.{run_id}.>"

    def subject(self, run_id: str, seq: int) -> str:
        """The subject record `seq` of a run lives on."""
        return f"{self.prefix}.{run_id}.{_META if seq == 1 else seq}"

    async def _last(self, subject: str) -> RawStreamMsg | None:
        try:
            return await self._js.get_last_msg(self.stream, subject)
        except NotFoundError:
            return None

    async def claim(self, run_id: str) -> str:
        """Take the run over (`fiskai_runstate.claims`): a message on `<prefix>.<run>._claim.<token>`.

        It advances the run's subjects, so the writer holding the run is refused at its next append by the same
        expected-last-sequence fence that keeps two writers apart, and is told the run was taken over.
        """
        validate_run_id(run_id)
        owner = "c" + secrets.token_hex(16)
        subject = f"{self.prefix}.{run_id}.{_CLAIM}.{owner}"
        await _guard(run_id, "claiming", self._js.publish(subject, b"", timeout=_OP_TIMEOUT, stream=self.stream))
        return owner

    async def _last_record_seq(self, run_id: str) -> int:
        """The highest record number of a run whose newest message is a claim."""
        info = await _guard(
            run_id, "opening", self._js.stream_info(self.stream, subjects_filter=self._wildcard(run_id))
        )
        return max((_record_seq(subject) for subject in info.state.subjects or {}), default=0)

    async def create(self, meta: MetaRecord) -> JetStreamJournal:
        run_id = validate_run_id(meta.run_id)
        if await _guard(run_id, "creating", self._last(self.subject(run_id, 1))) is not None:
            raise JournalExistsError(run_id)
        journal = JetStreamJournal(self, run_id, last_seq=0, tail=0)
        await journal.append(Record(seq=1, payload=meta))
        return journal

    async def open(self, run_id: str, *, force: bool = False) -> JetStreamJournal:
        validate_run_id(run_id)
        last = await _guard(run_id, "opening", self._last(self._wildcard(run_id)))
        if last is None or last.subject is None or last.seq is None:
            raise JournalNotFoundError(run_id)
        last_seq = await self._last_record_seq(run_id) if _is_claim(last.subject) else _record_seq(last.subject)
        if last_seq < 1:
            raise JournalCorruptError(run_id, "is not a record subject", where=f"subject {last.subject!r}")
        return JetStreamJournal(self, run_id, last_seq=last_seq, tail=last.seq)

    async def load(self, run_id: str) -> list[Record]:
        validate_run_id(run_id)
        messages = await _guard(run_id, "loading", self._messages(run_id))
        records: list[Record] = []
        for subject, data in messages:
            if _is_claim(subject):
                continue
            record = decode_record(data, run_id=run_id, where=f"record {subject!r}")
            if subject != self.subject(run_id, record.seq):
                raise JournalCorruptError(run_id, f"holds seq {record.seq}", where=f"record {subject!r}")
            records.append(record)
        records.sort(key=lambda r: r.seq)
        for expected, record in enumerate(records, start=1):
            if record.seq != expected:
                raise JournalCorruptError(run_id, f"record seq {expected} is missing", where=f"run {run_id!r}")
        check_meta_run_id(records, run_id, where=f"record {self.subject(run_id, 1)!r}")
        return records

    async def truncation(self, run_id: str) -> JournalTruncatedError | None:
        validate_run_id(run_id)
        if await _guard(run_id, "checking", self._last(self.subject(run_id, 1))) is None:
            raise JournalNotFoundError(run_id)
        return None

    async def _messages(self, run_id: str) -> list[tuple[str, bytes]]:
        info = await self._js.stream_info(self.stream, subjects_filter=self._wildcard(run_id))
        subjects = info.state.subjects or {}
        if self.subject(run_id, 1) not in subjects:
            raise JournalNotFoundError(run_id)
        count = sum(subjects.values())
        # One ordered consumer streams the run's records in stream order, instead of a request per record
        # (a 10,000-record run would take seconds that way). Records appended after the count was taken
        # come later in the stream, so the first `count` messages are the run as it was counted.
        sub = await self._js.subscribe(
            self._wildcard(run_id), stream=self.stream, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL
        )
        messages: list[tuple[str, bytes]] = []
        try:
            while len(messages) < count:
                try:
                    message = await sub.next_msg(timeout=_FETCH_WAIT)
                except nats.errors.TimeoutError:
                    raise JournalError(
                        f"jetstream session: loading run {run_id!r}: {len(messages)} of {count} records arrived "
                        f"within {_FETCH_WAIT:.0f} s"
                    ) from None
                messages.append((message.subject, message.data))
        finally:
            await sub.unsubscribe()
        return messages

    async def list(self) -> list[RunSummary]:
        pending = self._js.stream_info(self.stream, subjects_filter=f"{self.prefix}.*.{_META}")
        info = await _guard("*", "listing", pending)
        summaries: list[RunSummary] = []
        for subject in info.state.subjects or {}:
            run_id = subject[len(self.prefix) + 1 : -len(_META) - 1]
            try:
                records = await self.load(run_id)
                state = fold(records)
                last = await _guard(run_id, "listing", self._last(self._wildcard(run_id)))
            except JournalError as err:
                # Listed, not hidden: an operator must see that a run exists and cannot be read.
                summaries.append(damaged_summary(run_id, str(err), datetime.now(UTC)))
                continue
            updated = last.time if last is not None and last.time is not None else datetime.now(UTC)
            summaries.append(run_summary(run_id, records, state, updated=updated))
        summaries.sort(key=lambda s: (s.updated, s.run_id), reverse=True)
        return summaries

    async def delete(self, run_id: str) -> None:
        validate_run_id(run_id)
        await _guard(run_id, "deleting", self._js.purge_stream(self.stream, subject=self._wildcard(run_id)))


class JetStreamJournal:
    """A run open for appending. Satisfies `Journal`; holds no lock (the fence is per append)."""

    def __init__(self, store: JetStreamJournalStore, run_id: str, *, last_seq: int, tail: int) -> None:
        self._store = store
        self._run_id = run_id
        self._last_seq = last_seq
        self._tail = tail
        self._nonce = secrets.token_hex(16)

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def last_seq(self) -> int:
        return self._last_seq

    async def append(self, record: Record) -> None:
        if not check_append(self._run_id, last_seq=self._last_seq, seq=record.seq):
            return
        store = self._store
        line = encode_record(record)
        if len(line) > store._limit:  # pyright: ignore[reportPrivateUsage]
            raise RecordTooLargeError(self._run_id, seq=record.seq, size=len(line), limit=store._limit)  # pyright: ignore[reportPrivateUsage]
        subject = store.subject(self._run_id, record.seq)
        msg_id = f"{self._nonce}-{record.seq}"
        headers = {
            "Nats-Msg-Id": msg_id,
            "Nats-Expected-Last-Subject-Sequence": str(self._tail),
            "Nats-Expected-Last-Subject-Sequence-Subject": store._wildcard(self._run_id),  # pyright: ignore[reportPrivateUsage]
        }
        js = store._js  # pyright: ignore[reportPrivateUsage]
        try:
            ack = await js.publish(subject, line, timeout=_OP_TIMEOUT, stream=store.stream, headers=headers)
        except APIError as err:
            if err.err_code not in (_WRONG_LAST_SEQUENCE, _SUBJECT_FULL):
                raise JournalError(
                    f"jetstream session: appending record {record.seq} of run {self._run_id!r}: {err}"
                ) from err
            await self._resolve_conflict(record.seq, subject, msg_id)
            return
        except (nats.errors.Error, TimeoutError) as err:
            raise JournalError(
                f"jetstream session: appending record {record.seq} of run {self._run_id!r}: {err}"
            ) from err
        self._tail = ack.seq
        self._last_seq = record.seq

    async def _resolve_conflict(self, seq: int, subject: str, msg_id: str) -> None:
        store = self._store
        existing = await _guard(self._run_id, "checking", store._last(subject))  # pyright: ignore[reportPrivateUsage]
        owner = _msg_id(existing)
        if existing is not None and existing.seq is not None and owner == msg_id:
            # Our own record, stored before an acknowledgement was lost: adopt it.
            self._tail = existing.seq
            self._last_seq = seq
            return
        if seq == 1:
            raise JournalExistsError(self._run_id)
        wildcard = store._wildcard(self._run_id)  # pyright: ignore[reportPrivateUsage]
        latest = await _guard(self._run_id, "checking", store._last(wildcard))  # pyright: ignore[reportPrivateUsage]
        if latest is None or latest.seq is None or latest.seq < self._tail:
            # The run's newest message is older than the last one this writer stored: its tail was removed
            # (`nats stream rmm`, a subject purge), not advanced by a rival.
            found = _record_seq(latest.subject) if latest is not None and latest.subject else 0
            raise JournalTruncatedError(
                self._run_id,
                f"was cut back on stream {store.stream!r} while open: it ends at record {found}, this writer had "
                f"stored up to record {self._last_seq}, so record {seq} was not appended",
                expected=self._last_seq,
                found=found,
                fix=f"restore the removed records before resuming it (`nats stream subjects {store.stream} "
                f"'{wildcard}'` shows what is left): a resume would repeat the lost steps",
            )
        claim = await _guard(self._run_id, "checking", store._last(f"{store.prefix}.{self._run_id}.{_CLAIM}.>"))  # pyright: ignore[reportPrivateUsage]
        if claim is not None and claim.seq is not None and claim.seq > self._tail:
            raise JournalClaimedError(self._run_id)  # claimed since this writer's last record
        raise JournalLockedError(
            self._run_id,
            detail=(
                f"run {self._run_id!r} on stream {store.stream!r} was advanced by another writer, so record {seq} "
                "was safely rejected without overwriting anything; inspect it with `nats stream subjects "
                f"{store.stream} '{store._wildcard(self._run_id)}'`"  # pyright: ignore[reportPrivateUsage]
            ),
        )

    async def aclose(self) -> None:
        # Nothing to release: the connection is borrowed and the fence lives on the server.
        return

    async def __aenter__(self) -> JetStreamJournal:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def _guard(run_id: str, action: str, pending: Awaitable[_T]) -> _T:
    """Await a NATS call, turning its failures into a JournalError naming the operation."""
    try:
        return await pending
    except (nats.errors.Error, TimeoutError) as err:
        raise JournalError(f"jetstream session: {action} run {run_id!r}: {err}") from err


def _is_claim(subject: str) -> bool:
    """Whether a run subject holds a claim (`<prefix>.<run>._claim.<token>`), not a record."""
    parts = subject.split(".")
    return len(parts) >= 2 and parts[-2] == _CLAIM


def _record_seq(subject: str) -> int:
    """The record number a run subject holds (`._meta` is 1); 0 for a subject that is not a record's."""
    token = subject.rsplit(".", 1)[-1]
    return 1 if token == _META else int(token) if token.isdigit() else 0


def _msg_id(message: RawStreamMsg | None) -> str | None:
    if message is None:
        return None
    headers = message.headers  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(headers, dict):
        return None
    value = headers.get("Nats-Msg-Id")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return value if isinstance(value, str) else None


def _prefix(stream: str, subjects: list[str]) -> str:
    wildcards = [s for s in subjects if "*" in s.split(".") or ">" in s.split(".")]
    if len(wildcards) != 1:
        raise StreamConfigError(
            f"jetstream session: stream {stream!r} needs exactly one wildcard subject of the form '<prefix>.>', "
            f"it has {wildcards or 'none'}"
        )
    tokens = wildcards[0].split(".")
    if tokens[-1] != ">" or len(tokens) < 2 or any(t in ("", "*", ">") for t in tokens[:-1]):
        raise StreamConfigError(
            f"jetstream session: stream {stream!r} subject {wildcards[0]!r} must be '<prefix>.>' with a literal prefix"
        )
    return ".".join(tokens[:-1])
