"""The backend contract, run against every backend: in-memory, file and JetStream."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_runstate import FileJournalStore, Journal, Store
from fiskai_runstate.testing import CONTRACT, CONTRACT_IDS, ContractCheck, InMemoryJournalStore, sample_meta

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("check", CONTRACT, ids=CONTRACT_IDS)
async def test_in_memory_store_meets_the_contract(check: ContractCheck) -> None:
    store = InMemoryJournalStore()

    async def factory() -> Store:
        return store

    await check.run(factory)


@pytest.mark.parametrize("check", CONTRACT, ids=CONTRACT_IDS)
async def test_file_store_meets_the_contract(check: ContractCheck, tmp_path: Path) -> None:
    async def factory() -> Store:
        # Each call is a separate handle on the same directory, as a second process would have.
        return FileJournalStore(tmp_path / "runs")

    await check.run(factory)


async def test_fakes_satisfy_the_seams() -> None:
    store: Store = InMemoryJournalStore()
    journal: Journal = await store.create(sample_meta("seam"))
    assert journal.last_seq == 1
    await journal.aclose()


async def test_the_in_memory_store_lists_a_damaged_run_like_the_real_backends() -> None:
    store = InMemoryJournalStore()
    journal = await store.create(sample_meta("fine"))
    await journal.aclose()
    store._runs["broken"] = [b"not json"]  # what a torn or tampered record reads as
    store._updated["broken"] = store._updated["fine"]
    listed = {summary.run_id: summary for summary in await store.list()}
    assert (listed["fine"].status, listed["broken"].status) == ("open", "damaged")
    assert listed["broken"].damaged.startswith("corrupt record sequence: journal for run 'broken'")
