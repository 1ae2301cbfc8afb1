"""Reading and writing asyncjobs tasks over a nats-py connection, the way the Go engine and `ajc` do.

`add` stores a task exactly as `ajc tasks add` does: the record on `CHORIA_AJ.T.<id>` with
`Nats-Expected-Last-Subject-Sequence: 0`, a task-state advisory, then the queue item on
`CHORIA_AJ.Q.<queue>.<id>` with `Nats-Msg-Id: <id>` (a failed enqueue leaves the task `queue_error`, as the
engine does). `load` reads the last record for the task's subject, as `ajc tasks view` does. `save` is the
engine's optimistic update: it names the sequence it read, so a concurrent writer makes it fail instead of
being overwritten. Nothing here creates a stream: storage is the operator's (`ajc`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from nats.aio.client import Client as NatsClient
from nats.js.errors import APIError, NoStreamResponseError, NotFoundError

from fiskai_a2a.errors import A2AError

from ._records import (
    HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE,
    HEADER_MSG_ID,
    TASKS_STREAM,
    WORKERS_CONSUMER,
    Task,
    TaskRecordError,
    TaskState,
    queue_item,
    queue_stream,
    queue_subject,
    task_state_event,
    task_state_subject,
    task_subject,
)

__all__ = [
    "JobNotFoundError",
    "JobStorageError",
    "QueueLimits",
    "StoredTask",
    "TaskConflictError",
    "TaskStore",
    "init_command",
    "queue_command",
]

_STREAM_NOT_FOUND: Final = 10059
_CONSUMER_NOT_FOUND: Final = 10014
_MESSAGE_NOT_FOUND: Final = 10037
_WRONG_LAST_SEQUENCE: Final = 10071


class JobStorageError(A2AError):
    """The task store or the queue is missing or unusable; the message names the `ajc` command that fixes it."""


class JobNotFoundError(A2AError):
    """No task with this id in the task store."""


class TaskConflictError(A2AError):
    """Another writer updated the task since it was read (the engine's optimistic concurrency)."""


def init_command() -> str:
    """The `ajc` command that creates the task store."""
    return "ajc tasks initialize"


def queue_command(queue: str) -> str:
    """The `ajc` command that creates a queue with the reference's limits."""
    return f"ajc queue add {queue} --run-time 10m --tries 3 --concurrent 10"


@dataclass(frozen=True, slots=True)
class StoredTask:
    """A task and the stream sequence it was read or written at (what the next update must name)."""

    task: Task
    seq: int


@dataclass(frozen=True, slots=True)
class QueueLimits:
    """A queue's limits, from its `WORKERS` consumer: they belong to the queue, not to the agent."""

    name: str
    run_time: float
    """Seconds before an unacknowledged item is redelivered (`ack_wait`)."""
    tries: int
    """`max_deliver`; -1 means no limit."""
    concurrency: int
    """`max_ack_pending`."""


class TaskStore:
    """Task records and queue items on one NATS connection."""

    def __init__(self, client: NatsClient, *, timeout: float = 5.0) -> None:
        self._nc = client
        self._js = client.jetstream(timeout=timeout)  # pyright: ignore[reportUnknownMemberType]
        self._jsm = client.jsm(timeout=timeout)  # pyright: ignore[reportUnknownMemberType]

    async def check_task_store(self) -> None:
        """Raises JobStorageError when the stream `CHORIA_AJ_TASKS` does not exist."""
        try:
            await self._jsm.stream_info(TASKS_STREAM)
        except NotFoundError:
            raise JobStorageError(
                f"the asyncjobs task store (stream {TASKS_STREAM}) does not exist: create it with "
                f"`{init_command()}` (fiskai creates no storage)"
            ) from None

    async def queue_limits(self, queue: str) -> QueueLimits:
        """The queue's run time, tries and concurrency.

        Raises:
            JobStorageError: the queue's stream or its `WORKERS` consumer does not exist.
        """
        stream = queue_stream(queue)
        try:
            info = await self._jsm.consumer_info(stream, WORKERS_CONSUMER)
        except NotFoundError as err:
            what = (
                f"queue {queue} (stream {stream})"
                if err.err_code != _CONSUMER_NOT_FOUND
                else f"the {WORKERS_CONSUMER} consumer of queue {queue} (stream {stream})"
            )
            raise JobStorageError(
                f"{what} does not exist: create it with `{queue_command(queue)}` (fiskai creates no storage)"
            ) from None
        config = info.config
        return QueueLimits(
            name=queue,
            run_time=float(config.ack_wait or 0.0),
            tries=int(config.max_deliver if config.max_deliver is not None else -1),
            concurrency=int(config.max_ack_pending or 0),
        )

    async def add(self, task: Task, *, queue: str) -> StoredTask:
        """Store a new task and enqueue it, as `ajc tasks add` does.

        Raises:
            JobStorageError: the task store or the queue does not exist, or the enqueue failed (the task is
                then left `queue_error` with the reason in `last_err`, as the engine leaves it).
        """
        await self.check_task_store()
        await self.queue_limits(queue)
        stored = await self.save(task.with_changes(queue=queue), expected_seq=0)
        headers = {HEADER_MSG_ID: task.id} if task.state != TaskState.RETRY else None
        reason = ""
        try:
            ack = await self._js.publish(queue_subject(queue, task.id), queue_item(task.id), headers=headers)
            if ack.duplicate:
                reason = "duplicate queue item"
        except (NoStreamResponseError, APIError) as err:
            reason = str(err) or type(err).__name__
        if reason:
            failed = stored.task.with_changes(state=TaskState.QUEUE_ERROR, last_err=reason)
            await self.save(failed, expected_seq=stored.seq)
            raise JobStorageError(f"could not enqueue task {task.id} on queue {queue}: {reason}")
        return stored

    async def load(self, task_id: str) -> StoredTask:
        """The task's current record, as `ajc tasks view` reads it.

        Raises:
            JobNotFoundError: no such task.
            JobStorageError: the task store does not exist, or the record is not the engine's JSON.
        """
        try:
            message = await self._jsm.get_last_msg(TASKS_STREAM, task_subject(task_id))
        except NotFoundError as err:
            if err.err_code == _MESSAGE_NOT_FOUND:
                raise JobNotFoundError(f'no task "{task_id}" in the task store ({TASKS_STREAM})') from None
            if err.err_code == _STREAM_NOT_FOUND:
                await self.check_task_store()
            raise JobStorageError(f"cannot read task {task_id}: {err.description or err}") from None
        try:
            task = Task.from_json(message.data or b"")
        except TaskRecordError as err:
            raise JobStorageError(f"task {task_id}: {err}") from None
        return StoredTask(task=task, seq=int(message.seq or 0))

    async def save(self, task: Task, *, expected_seq: int, notify: bool = True) -> StoredTask:
        """Write the record, naming the sequence it replaces (0 for a new task); publish the advisory.

        Raises:
            TaskConflictError: the record changed since `expected_seq` (or, for 0, the task exists).
            JobStorageError: the task store does not exist.
        """
        headers = {HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE: str(expected_seq)}
        try:
            ack = await self._js.publish(task_subject(task.id), task.to_json(), headers=headers)
        except NoStreamResponseError:
            await self.check_task_store()
            raise JobStorageError(f"no stream takes {task_subject(task.id)}: run `{init_command()}`") from None
        except APIError as err:
            if err.err_code == _WRONG_LAST_SEQUENCE:
                raise TaskConflictError(
                    f"task {task.id} was updated by someone else since it was read (expected sequence {expected_seq})"
                ) from None
            raise JobStorageError(f"cannot store task {task.id}: {err.description or err}") from None
        if notify:
            await self._nc.publish(task_state_subject(task.id), task_state_event(task))
        return StoredTask(task=task, seq=int(ack.seq))
