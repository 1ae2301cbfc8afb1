"""Storage as `ajc` provisions it, for tests: fiskai itself never creates these streams.

The layout is the one observed on a real server after `ajc tasks initialize` and
`ajc queue add FISK_AI --run-time 10m --tries 3 --concurrent 10` (reference: asyncjobs-storage.md).
"""

from __future__ import annotations

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

from ._records import TASKS_STREAM, WORKERS_CONSUMER, queue_stream

__all__ = ["provision_queue", "provision_task_store"]


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
