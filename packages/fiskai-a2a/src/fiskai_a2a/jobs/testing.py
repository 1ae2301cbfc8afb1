"""Storage as `ajc` provisions it, and one engine-style claim, for tests: fiskai creates no streams.

The layout is the one observed on a real server after `ajc tasks initialize` and
`ajc queue add FISK_AI --run-time 10m --tries 3 --concurrent 10` (reference: asyncjobs-storage.md).
"""

from __future__ import annotations

from typing import Any

from nats.aio.client import Client as NatsClient
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DeliverPolicy,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)

from ._payloads import decode_prompt_payload
from ._records import TASKS_STREAM, WORKERS_CONSUMER, claimed, parse_queue_item, queue_stream, succeeded
from .store import TaskStore

__all__ = ["answer_next", "provision_queue", "provision_task_store"]


async def provision_task_store(client: NatsClient) -> None:
    """What `ajc tasks initialize` creates: one message per task, the newest kept."""
    jsm = client.jsm()  # pyright: ignore[reportUnknownMemberType]
    await jsm.add_stream(  # pyright: ignore[reportUnknownMemberType]
        StreamConfig(
            name=TASKS_STREAM,
            subjects=["CHORIA_AJ.T.*"],
            retention=RetentionPolicy.LIMITS,
            discard=DiscardPolicy.OLD,
            max_msgs_per_subject=1,
            storage=StorageType.FILE,
            num_replicas=1,
            duplicate_window=120,
        )
    )


async def provision_queue(
    client: NatsClient, queue: str, *, run_time: float = 600, tries: int = 3, concurrency: int = 10
) -> None:
    """What `ajc queue add QUEUE --run-time 10m --tries 3 --concurrent 10` creates.

    A work-queue stream and its `WORKERS` pull consumer carrying the queue's limits.
    """
    jsm = client.jsm()  # pyright: ignore[reportUnknownMemberType]
    stream = queue_stream(queue)
    await jsm.add_stream(  # pyright: ignore[reportUnknownMemberType]
        StreamConfig(
            name=stream,
            subjects=[f"CHORIA_AJ.Q.{queue}.>"],
            retention=RetentionPolicy.WORK_QUEUE,
            discard=DiscardPolicy.NEW,
            max_msgs_per_subject=1,
            storage=StorageType.FILE,
            num_replicas=1,
            duplicate_window=120,
        )
    )
    await jsm.add_consumer(  # pyright: ignore[reportUnknownMemberType]
        stream,
        ConsumerConfig(
            durable_name=WORKERS_CONSUMER,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=run_time,
            max_deliver=tries,
            max_ack_pending=concurrency,
            max_waiting=512,
            deliver_policy=DeliverPolicy.ALL,
        ),
    )


async def answer_next(client: NatsClient, queue: str, answer: dict[str, Any], *, wait: float = 5) -> str:
    """Take the next item as the asyncjobs engine does and store `answer` (a v1 message) on its task.

    Pull from `WORKERS`, mark the task `active`, store it `complete` with the answer as `result.payload`
    (its `request`, `conversation` and `recipient` taken from the prompt), then ack. Returns the task id.
    """
    js = client.jetstream()  # pyright: ignore[reportUnknownMemberType]
    sub = await js.pull_subscribe_bind(WORKERS_CONSUMER, stream=queue_stream(queue))
    try:
        [item] = await sub.fetch(1, timeout=wait)
    finally:
        await sub.unsubscribe()
    task_id = parse_queue_item(item.data)
    store = TaskStore(client)
    stored = await store.load(task_id)
    stored = await store.save(claimed(stored.task), expected_seq=stored.seq)
    request = decode_prompt_payload(stored.task.payload)
    reply = {**answer, "request": request.header.request, "conversation": request.header.conversation}
    reply["recipient"] = {"name": request.header.sender.name}
    done = succeeded(stored.task, reply)
    await store.save(done, expected_seq=stored.seq)
    await item.ack()
    return task_id
