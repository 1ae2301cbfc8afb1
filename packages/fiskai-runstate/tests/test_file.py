"""File backend specifics: location, permissions, locking, symlinks and the torn tail."""

from __future__ import annotations

import os
import resource
import signal
import stat
from pathlib import Path

import pytest

from fiskai_runstate import FileJournalStore, JournalError, Record, fold
from fiskai_runstate.errors import JournalCorruptError, JournalExistsError, JournalLockedError
from fiskai_runstate.file import default_runs_dir
from fiskai_runstate.testing import sample_meta, sample_turn

pytestmark = pytest.mark.anyio


async def _write(store: FileJournalStore, run_id: str, turns: int) -> list[Record]:
    meta = sample_meta(run_id)
    records = [Record(seq=1, payload=meta)]
    journal = await store.create(meta)
    try:
        for iteration in range(turns):
            for record in sample_turn(run_id, seq=journal.last_seq + 1, iteration=iteration):
                await journal.append(record)
                records.append(record)
    finally:
        await journal.aclose()
    return records


def test_default_directory_follows_xdg_state_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_runs_dir() == tmp_path / "state" / "fiskai" / "runs"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_runs_dir() == tmp_path / "home" / ".local" / "state" / "fiskai" / "runs"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    assert default_runs_dir() == tmp_path / "home" / ".local" / "state" / "fiskai" / "runs"


async def test_directory_is_private_and_files_are_owner_only(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        store = FileJournalStore(tmp_path / "deep" / "runs")
        await _write(store, "private", turns=1)
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "deep" / "runs").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "deep" / "runs" / "private.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "deep" / "runs" / "private.lock").stat().st_mode) == 0o600


async def test_default_store_writes_under_xdg_state_home() -> None:
    store = FileJournalStore()
    await _write(store, "xdg", turns=0)
    assert (Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "runs" / "xdg.json").is_file()


async def test_second_writer_is_told_which_process_holds_the_run(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "held", turns=0)
    journal = await store.open("held")
    try:
        assert (tmp_path / "held.lock").read_text().strip() == str(os.getpid())
        with pytest.raises(JournalLockedError) as caught:
            await store.open("held")
        assert caught.value.pid == os.getpid()
        assert str(caught.value) == f"run 'held' is open in process {os.getpid()}"
        with pytest.raises(JournalLockedError):
            await store.delete("held")
    finally:
        await journal.aclose()
    await store.delete("held")
    assert not (tmp_path / "held.json").exists()


async def test_a_journal_its_creator_left_without_a_whole_record_is_created_again(tmp_path: Path) -> None:
    """Steps: 1. a creator killed between the exclusive create and its meta record left the file empty (or
    with part of the line); 2. creating the run again writes its meta record there; 3. a journal holding a
    whole record is still refused. Seen in `fiskai serve` jobs: the redelivered job failed as busy until it
    expired."""
    store = FileJournalStore(tmp_path / "runs")
    await _write(store, "whole", 0)
    meta_line = store.journal_path("whole").read_bytes()
    for run_id, left in (("empty", b""), ("torn", meta_line[: len(meta_line) // 2])):
        store.journal_path(run_id).write_bytes(left)
        journal = await store.create(sample_meta(run_id))
        await journal.aclose()
        assert await store.load(run_id) == [Record(seq=1, payload=sample_meta(run_id))]
    with pytest.raises(JournalExistsError):
        await store.create(sample_meta("whole"))
    assert store.journal_path("whole").read_bytes() == meta_line


async def test_symlinked_journal_is_refused(tmp_path: Path) -> None:
    elsewhere = FileJournalStore(tmp_path / "elsewhere")
    await _write(elsewhere, "target", turns=1)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "linked.json").symlink_to(tmp_path / "elsewhere" / "target.json")
    store = FileJournalStore(runs)
    with pytest.raises(JournalError, match="symlink"):
        await store.load("linked")
    with pytest.raises(JournalError, match="symlink"):
        await store.open("linked")
    [listed] = await store.list()
    assert (listed.run_id, listed.status) == ("linked", "damaged")
    assert "symlink" in listed.damaged


async def test_torn_tail_is_ignored_then_truncated_before_the_next_append(tmp_path: Path) -> None:
    """Steps:
    1. Write a run, then add half a record with no newline, as a crash mid-write leaves it.
    2. load returns the complete records only.
    3. Reopen and append the next record: the torn bytes are gone and every line is a record.
    """
    store = FileJournalStore(tmp_path)
    written = await _write(store, "torn", turns=1)
    path = tmp_path / "torn.json"
    with path.open("ab") as f:
        f.write(b'{"seq":5,"protocol":"io.choria.fisk-ai.v1.session.assis')
    assert await store.load("torn") == written
    journal = await store.open("torn")
    assert journal.last_seq == 4
    more = sample_turn("torn", seq=5, iteration=1)
    for record in more:
        await journal.append(record)
    await journal.aclose()
    assert await store.load("torn") == written + more
    assert path.read_bytes().endswith(b"}\n")
    assert path.read_bytes().count(b"\n") == 7


async def test_a_journal_that_is_only_a_torn_meta_cannot_be_opened(tmp_path: Path) -> None:
    (tmp_path / "stub.json").write_bytes(b'{"seq":1,"proto')
    store = FileJournalStore(tmp_path)
    assert await store.load("stub") == []
    with pytest.raises(JournalCorruptError, match="no complete record"):
        await store.open("stub")
    with pytest.raises(JournalCorruptError, match="no records"):
        fold(await store.load("stub"))
    assert (tmp_path / "stub.json").read_bytes() == b'{"seq":1,"proto'


async def test_list_shows_unreadable_journals_as_damaged_with_the_reason(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "good", turns=1)
    (tmp_path / "bad.json").write_bytes(b"not json\n")
    (tmp_path / "not a run.json").write_bytes(b"")
    listed = {s.run_id: s for s in await store.list()}
    assert sorted(listed) == ["bad", "good", "not a run"]
    assert (listed["good"].status, listed["good"].damaged) == ("open", "")
    assert listed["bad"].status == "damaged"
    assert listed["bad"].damaged.startswith("corrupt record sequence: journal for run 'bad', line 1: ")
    assert listed["not a run"].damaged.startswith("invalid run id: 'not a run'")


async def test_a_journal_whose_meta_names_another_run_is_refused_and_listed_as_damaged(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "original", turns=1)
    (tmp_path / "original.json").rename(tmp_path / "impostor.json")
    for action in (store.load, store.open):
        with pytest.raises(JournalCorruptError) as caught:
            await action("impostor")
        assert "its meta record belongs to run 'original'" in str(caught.value)
        assert caught.value.line == 1
    [listed] = await store.list()
    assert (listed.run_id, listed.status) == ("impostor", "damaged")


async def test_a_failed_write_stops_the_journal_and_reopening_recovers(tmp_path: Path) -> None:
    """Steps:
    1. Cap the file size (RLIMIT_FSIZE) just above the journal, so the next append writes part of its line.
    2. The append fails with a JournalError; the handle refuses further appends.
    3. Reopen: the partial line is a torn tail, truncated before the record is written again.
    """
    store = FileJournalStore(tmp_path)
    written = await _write(store, "full", turns=1)
    path = tmp_path / "full.json"
    journal = await store.open("full")
    turn = sample_turn("full", seq=5, iteration=1)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 40, hard))
    try:
        with pytest.raises(JournalError, match="appending record 5"):
            await journal.append(turn[0])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert not path.read_bytes().endswith(b"\n")
    with pytest.raises(JournalError, match="open the run again"):
        await journal.append(turn[0])
    await journal.aclose()
    assert await store.load("full") == written
    async with await store.open("full") as reopened:
        for record in turn:
            await reopened.append(record)
    assert await store.load("full") == written + turn
