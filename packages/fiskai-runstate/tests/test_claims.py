"""Journal claims on the file and in-memory backends: the later writer takes the run over, the earlier stops at its
next append. Both run the same tests, so the in-memory store keeps the file store's semantics."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_runstate import FileJournalStore, Store
from fiskai_runstate.claims import Claimable
from fiskai_runstate.errors import InvalidRunIdError, JournalClaimedError, JournalLockedError
from fiskai_runstate.testing import InMemoryJournalStore, sample_meta, sample_turn

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["file", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return FileJournalStore(tmp_path / "runs") if request.param == "file" else InMemoryJournalStore()


async def test_a_claim_stops_the_writer_before_its_next_record_and_the_claimant_takes_over(store: Store) -> None:
    assert isinstance(store, Claimable)
    first = await store.create(sample_meta("r1"))
    turn = sample_turn("r1", seq=2, iteration=0)
    await first.append(turn[0])
    await store.claim("r1")  # another worker reached the journal
    with pytest.raises(JournalClaimedError) as caught:
        await first.append(turn[1])
    assert "taken over by another worker" in str(caught.value)
    assert isinstance(caught.value, JournalLockedError)  # callers that treat a held journal as busy still do
    assert len(await store.load("r1")) == 2  # nothing written after the claim
    with pytest.raises(JournalLockedError):
        await store.open("r1")  # the first still holds the file until it lets go
    await first.aclose()
    second = await store.open("r1")
    await second.append(turn[1])  # the claimant writes on; its own open took a fresh claim
    await second.aclose()
    assert len(await store.load("r1")) == 3


async def test_a_writer_without_a_claim_against_it_appends_as_before(store: Store) -> None:
    journal = await store.create(sample_meta("r2"))
    for record in sample_turn("r2", seq=2, iteration=0):
        await journal.append(record)
    await journal.aclose()
    reopened = await store.open("r2")
    await reopened.aclose()
    await store.delete("r2")
    if isinstance(store, FileJournalStore):
        assert sorted(p.name for p in store.directory.iterdir()) == []


async def test_a_claim_before_the_run_exists_does_not_stop_its_first_writer(store: Store) -> None:
    assert isinstance(store, Claimable)
    await store.claim("r3")  # a resume raced a create: the creator's own claim replaces it
    journal = await store.create(sample_meta("r3"))
    for record in sample_turn("r3", seq=2, iteration=0):
        await journal.append(record)
    await journal.aclose()
    assert len(await store.load("r3")) == 4


async def test_the_newest_claim_wins_and_a_closed_writer_reopens_with_its_own(store: Store) -> None:
    assert isinstance(store, Claimable)
    first = await store.create(sample_meta("r4"))
    turn = sample_turn("r4", seq=2, iteration=0)
    await store.claim("r4")
    await store.claim("r4")
    with pytest.raises(JournalClaimedError):
        await first.append(turn[0])
    with pytest.raises(JournalClaimedError):
        await first.append(turn[0])  # still stopped: it never writes again
    await first.aclose()
    async with await store.open("r4") as second:
        for record in turn:
            await second.append(record)
    assert [r.seq for r in await store.load("r4")] == [1, 2, 3, 4]
    with pytest.raises(InvalidRunIdError):
        await store.claim("../r4")
