"""Tasks on a real nats-server (the root conftest starts one), laid out as `ajc` lays them out.

The operator side is what matters here: a task written exactly as `ajc tasks add` writes it is read back
the way `ajc tasks view` reads it, and a task `TaskStore.add` writes is the same bytes on the same
subjects with the same headers. A small simulated worker claims the queue item as the engine does and
stores the answer on the task.
"""

from collections.abc import AsyncGenerator
from typing import Any, cast

import nats
import pytest
from nats.aio.client import Client as NatsClient

from fiskai_a2a.jobs import (
    HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE,
    HEADER_MSG_ID,
    TASKS_STREAM,
    Task,
    TaskState,
    encode_prompt_payload,
    outcome,
    prompt_request,
    queue_item,
    queue_stream,
    queue_subject,
    task_subject,
)
from fiskai_a2a.jobs.store import JobNotFoundError, JobStorageError, TaskConflictError, TaskStore
from fiskai_a2a.jobs.testing import answer_next, provision_queue, provision_task_store
from fiskai_a2a.protocol import serve

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

AJC_RECORD = (
    b'{"id":"3MuCSDXq3Nekz4SjeXsq6NjQke5","type":"fisk-ai:run","queue":"FISK_AI",'
    b'"payload":"IntcInByb21wdFwiOlwiaGVsbG8gZnJvbSB0aGUgYWpjIGZ1bmN0aW9uYWwgY2hlY2tcIixcIm1vZGVsXCI6XCJ0ZXN0XCIsXCJuXCI6MX0i",'
    b'"max_tries":10,"state":"new","created":"2026-12-02T05:57:42.598707958Z","tries":0}'
)
AJC_ID = "3MuCSDXq3Nekz4SjeXsq6NjQke5"


@pytest.fixture
async def nc(nats_server: str) -> AsyncGenerator[NatsClient]:
    client = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
    try:
        yield client
    finally:
        await client.close()


async def _ajc_writes(nc: NatsClient, record: bytes, task_id: str, queue: str = "FISK_AI") -> None:
    """What `ajc tasks add` sends: the record with optimistic concurrency, then the queue item."""
    js = nc.jetstream()  # pyright: ignore[reportUnknownMemberType]
    await js.publish(task_subject(task_id), record, headers={HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE: "0"})
    await js.publish(queue_subject(queue, task_id), queue_item(task_id), headers={HEADER_MSG_ID: task_id})


_RESULT: dict[str, Any] = {
    "protocol": "io.choria.fisk-ai.v1.result",
    "id": "3Hzmp3SCMH824UgPUV6bKqBUSh3",
    "sequence": 0,
    "time": "2026-08-15T11:31:00Z",
    "sender": {"name": "worker"},
    "stop_reason": "end_turn",
    "text": "ORDERS and PAYMENTS have no consumers.",
    "usage": {"input_tokens": 1608, "cache_read_tokens": 663, "output_tokens": 51, "llm_calls": 2, "tool_calls": 1},
}


async def test_a_task_written_as_ajc_writes_it_is_read_back_byte_for_byte(nc: NatsClient) -> None:
    await provision_task_store(nc)
    await provision_queue(nc, "FISK_AI")
    await _ajc_writes(nc, AJC_RECORD, AJC_ID)
    store = TaskStore(nc)
    raw = await nc.jsm().get_last_msg(TASKS_STREAM, task_subject(AJC_ID))  # pyright: ignore[reportUnknownMemberType]
    assert raw.data == AJC_RECORD
    stored = await store.load(AJC_ID)
    assert stored.task.to_json() == AJC_RECORD
    assert stored.task.state == TaskState.NEW and stored.seq == raw.seq
    assert not outcome(stored.task).finished


async def test_a_prompt_submitted_as_ajc_does_is_answered_on_the_task(nc: NatsClient) -> None:
    await provision_task_store(nc)
    await provision_queue(nc, "FISK_AI")
    request = prompt_request("Which streams have no consumers?", sender="ops-console")
    task = Task.new("fisk-ai:run", encode_prompt_payload(request), queue="FISK_AI")
    await _ajc_writes(nc, task.to_json(), task.id)
    assert await answer_next(nc, "FISK_AI", _RESULT) == task.id
    job = outcome((await TaskStore(nc).load(task.id)).task)
    assert job.task.state == "complete" and job.finished and not job.failed
    assert isinstance(job.answer, serve.ResultReply)
    assert job.answer.text == "ORDERS and PAYMENTS have no consumers."
    assert job.answer.header.request == request.header.request
    assert job.answer.header.recipient is not None and job.answer.header.recipient.name == "ops-console"


async def test_add_stores_exactly_what_ajc_stores(nc: NatsClient) -> None:
    await provision_task_store(nc)
    await provision_queue(nc, "FISK_AI")
    task = Task.new("fisk-ai:run", encode_prompt_payload(prompt_request("hi", sender="ops")))
    stored = await TaskStore(nc).add(task, queue="FISK_AI")
    jsm = nc.jsm()  # pyright: ignore[reportUnknownMemberType]
    record = await jsm.get_last_msg(TASKS_STREAM, task_subject(task.id))
    assert record.data == task.with_changes(queue="FISK_AI").to_json() == stored.task.to_json()
    item = await jsm.get_last_msg(queue_stream("FISK_AI"), queue_subject("FISK_AI", task.id))
    assert item.data == b'{"kind":0,"job":"%s"}' % task.id.encode()
    headers = cast("dict[str, str]", item.headers or {})  # pyright: ignore[reportUnknownMemberType]
    assert headers.get(HEADER_MSG_ID) == task.id
    # And the worker sees it like any ajc task.
    assert await answer_next(nc, "FISK_AI", _RESULT) == task.id


async def test_missing_storage_names_the_ajc_command(nc: NatsClient) -> None:
    store = TaskStore(nc)
    task = Task.new("fisk-ai:run", b'"x"')
    with pytest.raises(
        JobStorageError, match=r"CHORIA_AJ_TASKS\) does not exist: create it with `ajc tasks initialize`"
    ):
        await store.add(task, queue="FISK_AI")
    with pytest.raises(JobStorageError, match="ajc tasks initialize"):
        await store.load("nope")
    await provision_task_store(nc)
    with pytest.raises(JobStorageError, match=r"queue FISK_AI .* `ajc queue add FISK_AI --run-time 10m"):
        await store.add(task, queue="FISK_AI")
    with pytest.raises(JobNotFoundError, match='no task "nope"'):
        await store.load("nope")


async def test_queue_limits_come_from_the_workers_consumer(nc: NatsClient) -> None:
    await provision_queue(nc, "FISK_AI", run_time=600, tries=3, concurrency=10)
    limits = await TaskStore(nc).queue_limits("FISK_AI")
    assert (limits.run_time, limits.tries, limits.concurrency) == (600.0, 3, 10)


async def test_a_stale_update_is_refused_not_overwritten(nc: NatsClient) -> None:
    await provision_task_store(nc)
    await provision_queue(nc, "FISK_AI")
    store = TaskStore(nc)
    stored = await store.add(Task.new("fisk-ai:run", b'"x"'), queue="FISK_AI")
    await store.save(stored.task.with_changes(state=TaskState.ACTIVE), expected_seq=stored.seq)
    with pytest.raises(TaskConflictError, match="updated by someone else"):
        await store.save(stored.task.with_changes(state=TaskState.COMPLETE), expected_seq=stored.seq)
    assert (await store.load(stored.task.id)).task.state == TaskState.ACTIVE
