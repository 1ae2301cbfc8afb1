"""The JetStream backend against a real nats-server: the shared contract plus stream checks."""

from __future__ import annotations

from collections.abc import AsyncIterator

import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.js.api import DiscardPolicy, StreamConfig
from nats.js.client import JetStreamContext

from fiskai_runstate import JournalTruncatedError, Record, Store, encode_record, fold
from fiskai_runstate.errors import JournalCorruptError
from fiskai_runstate.jetstream import JetStreamJournalStore, StreamConfigError
from fiskai_runstate.testing import CONTRACT, CONTRACT_IDS, ContractCheck, sample_meta, sample_turn

pytestmark = [pytest.mark.anyio, pytest.mark.nats]

_JOURNAL_STREAM = StreamConfig(
    name="RUNS",
    subjects=["fiskai.runs.>"],
    max_msgs_per_subject=1,
    discard=DiscardPolicy.NEW,
    discard_new_per_subject=True,
)


@pytest.fixture
async def nc(nats_server: str) -> AsyncIterator[NatsClient]:
    client = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
    try:
        yield client
    finally:
        await client.close()


async def _add_stream(nc: NatsClient, config: StreamConfig) -> JetStreamContext:
    js = nc.jetstream()  # pyright: ignore[reportUnknownMemberType]
    await js.add_stream(config)  # pyright: ignore[reportUnknownMemberType]
    return js


@pytest.mark.parametrize("check", CONTRACT, ids=CONTRACT_IDS)
async def test_jetstream_store_meets_the_contract(check: ContractCheck, nc: NatsClient) -> None:
    await _add_stream(nc, _JOURNAL_STREAM)

    async def factory() -> Store:
        return await JetStreamJournalStore.bind(nc, "RUNS")

    await check.run(factory)


async def test_bind_to_a_missing_stream_says_how_to_create_it(nc: NatsClient) -> None:
    with pytest.raises(StreamConfigError) as caught:
        await JetStreamJournalStore.bind(nc, "NOPE")
    assert "nats stream add NOPE" in str(caught.value)


async def test_bind_refuses_a_stream_that_could_replace_records(nc: NatsClient) -> None:
    await _add_stream(nc, StreamConfig(name="LOOSE", subjects=["loose.>"]))
    with pytest.raises(StreamConfigError) as caught:
        await JetStreamJournalStore.bind(nc, "LOOSE")
    assert "--max-msgs-per-subject=1" in str(caught.value)
    assert "--discard=new --discard-per-subject" in str(caught.value)


async def test_prefix_comes_from_the_single_wildcard_subject(nc: NatsClient) -> None:
    await _add_stream(nc, _JOURNAL_STREAM)
    store = await JetStreamJournalStore.bind(nc, "RUNS")
    assert store.prefix == "fiskai.runs"
    assert store.subject("r1", 1) == "fiskai.runs.r1._meta"
    assert store.subject("r1", 7) == "fiskai.runs.r1.7"


async def test_records_are_byte_identical_to_the_file_encoding(nc: NatsClient) -> None:
    js = await _add_stream(nc, _JOURNAL_STREAM)
    store = await JetStreamJournalStore.bind(nc, "RUNS")
    journal = await store.create(sample_meta("bytes"))
    turn = sample_turn("bytes", seq=2, iteration=0)
    for record in turn:
        await journal.append(record)
    stored = await js.get_last_msg("RUNS", "fiskai.runs.bytes.2")
    assert stored.data == encode_record(turn[0])
    assert fold(await store.load("bytes")).counters.tool_calls == 1


async def test_a_damaged_message_is_reported_by_subject_and_left_alone(nc: NatsClient) -> None:
    js = await _add_stream(nc, _JOURNAL_STREAM)
    store = await JetStreamJournalStore.bind(nc, "RUNS")
    journal = await store.create(sample_meta("damaged"))
    await journal.aclose()
    await js.publish("fiskai.runs.damaged.2", b'{"seq":2,"protocol":"nope"}')
    with pytest.raises(JournalCorruptError) as caught:
        await store.load("damaged")
    assert "fiskai.runs.damaged.2" in str(caught.value)
    meta = await js.get_last_msg("RUNS", "fiskai.runs.damaged._meta")
    assert meta.data == encode_record(Record(seq=1, payload=sample_meta("damaged")))


async def test_a_damaged_run_is_listed_as_damaged_not_hidden(nc: NatsClient) -> None:
    js = await _add_stream(nc, _JOURNAL_STREAM)
    store = await JetStreamJournalStore.bind(nc, "RUNS")
    for run_id in ("good", "damaged"):
        journal = await store.create(sample_meta(run_id))
        await journal.aclose()
    await js.publish("fiskai.runs.damaged.2", b'{"seq":2,"protocol":"nope"}')
    listed = {summary.run_id: summary for summary in await store.list()}
    assert (listed["good"].status, listed["good"].damaged) == ("open", "")
    assert listed["damaged"].status == "damaged"
    assert "fiskai.runs.damaged.2" in listed["damaged"].damaged


async def test_a_meta_record_of_another_run_is_refused(nc: NatsClient) -> None:
    js = await _add_stream(nc, _JOURNAL_STREAM)
    store = await JetStreamJournalStore.bind(nc, "RUNS")
    await js.publish("fiskai.runs.impostor._meta", encode_record(Record(seq=1, payload=sample_meta("original"))))
    with pytest.raises(JournalCorruptError) as caught:
        await store.load("impostor")
    assert "its meta record belongs to run 'original'" in str(caught.value)
    [listed] = await store.list()
    assert (listed.run_id, listed.status) == ("impostor", "damaged")


async def test_a_run_cut_back_under_an_open_writer_is_refused_at_its_next_append(nc: NatsClient) -> None:
    """The expected-last-sequence fence sees a removed tail: the writer is told, and nothing is appended."""
    js = await _add_stream(nc, _JOURNAL_STREAM)
    store = await JetStreamJournalStore.bind(nc, "RUNS")
    journal = await store.create(sample_meta("cut"))
    turn = sample_turn("cut", seq=2, iteration=0)
    for record in turn:
        await journal.append(record)
    await js.purge_stream("RUNS", subject="fiskai.runs.cut.4")
    with pytest.raises(JournalTruncatedError) as caught:
        await journal.append(sample_turn("cut", seq=5, iteration=1)[0])
    assert (caught.value.expected, caught.value.found) == (4, 3)
    assert "was cut back on stream 'RUNS' while open: it ends at record 3" in str(caught.value)
    assert [r.seq for r in await store.load("cut")] == [1, 2, 3]


async def test_a_record_removed_from_the_middle_of_a_run_is_refused_by_load(nc: NatsClient) -> None:
    js = await _add_stream(nc, _JOURNAL_STREAM)
    store = await JetStreamJournalStore.bind(nc, "RUNS")
    async with await store.create(sample_meta("holed")) as journal:
        for record in sample_turn("holed", seq=2, iteration=0):
            await journal.append(record)
    await js.purge_stream("RUNS", subject="fiskai.runs.holed.3")
    with pytest.raises(JournalCorruptError, match="record seq 3 is missing"):
        await store.load("holed")


async def test_a_claim_takes_a_run_over_and_the_holder_is_refused_at_its_next_append(nc: NatsClient) -> None:
    """Two workers on two machines reach one journal: the later claims it, the earlier stops writing."""
    from fiskai_runstate.claims import Claimable
    from fiskai_runstate.errors import JournalClaimedError

    await _add_stream(nc, _JOURNAL_STREAM)
    store = await JetStreamJournalStore.bind(nc, "RUNS")
    assert isinstance(store, Claimable)
    first = await store.create(sample_meta("c1"))
    turn = sample_turn("c1", seq=2, iteration=0)
    await first.append(turn[0])
    await store.claim("c1")
    second = await store.open("c1")  # no lock on this backend: the claimant opens at once
    assert second.last_seq == 2
    with pytest.raises(JournalClaimedError):
        await first.append(turn[1])
    await second.append(turn[1])
    records = await store.load("c1")  # the claim is not a record
    assert [r.seq for r in records] == [1, 2, 3]
    assert [s.run_id for s in await store.list()] == ["c1"]
