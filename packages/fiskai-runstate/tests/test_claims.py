"""Journal claims on the file backend: the later writer takes the run over, the earlier stops at its next append."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_runstate import FileJournalStore
from fiskai_runstate.claims import Claimable
from fiskai_runstate.errors import JournalClaimedError, JournalLockedError
from fiskai_runstate.testing import sample_meta, sample_turn

pytestmark = pytest.mark.anyio


async def test_a_claim_stops_the_writer_before_its_next_record_and_the_claimant_takes_over(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path / "runs")
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


async def test_a_writer_without_a_claim_against_it_appends_as_before(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path / "runs")
    journal = await store.create(sample_meta("r2"))
    for record in sample_turn("r2", seq=2, iteration=0):
        await journal.append(record)
    await journal.aclose()
    reopened = await store.open("r2")
    await reopened.aclose()
    await store.delete("r2")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == []
