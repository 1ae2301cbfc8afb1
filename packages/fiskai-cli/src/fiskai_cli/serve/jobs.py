"""The queued jobs channel (`expose.agent.jobs`): tasks from a choria-io/asyncjobs work queue, answered on the task.

An operator submits with `ajc tasks add` (or `fiskai jobs add`) and reads the answer with `ajc tasks view`. This
channel is the asyncjobs worker side, step for step as the Go engine's processor does it: pull one item from the
queue's `WORKERS` consumer when a slot is free, load the task, skip what the engine skips (already complete or
expired: ack; active and tried within the queue's run time: left alone, as the engine leaves it; past its deadline
or its own try limit: expired), save it `active`, run the handler, then save the outcome and settle the item:

- an answer (a v1 `result`, or a v1 `error` with its `stop_reason` and `code`): `complete`, `result.payload`
  holds the message, the item is acked. A failed run is a completed job: it would fail the same way again.
- a refusal (payload too large, not a v1 `request.prompt`, empty prompt, a session journal that is corrupt or
  unreadable): `terminated`, `last_err` is `terminate task: <reason>` (for the journal, `<code>: <problem>;
  <fix>` naming the file, which is left untouched), the item is terminated (never redelivered).
- work that must run again (the journal is held by another worker, a resume check failed, the worker drains):
  `retry` (or `expired` at the queue's try limit) with the reason in `last_err`, the item is nak'd with a delay.
- taken over (another worker claimed the journal) or stopped by a second interrupt: nothing is written; the
  queue redelivers the item to whoever holds the journal now.

Every run is journaled under a session derived from the task id and the identity (`job_session_id`); a
redelivery resumes it, and a session that already completed is answered from its journal without a model call.
No prompter: a confirmation-gated tool is refused and the model is told why. No streaming, no follow-up turns.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
from anyio.abc import TaskStatus

from fiskai_a2a.jobs import (
    WORKERS_CONSUMER,
    JobRefusedError,
    Task,
    TaskRecordError,
    TaskState,
    claimed,
    decode_prompt_payload,
    expired,
    job_session_id,
    parse_queue_item,
    parse_time,
    queue_stream,
    retried,
    succeeded,
    terminated,
)
from fiskai_a2a.jobs.store import (
    JobNotFoundError,
    JobStorageError,
    QueueLimits,
    StoredTask,
    TaskConflictError,
    TaskStore,
)
from fiskai_a2a.protocol import Identity, new_id, reply_header, serve as wire
from fiskai_agent import RunControl

from ._banner import go_duration
from ._channel import Work, WorkOutcome, WorkRunner
from ._job_journal import JournalUnusableError

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient
    from nats.aio.msg import Msg

__all__ = ["JobsChannel", "Journals", "nak_delay"]

_log = logging.getLogger("fiskai.serve")
_POLL: Final = 1.0
"""Seconds one pull waits for an item; a drain is noticed within this."""
_STOP_GRACE: Final = 2.0
_UNASKED: Final = (
    "this agent runs queued jobs (expose.agent.jobs), which nobody watches, so no one could approve this command"
)


class Journals(Protocol):
    """What the channel reads from the journal store before a run."""

    async def answered(self, session: str) -> tuple[str, dict[str, int]] | None:
        """The answer and usage of a session whose journal completed, or None (no journal, or not completed).

        Raises:
            JournalUnusableError: the journal is corrupt or unreadable (the job is refused, not retried).
        """
        ...

    async def exists(self, session: str) -> bool:
        """Whether the session has a journal (a redelivery resumes it); raises as `answered` does."""
        ...


def nak_delay(deliveries: int) -> float:
    """Seconds before a retried item comes back: 1 s per delivery so far, at most 30 s.

    Inferred: the engine's default retry policy is not in the reference; a short linear back-off keeps a busy
    journal from spinning.
    """
    return float(min(max(deliveries, 1), 30))


class JobsChannel:
    """A `Channel`: the asyncjobs work queue of one agent.

    Args:
        client: The queue's NATS connection.
        limits: The queue's run time, tries and concurrency (read from its consumer at start-up).
        identity: The serving identity (part of every session id, the `sender` of every answer).
        task_type: Only tasks of this type are run.
        workers: Jobs run at once.
        max_payload: The largest payload taken (bytes), checked before any decoding.
        journals: Reads sessions before a run (a completed one is answered from its journal).
    """

    def __init__(
        self,
        client: NatsClient,
        *,
        limits: QueueLimits,
        identity: str,
        task_type: str,
        workers: int,
        max_payload: int,
        journals: Journals,
        context: str = "",
    ) -> None:
        self.client = client
        self.limits = limits
        self.queue = limits.name
        self.name = f"asyncjobs/{self.queue}"
        self.identity = identity
        self.task_type = task_type
        self.workers = max(1, workers)
        self.max_payload = max_payload
        self.context = context
        self.me = Identity(name=identity, instance=new_id())
        self._journals = journals
        self._store = TaskStore(client)
        self._running: dict[str, RunControl] = {}
        self._draining = False
        self._stopped = False

    def banner(self) -> list[tuple[str, str]]:
        tries = "unlimited" if self.limits.tries < 0 else str(self.limits.tries)
        return [
            ("", "Taking queued jobs (asyncjobs):"),
            ("Queue", self.queue),
            ("Task Type", self.task_type),
            ("Run Time", go_duration(timedelta(seconds=self.limits.run_time))),
            ("Tries", tries),
            ("Queue Concurrency", str(self.limits.concurrency)),
            ("Workers", str(self.workers)),
            ("", "A job runs the agent loop; confirmation-gated tools are refused (nobody is asked)."),
        ]

    async def serve(self, runner: WorkRunner, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Pull while not draining; a broken subscription is a fault (raised: the worker exits non-zero)."""
        js = self.client.jetstream()  # pyright: ignore[reportUnknownMemberType]
        sub = await js.pull_subscribe_bind(WORKERS_CONSUMER, stream=queue_stream(self.queue))
        slots = anyio.Semaphore(self.workers)
        task_status.started()
        try:
            async with anyio.create_task_group() as jobs:
                while not self._draining:
                    await slots.acquire()  # the engine's limiter: poll only when a slot is free
                    if self._draining:
                        slots.release()
                        break
                    message = await self._poll(sub)
                    if message is None:
                        slots.release()
                        continue
                    if self._draining:  # taken while the drain began: back at once, untouched
                        await _settle(message.nak(delay=0))
                        slots.release()
                        break
                    jobs.start_soon(self._job, runner, message, slots)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_STOP_GRACE):
                await sub.unsubscribe()

    async def _poll(self, sub: Any) -> Msg | None:
        """One item, or None after `_POLL` seconds of nothing.

        Raises:
            JobStorageError: the queue cannot be read any more (its stream or consumer removed, the server gone):
                a channel fault, so the worker drains and exits non-zero for its supervisor to restart it.
        """
        import nats.errors

        try:
            messages = await sub.fetch(1, timeout=_POLL)
        except nats.errors.TimeoutError:
            return None
        except nats.errors.Error as err:
            stream = queue_stream(self.queue)
            raise JobStorageError(
                f'queue "{self.queue}" cannot be read (stream {stream}, consumer {WORKERS_CONSUMER}): '
                f"{type(err).__name__}; check it with `ajc queue info {self.queue}`"
            ) from None
        return messages[0] if messages else None

    def drain(self) -> None:
        """No new jobs; running ones stop at their next resumable point and go back to the queue."""
        self._draining = True
        for control in self._running.values():
            control.request_suspend()

    def stop(self) -> None:
        self._draining = True
        self._stopped = True
        for control in self._running.values():
            control.abort()

    async def _job(self, runner: WorkRunner, message: Msg, slots: anyio.Semaphore) -> None:
        try:
            await self._take(runner, message)
        except Exception as err:  # noqa: BLE001 - one job's storage failure must not end the worker
            _log.error("job %s: %s", _item_id(message), err)
            await _settle(message.nak(delay=nak_delay(_deliveries(message))))
        finally:
            slots.release()

    async def _take(self, runner: WorkRunner, message: Msg) -> None:
        """One item, as the engine's `processMessage` and `handle` do it."""
        try:
            task_id = parse_queue_item(message.data)
        except TaskRecordError:
            await _settle(message.term())
            return
        try:
            stored = await self._store.load(task_id)
        except JobNotFoundError:
            _log.warning("no task data for queue item %s: discarded", task_id)
            await _settle(message.term())
            return
        task = stored.task
        if task.type != self.task_type:
            # Another worker's type: left on the queue with no error on the task (it expires there).
            await _settle(message.nak(delay=nak_delay(_deliveries(message))))
            return
        if task.state == TaskState.ACTIVE:
            tried = parse_time(task.tried)
            if tried is None or time.time() - tried < self.limits.run_time:
                return  # another worker has it; the queue redelivers it once the run time is over
        elif task.state in (TaskState.COMPLETE, TaskState.EXPIRED, TaskState.TERMINATED, TaskState.UNREACHABLE):
            await _settle(message.ack())
            return
        deadline = parse_time(task.deadline)
        if (deadline is not None and deadline < time.time()) or (task.max_tries > 0 and task.tries >= task.max_tries):
            await self._save(expired(task), stored.seq)
            await _settle(message.ack())
            return
        try:
            stored = await self._store.save(claimed(task), expected_seq=stored.seq)
        except TaskConflictError:
            return  # another worker took it between the load and the save: the engine leaves the item too
        await self._handle(runner, message, stored)

    async def _handle(self, runner: WorkRunner, message: Msg, stored: StoredTask) -> None:
        task = stored.task
        try:
            request = decode_prompt_payload(task.payload, max_payload=self.max_payload)
        except JobRefusedError as err:
            await self._refuse(message, stored, str(err))
            return
        header = request.header
        session = job_session_id(task.id, self.identity)
        try:
            done = await self._journals.answered(session)
            resume = await self._journals.exists(session)
        except JournalUnusableError as err:
            # Every retry would read the same damage: refused now, the journal left for an operator.
            await self._refuse(message, stored, str(err))
            return
        if done is not None:  # finished before, but the answer was never stored (or the ack was lost)
            answer, usage = done
            reply = self._reply(request, wire.ResultReply, stop_reason="end_turn", text=answer, usage=usage or None)
            await self._finish(message, stored, reply)
            return
        control = RunControl()
        self._running[task.id] = control
        if self._draining:
            control.request_suspend()
        try:
            _log.info(
                "Accepted a job channel=%s task=%s caller=%s session=%s resume=%s",
                self.name,
                task.id,
                header.sender.name,
                session,
                resume,
            )
            outcome = await runner.run(
                Work(
                    channel=self.name,
                    session_id=session,
                    prompt="" if resume else request.prompt,
                    caller=header.sender.name,
                    resume=resume,
                    control=control,
                    max_tokens=_budget(request, "max_tokens"),
                    max_iterations=_budget(request, "max_iterations"),
                    unasked=_UNASKED,
                    conversation=False,
                    takeover=True,
                    tags={"task": task.id},
                )
            )
        finally:
            del self._running[task.id]
        await self._settle_outcome(message, stored, request, outcome, control)

    async def _settle_outcome(
        self, message: Msg, stored: StoredTask, request: wire.PromptRequest, outcome: WorkOutcome, control: RunControl
    ) -> None:
        task = stored.task
        if self._stopped or (control.aborted and outcome.reason != "completed"):
            return  # a second interrupt: the queue redelivers it and the next worker resumes the journal
        if outcome.reason == "refused" and outcome.code == "taken_over":
            _log.warning("job %s: %s", task.id, outcome.error)
            return  # the worker that claimed the journal stores the answer
        if outcome.reason in ("suspended", "refused"):
            if outcome.reason == "refused":
                try:
                    done = await self._journals.answered(job_session_id(task.id, self.identity))
                except JournalUnusableError as err:
                    await self._refuse(message, stored, str(err))
                    return
                if done is not None:
                    reply = self._reply(request, wire.ResultReply, stop_reason="end_turn", text=done[0], usage=done[1])
                    await self._finish(message, stored, reply)
                    return
            reason = (
                "the worker drained before the job ended; it resumes from its journal"
                if outcome.reason == "suspended"
                else f"{outcome.code}: {outcome.error}"
            )
            await self._save(retried(task, reason, queue_tries=self.limits.tries), stored.seq)
            delay = 0.0 if outcome.reason == "suspended" else nak_delay(_deliveries(message))
            await _settle(message.nak(delay=delay))
            return
        usage = outcome.usage or None
        if outcome.reason == "completed":
            reply = self._reply(request, wire.ResultReply, stop_reason="end_turn", text=outcome.answer, usage=usage)
        else:
            stop_reason = {"budget_exhausted": "budget_exhausted", "max_iterations": "max_iterations"}.get(
                outcome.reason, "error"
            )
            error = outcome.error or "the run failed"
            if outcome.reason == "crashed":
                error = "the worker hit a bug; see its log"
            fields: dict[str, Any] = {"error": error, "stop_reason": stop_reason, "usage": usage}
            if outcome.code:
                fields["code"] = outcome.code
            reply = self._reply(request, wire.ErrorReply, **fields)
        await self._finish(message, stored, reply)

    async def _refuse(self, message: Msg, stored: StoredTask, reason: str) -> None:
        """Terminate the task with `reason` in its `last_err`: never redelivered."""
        _log.warning("job %s refused: %s", stored.task.id, reason)
        await self._save(terminated(stored.task, reason), stored.seq)
        await _settle(message.term())

    def _reply(self, request: wire.PromptRequest, cls: type[wire.ServeMessage], **body: Any) -> dict[str, Any]:
        header = reply_header(cls.PROTOCOL, request.header, sender=self.me)
        return cls.model_validate({"header": header, **body}).to_wire()

    async def _finish(self, message: Msg, stored: StoredTask, reply: dict[str, Any]) -> None:
        """Store the answer, then ack: the engine acks even when the save failed, to avoid a retry."""
        await self._save(succeeded(stored.task, reply), stored.seq)
        await _settle(message.ack())

    async def _save(self, task: Task, seq: int) -> None:
        try:
            await self._store.save(task, expected_seq=seq)
        except TaskConflictError as err:
            _log.warning("job %s: %s", task.id, err)


def _budget(request: wire.PromptRequest, key: str) -> int | None:
    budget: Mapping[str, object] = request.budget or {}
    value = budget.get(key)
    return value if isinstance(value, int) and value > 0 else None


def _deliveries(message: Msg) -> int:
    try:
        return int(message.metadata.num_delivered)
    except Exception:  # noqa: BLE001 - no metadata on a non-JetStream message: the first delivery
        return 1


def _item_id(message: Msg) -> str:
    try:
        return parse_queue_item(message.data)
    except TaskRecordError:
        return "(corrupt item)"


async def _settle(pending: Awaitable[None]) -> None:
    """Ack, nak or term; a failure only costs a redelivery (the engine logs it and goes on)."""
    try:
        with anyio.move_on_after(5):
            await pending
    except Exception as err:  # noqa: BLE001
        _log.warning("settling a queue item failed: %s", err)
