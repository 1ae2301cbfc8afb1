"""Test support shipped as product code: an in-memory store, sample records, and the backend contract.

`InMemoryJournalStore` is a working `Store` for tests of code that journals (the agent loop). `CONTRACT`
is the backend-agnostic suite every backend must pass; a backend's tests parametrize over it:

    @pytest.mark.parametrize("check", CONTRACT, ids=CONTRACT_IDS)
    async def test_my_store_meets_the_contract(check: ContractCheck) -> None:
        await check.run(make_my_store)

A check raises `ContractViolation` (an AssertionError) with a sentence saying what the backend got wrong.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Final

from ._memory import InMemoryJournal, InMemoryJournalStore
from .errors import (
    InvalidRunIdError,
    JournalExistsError,
    JournalLockedError,
    JournalNotFoundError,
    RecordTooLargeError,
    SequenceGapError,
)
from .fingerprint import Fingerprint
from .records import (
    MAX_RECORD_BYTES,
    AssistantRecord,
    JsonObject,
    MetaRecord,
    Record,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
    args_digest,
    effect_id,
)
from .state import fold
from .store import Store

__all__ = [
    "CONTRACT",
    "CONTRACT_IDS",
    "ContractCheck",
    "ContractViolation",
    "InMemoryJournal",
    "InMemoryJournalStore",
    "StoreFactory",
    "sample_meta",
    "sample_turn",
]

StoreFactory = Callable[[], Awaitable[Store]]
"""Returns a handle on one shared backend: two calls give two handles on the same runs (two "processes")."""


class ContractViolation(AssertionError):
    """A backend broke the `Store`/`Journal` contract."""


SAMPLE_FINGERPRINT: Final = Fingerprint(
    provider="anthropic",
    model="claude-test",
    system_hash="0" * 64,
    tools_hash="1" * 64,
    thinking_mode="off",
    max_tokens=200_000,
    max_iterations=50,
)


def sample_meta(run_id: str, *, prompt: str = "report on ORDERS", model: str = "claude-test") -> MetaRecord:
    """A meta record with a fixed fingerprint (only `model` varies)."""
    fingerprint = Fingerprint(
        provider=SAMPLE_FINGERPRINT.provider,
        model=model,
        system_hash=SAMPLE_FINGERPRINT.system_hash,
        tools_hash=SAMPLE_FINGERPRINT.tools_hash,
        thinking_mode=SAMPLE_FINGERPRINT.thinking_mode,
        max_tokens=SAMPLE_FINGERPRINT.max_tokens,
        max_iterations=SAMPLE_FINGERPRINT.max_iterations,
    )
    return MetaRecord(run_id=run_id, created="2026-07-24T10:00:00.123456+00:00", fingerprint=fingerprint, prompt=prompt)


def sample_turn(run_id: str, *, seq: int, iteration: int, output: str = "ok") -> list[Record]:
    """One model turn with a single tool call: assistant, tool_intent, tool_result (seq, seq+1, seq+2)."""
    use_id = f"toolu_{iteration}"
    arguments: JsonObject = {"stream": "ORDERS", "iteration": iteration}
    message: JsonObject = {
        "role": "assistant",
        "content": [
            {"text": {"text": f"checking iteration {iteration}"}},
            {"tool_use": {"id": use_id, "name": "stream_info", "input": arguments}},
        ],
    }
    result: JsonObject = {"tool_use_id": use_id, "content": f'{{"exit_code":0,"output":"{output}"}}'}
    return [
        Record(
            seq=seq,
            payload=AssistantRecord(
                iteration=iteration, message=message, stop_reason="tool_use", in_tokens=1200, out_tokens=40
            ),
        ),
        Record(
            seq=seq + 1,
            payload=ToolIntentRecord(
                tool_use_id=use_id,
                tool_name="stream_info",
                args_digest=args_digest(arguments),
                effect_id=effect_id(run_id, use_id),
                argv=("nats", "stream", "info", "--", "ORDERS"),
            ),
        ),
        Record(seq=seq + 2, payload=ToolResultRecord(tool_use_id=use_id, result=result)),
    ]


@dataclass(frozen=True, slots=True)
class ContractCheck:
    """One property every backend must have."""

    name: str
    """A sentence naming the property, used as the test id."""
    run: Callable[[StoreFactory], Awaitable[None]]
    """Runs the check against handles from the factory; raises `ContractViolation` on failure."""


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ContractViolation(message)


async def _expect_raises(error: type[BaseException], action: Callable[[], Awaitable[object]], what: str) -> None:
    try:
        await action()
    except error:
        return
    raise ContractViolation(f"{what} did not raise {error.__name__}")


async def _write_run(store: Store, run_id: str, turns: int = 2, *, terminal: bool = True) -> list[Record]:
    meta = sample_meta(run_id)
    journal = await store.create(meta)
    records = [Record(seq=1, payload=meta)]
    try:
        for iteration in range(turns):
            for record in sample_turn(run_id, seq=journal.last_seq + 1, iteration=iteration):
                await journal.append(record)
                records.append(record)
        if terminal:
            end = Record(seq=journal.last_seq + 1, payload=TerminalRecord(reason="completed"))
            await journal.append(end)
            records.append(end)
    finally:
        await journal.aclose()
    return records


async def _round_trip(factory: StoreFactory) -> None:
    store = await factory()
    written = await _write_run(store, "round-trip", turns=2)
    user = Record(
        seq=len(written) + 1, payload=UserRecord(message={"role": "user", "content": [{"text": {"text": "more"}}]})
    )
    journal = await store.open("round-trip")
    try:
        await journal.append(user)
    finally:
        await journal.aclose()
    loaded = await store.load("round-trip")
    _expect(loaded == [*written, user], "load did not return exactly the appended records, in order")
    state = fold(loaded)
    _expect(state.counters.llm_calls == 2 and state.counters.tool_calls == 2, "fold of the loaded run lost records")


async def _create_existing(factory: StoreFactory) -> None:
    store = await factory()
    await _write_run(store, "twice", turns=0)
    await _expect_raises(JournalExistsError, lambda: store.create(sample_meta("twice")), "create of an existing run")
    _expect(len(await store.load("twice")) == 2, "a refused create changed the existing run")


async def _missing(factory: StoreFactory) -> None:
    store = await factory()
    await _expect_raises(JournalNotFoundError, lambda: store.open("nobody"), "open of a missing run")
    await _expect_raises(JournalNotFoundError, lambda: store.load("nobody"), "load of a missing run")
    await store.delete("nobody")


async def _invalid_ids(factory: StoreFactory) -> None:
    store = await factory()
    for bad in ("", "../etc", "a.b", "a*", "a>", "_x", "-x", "a b", "x" * 129):
        await _expect_raises(InvalidRunIdError, lambda bad=bad: store.open(bad), f"open({bad!r})")
        await _expect_raises(InvalidRunIdError, lambda bad=bad: store.load(bad), f"load({bad!r})")
        await _expect_raises(InvalidRunIdError, lambda bad=bad: store.create(sample_meta(bad)), f"create({bad!r})")
        await _expect_raises(InvalidRunIdError, lambda bad=bad: store.delete(bad), f"delete({bad!r})")
    await _write_run(store, "Ok_id-" + "x" * 122, turns=0)


async def _append_rule(factory: StoreFactory) -> None:
    store = await factory()
    journal = await store.create(sample_meta("append-rule"))
    try:
        turn = sample_turn("append-rule", seq=2, iteration=0)
        await journal.append(turn[0])
        await journal.append(turn[0])  # a re-send after a lost acknowledgement is a no-op
        await journal.append(Record(seq=1, payload=sample_meta("append-rule")))
        await _expect_raises(SequenceGapError, lambda: journal.append(turn[2]), "an append that skips a seq")
        _expect(journal.last_seq == 2, f"last_seq is {journal.last_seq} after two durable records, want 2")
        await journal.append(turn[1])
        await journal.append(turn[2])
    finally:
        await journal.aclose()
    loaded = await store.load("append-rule")
    _expect([r.seq for r in loaded] == [1, 2, 3, 4], f"records are {[r.seq for r in loaded]}, want [1, 2, 3, 4]")


async def _reopen(factory: StoreFactory) -> None:
    store = await factory()
    written = await _write_run(store, "reopen", turns=1, terminal=False)
    async with await store.open("reopen") as journal:
        _expect(journal.last_seq == len(written), f"reopened last_seq {journal.last_seq}, want {len(written)}")
        more = sample_turn("reopen", seq=journal.last_seq + 1, iteration=1)
        for record in more:
            await journal.append(record)
    other = await factory()
    loaded = await other.load("reopen")
    _expect(loaded == written + more, "a second handle does not see the reopened run's appends")
    _expect(fold(loaded).next_iteration == 2, "fold after reopen has the wrong next iteration")


async def _second_writer(factory: StoreFactory) -> None:
    first_store, second_store = await factory(), await factory()
    await _write_run(first_store, "contended", turns=0, terminal=False)
    first = await first_store.open("contended")
    try:
        turn = sample_turn("contended", seq=2, iteration=0)
        try:
            second = await second_store.open("contended")
        except JournalLockedError:
            await first.append(turn[0])
        else:
            # Backends without a lock (JetStream) must refuse the loser at its append instead.
            try:
                await first.append(turn[0])
                rival = Record(seq=2, payload=AssistantRecord(iteration=9, message={"role": "assistant"}))
                await _expect_raises(JournalLockedError, lambda: second.append(rival), "a second writer's append")
            finally:
                await second.aclose()
    finally:
        await first.aclose()
    loaded = await first_store.load("contended")
    _expect([r.payload for r in loaded[1:]] == [turn[0].payload], "a second writer changed the run")
    reopened = await second_store.open("contended")
    await reopened.aclose()


async def _load_is_lock_free(factory: StoreFactory) -> None:
    store = await factory()
    journal = await store.create(sample_meta("live"))
    try:
        for record in sample_turn("live", seq=2, iteration=0):
            await journal.append(record)
        reader = await factory()
        _expect(len(await reader.load("live")) == 4, "load of a run open for writing did not see its records")
        _expect(any(s.run_id == "live" for s in await reader.list()), "list hides a run open for writing")
    finally:
        await journal.aclose()


async def _list_and_delete(factory: StoreFactory) -> None:
    store = await factory()
    await _write_run(store, "done-run", turns=1)
    await _write_run(store, "open-run", turns=1, terminal=False)
    summaries = {s.run_id: s for s in await store.list()}
    _expect(set(summaries) >= {"done-run", "open-run"}, f"list returned {sorted(summaries)}")
    _expect(summaries["done-run"].status == "completed", "a completed run is not listed as completed")
    _expect(summaries["open-run"].status == "open", "a run without a terminal record is not listed as open")
    _expect(summaries["open-run"].model == "claude-test", "list does not report the model")
    _expect(summaries["open-run"].records == 4, "list does not count the records")
    _expect(summaries["open-run"].updated.tzinfo is not None, "list times must be timezone-aware")
    await (await store.create(replace(sample_meta("next-run"), previous="open-run"))).aclose()
    listed = {s.run_id: s for s in await store.list()}
    _expect((listed["next-run"].previous, listed["open-run"].previous) == ("open-run", ""), "list loses `previous`")
    await store.delete("next-run")
    await store.delete("done-run")
    await store.delete("done-run")
    await _expect_raises(JournalNotFoundError, lambda: store.load("done-run"), "load after delete")
    _expect("done-run" not in {s.run_id for s in await store.list()}, "a deleted run is still listed")
    await _write_run(store, "done-run", turns=0)


async def _intact_is_not_truncated(factory: StoreFactory) -> None:
    store = await factory()
    written = await _write_run(store, "intact", turns=1, terminal=False)
    _expect(await store.truncation("intact") is None, "an intact run is reported as truncated")
    async with await store.open("intact", force=True) as journal:
        _expect(journal.last_seq == len(written), f"a forced open has last_seq {journal.last_seq}, want {len(written)}")
    _expect(await store.load("intact") == written, "a forced open of an intact run changed its records")
    async with await store.open("intact") as journal:
        await journal.append(Record(seq=len(written) + 1, payload=TerminalRecord(reason="suspended")))
    listed = {s.run_id: s for s in await store.list()}["intact"]
    _expect((listed.status, listed.truncated) == ("suspended", ""), f"an intact run is listed as {listed.status}")
    await _expect_raises(JournalNotFoundError, lambda: store.truncation("nobody"), "truncation of a missing run")


async def _oversize(factory: StoreFactory) -> None:
    store = await factory()
    journal = await store.create(sample_meta("oversize"))
    try:
        huge: JsonObject = {"role": "assistant", "content": [{"text": {"text": "x" * MAX_RECORD_BYTES}}]}
        record = Record(seq=2, payload=AssistantRecord(iteration=0, message=huge))
        await _expect_raises(RecordTooLargeError, lambda: journal.append(record), "an append over the record limit")
        _expect(journal.last_seq == 1, "a refused oversize record advanced last_seq")
    finally:
        await journal.aclose()
    _expect(len(await store.load("oversize")) == 1, "a refused oversize record was stored")


CONTRACT: Final[tuple[ContractCheck, ...]] = (
    ContractCheck("records round-trip in order", _round_trip),
    ContractCheck("create refuses an existing run", _create_existing),
    ContractCheck("missing runs are not found", _missing),
    ContractCheck("unsafe run ids are refused everywhere", _invalid_ids),
    ContractCheck("appends are idempotent and gap-free", _append_rule),
    ContractCheck("a reopened run continues after its last record", _reopen),
    ContractCheck("a second writer cannot interleave", _second_writer),
    ContractCheck("load and list take no lock", _load_is_lock_free),
    ContractCheck("list reports status and delete removes", _list_and_delete),
    ContractCheck("an intact run is not truncated, and force opens it unchanged", _intact_is_not_truncated),
    ContractCheck("oversize records are refused", _oversize),
)
"""The backend-agnostic contract, in the order a failure is easiest to read."""

CONTRACT_IDS: Final = [check.name for check in CONTRACT]
"""Test ids for `pytest.mark.parametrize`."""
