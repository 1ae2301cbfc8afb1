"""A job's session journal as the jobs channel reads it: a damaged one is a refusal naming its code and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_cli.serve._job_journal import JournalUnusableError, StoreJournals
from fiskai_runstate import FileJournalStore
from fiskai_runstate.records import Record, TerminalRecord
from fiskai_runstate.testing import InMemoryJournalStore, sample_meta

pytestmark = pytest.mark.anyio


async def test_a_missing_journal_is_a_new_job_and_a_sound_one_is_read(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path / "runs")
    journals = StoreJournals(store)
    assert not await journals.exists("job-a") and await journals.answered("job-a") is None
    async with await store.create(sample_meta("job-a")) as journal:
        await journal.append(Record(seq=2, payload=TerminalRecord(reason="completed")))
    assert await journals.exists("job-a")
    assert await journals.answered("job-a") == ("", dict.fromkeys(_USAGE, 0))


async def test_a_corrupt_file_journal_names_its_code_and_path_and_is_left_as_it_was(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path / "runs")
    (tmp_path / "runs").mkdir()
    path = store.journal_path("job-b")
    path.write_bytes(b"not a record\n")
    for read in (StoreJournals(store).exists, StoreJournals(store).answered):
        with pytest.raises(JournalUnusableError) as caught:
            await read("job-b")
        assert caught.value.code == "journal_corrupt"
        assert str(caught.value).startswith("journal_corrupt: corrupt record sequence: journal for run 'job-b'")
        assert f"the session file {path} was left as it is" in str(caught.value)
    assert path.read_bytes() == b"not a record\n"


async def test_a_journal_that_is_not_a_file_is_unreadable(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path / "runs")
    store.journal_path("job-c").mkdir(parents=True)
    with pytest.raises(JournalUnusableError) as caught:
        await StoreJournals(store).exists("job-c")
    assert caught.value.code == "journal_unreadable" and "is not a regular file" in str(caught.value)


async def test_another_store_names_the_session_instead_of_a_file() -> None:
    store = InMemoryJournalStore()
    await (await store.create(sample_meta("job-d"))).aclose()
    store.raw_lines("job-d").append(b"{}")
    with pytest.raises(JournalUnusableError) as caught:
        await StoreJournals(store).answered("job-d")
    assert caught.value.code == "journal_corrupt" and "session 'job-d' in the session store" in str(caught.value)


_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_create_tokens", "llm_calls", "tool_calls")
