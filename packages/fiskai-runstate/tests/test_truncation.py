"""A journal cut back past its torn tail (a partial copy, a restore) is refused until forced.

Resuming such a journal would repeat the steps its lost records announced, side effects included. The
file backend keeps the record count in `<run>.hwm` beside the journal; these tests cut the journal the way
a partial copy or a restore does (rewriting the file in place, the mark untouched) and check `open`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fiskai_runstate import FileJournalStore, JournalTruncatedError, Record, encode_record
from fiskai_runstate.high_water import read_mark
from fiskai_runstate.records import TerminalRecord
from fiskai_runstate.testing import InMemoryJournalStore, sample_meta, sample_turn

pytestmark = pytest.mark.anyio

_GO_JOURNAL = (
    b'{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"go-run",'
    b'"created":"2026-07-24T10:00:00.123456789+03:00","fingerprint":{"provider":"anthropic","model":"m"},'
    b'"prompt":"report on ORDERS"}}\n'
    b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":'
    b'{"role":"assistant","content":[{"tool_use":{"id":"toolu_1","name":"stream_info","input":{"stream":"ORDERS"}}}]},'
    b'"stop_reason":"tool_use","in_tokens":1200,"out_tokens":40}}\n'
    b'{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{"tool_use_id":"toolu_1",'
    b'"result":{"tool_use_id":"toolu_1","content":"{}"}}}\n'
    b'{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"suspended"}}\n'
)


async def _write(store: FileJournalStore | InMemoryJournalStore, run_id: str, turns: int) -> list[Record]:
    meta = sample_meta(run_id)
    records = [Record(seq=1, payload=meta)]
    async with await store.create(meta) as journal:
        for iteration in range(turns):
            for record in sample_turn(run_id, seq=journal.last_seq + 1, iteration=iteration):
                await journal.append(record)
                records.append(record)
    return records


def _boundaries(data: bytes) -> list[int]:
    """The offset just past each complete line."""
    return [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]


async def test_a_journal_cut_at_any_record_boundary_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    """Steps:
    1. Write a 10-record run (meta and three tool turns) through the store.
    2. For every record boundary k < 10, and for the same cut followed by half of the next record (a cut
       beyond a torn tail), rewrite the journal in place with only that prefix, the mark untouched.
    3. open refuses naming the run, 10 expected and k found, and the fix; the journal and mark are
       unchanged; load still returns the k records; truncation() and list report it.
    """
    store = FileJournalStore(tmp_path)
    written = await _write(store, "cut", turns=3)
    path = store.journal_path("cut")
    full = path.read_bytes()
    ends = _boundaries(full)
    assert len(ends) == len(written) == 10
    for k, end in enumerate(ends[:-1], start=1):
        for data in (full[:end], full[: end + 25]):
            path.write_bytes(data)
            with pytest.raises(JournalTruncatedError) as caught:
                await store.open("cut")
            error = caught.value
            assert (error.run_id, error.expected, error.found) == ("cut", 10, k)
            message = str(error)
            assert "journal for run 'cut' is truncated" in message
            assert f"counts 10 records but the journal holds {k}" in message
            assert "--force" in message
            assert path.read_bytes() == data
            assert read_mark(store.mark_path("cut")) == 10
            assert await store.load("cut") == written[:k]
            reported = await store.truncation("cut")
            assert reported is not None and str(reported) == message
            (listed,) = await store.list()
            assert (listed.status, listed.truncated, listed.records) == ("truncated", message, k)
    path.write_bytes(full)
    async with await store.open("cut") as journal:
        assert journal.last_seq == 10


async def test_force_accepts_the_cut_journal_and_makes_it_the_new_mark(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    written = await _write(store, "restored", turns=3)
    path = store.journal_path("restored")
    path.write_bytes(path.read_bytes()[: _boundaries(path.read_bytes())[3]])
    async with await store.open("restored", force=True) as journal:
        assert journal.last_seq == 4
        assert read_mark(store.mark_path("restored")) == 4
        again = sample_turn("restored", seq=5, iteration=1)
        for record in again:
            await journal.append(record)
    assert read_mark(store.mark_path("restored")) == 7
    assert await store.load("restored") == [*written[:4], *again]
    assert await store.truncation("restored") is None
    async with await store.open("restored") as journal:
        assert journal.last_seq == 7


async def test_a_torn_tail_alone_is_still_tolerated(tmp_path: Path) -> None:
    """A crash mid-append leaves part of a record the mark never counted: open drops it and continues."""
    store = FileJournalStore(tmp_path)
    written = await _write(store, "torn", turns=1)
    path = store.journal_path("torn")
    with path.open("ab") as f:
        f.write(encode_record(sample_turn("torn", seq=5, iteration=1)[0])[:40])
    assert await store.truncation("torn") is None
    async with await store.open("torn") as journal:
        record = Record(seq=5, payload=TerminalRecord(reason="suspended"))
        await journal.append(record)
    assert await store.load("torn") == [*written, record]
    assert read_mark(store.mark_path("torn")) == 5


async def test_a_mark_behind_the_journal_is_caught_up_not_refused(tmp_path: Path) -> None:
    """A kill between an append and its mark, or an older mark copied with a newer journal, leaves the mark
    behind: not a truncation. open catches the mark up, so cutting that last record off is then refused."""
    store = FileJournalStore(tmp_path)
    await _write(store, "behind", turns=1)
    path = store.journal_path("behind")
    with path.open("ab") as f:
        f.write(encode_record(Record(seq=5, payload=TerminalRecord(reason="error"))) + b"\n")
    assert read_mark(store.mark_path("behind")) == 4
    async with await store.open("behind") as journal:
        assert journal.last_seq == 5
    assert read_mark(store.mark_path("behind")) == 5
    path.write_bytes(path.read_bytes()[: _boundaries(path.read_bytes())[3]])
    with pytest.raises(JournalTruncatedError, match="counts 5 records but the journal holds 4"):
        await store.open("behind")


async def test_a_fiskai_journal_that_lost_its_mark_is_refused_until_forced(tmp_path: Path) -> None:
    """A journal copied without its mark cannot be checked; the fix is named, and force writes a new mark."""
    store = FileJournalStore(tmp_path)
    await _write(store, "copied", turns=1)
    store.mark_path("copied").unlink()
    with pytest.raises(JournalTruncatedError) as caught:
        await store.open("copied")
    assert (caught.value.expected, caught.value.found) == (None, 4)
    assert "copied.hwm is missing" in str(caught.value)
    assert "copy copied.hwm along with the journal" in str(caught.value)
    assert not store.mark_path("copied").exists()
    async with await store.open("copied", force=True):
        pass
    assert read_mark(store.mark_path("copied")) == 4
    assert await store.truncation("copied") is None


async def test_an_unreadable_mark_is_refused_until_forced(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "scrambled", turns=1)
    store.mark_path("scrambled").write_bytes(b"forty-two and then some more bytes\n")
    with pytest.raises(JournalTruncatedError, match=r"unreadable high-water mark \(scrambled.hwm: it holds"):
        await store.open("scrambled")
    async with await store.open("scrambled", force=True):
        pass
    assert store.mark_path("scrambled").read_bytes() == b"%020d\n" % 4


async def test_a_go_journal_has_no_mark_to_check_and_gains_one_when_resumed(tmp_path: Path) -> None:
    """The Go agent keeps no mark: its journal opens as it always did, and from then on it is protected."""
    store = FileJournalStore(tmp_path)
    path = store.journal_path("go-run")
    path.write_bytes(_GO_JOURNAL)
    assert await store.truncation("go-run") is None
    async with await store.open("go-run") as journal:
        assert journal.last_seq == 4
    assert read_mark(store.mark_path("go-run")) == 4
    path.write_bytes(_GO_JOURNAL[: _boundaries(_GO_JOURNAL)[1]])
    with pytest.raises(JournalTruncatedError, match="counts 4 records but the journal holds 2"):
        await store.open("go-run")


async def test_create_starts_a_fresh_mark_over_a_stale_one(tmp_path: Path) -> None:
    """A mark left behind by a run whose journal was removed by hand never counts against a new run."""
    store = FileJournalStore(tmp_path)
    await _write(store, "again", turns=3)
    store.journal_path("again").unlink()
    await _write(store, "again", turns=0)
    assert read_mark(store.mark_path("again")) == 1
    async with await store.open("again") as journal:
        assert journal.last_seq == 1


async def test_delete_removes_the_mark(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "gone", turns=1)
    await store.delete("gone")
    assert sorted(os.listdir(tmp_path)) == []


async def test_the_mark_is_written_after_each_durable_append(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    async with await store.create(sample_meta("counted")) as journal:
        assert read_mark(store.mark_path("counted")) == 1
        for record in sample_turn("counted", seq=2, iteration=0):
            await journal.append(record)
            assert read_mark(store.mark_path("counted")) == record.seq


async def test_the_in_memory_store_refuses_a_cut_run_too(tmp_path: Path) -> None:
    store = InMemoryJournalStore()
    written = await _write(store, "memory", turns=2)
    del store.raw_lines("memory")[4:]
    with pytest.raises(JournalTruncatedError, match="counts 7 records but the journal holds 4"):
        await store.open("memory")
    (listed,) = await store.list()
    assert listed.status == "truncated"
    async with await store.open("memory", force=True) as journal:
        assert journal.last_seq == 4
    assert await store.load("memory") == written[:4]
    assert await store.truncation("memory") is None
