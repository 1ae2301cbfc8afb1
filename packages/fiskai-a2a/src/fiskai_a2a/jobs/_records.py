"""The choria-io/asyncjobs task record and queue item, byte for byte as the Go engine writes them.

A task lives as one JSON message on `CHORIA_AJ.T.<id>` in the stream `CHORIA_AJ_TASKS`; the queue holds a
small item `{"kind":0,"job":"<id>"}` on `CHORIA_AJ.Q.<queue>.<id>`. Field names, their order and which ones
are left out when empty follow the engine's `Task` struct (`json:"...,omitempty"`), and strings are escaped
as Go's `encoding/json` escapes them (`<`, `>`, `&`, U+2028 and U+2029 as `\\u....`), so a record this module
writes cannot be told from one `ajc tasks add` wrote. Times stay the RFC 3339 strings they were read as:
Go keeps nanoseconds, Python's datetime does not.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from dataclasses import dataclass, field, replace
from typing import Any, Final, cast

from fiskai_a2a.protocol import new_id

__all__ = [
    "DEFAULT_MAX_TRIES",
    "EVENT_TYPE_TASK_STATE",
    "HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE",
    "HEADER_MSG_ID",
    "TASKS_STREAM",
    "TERMINAL_STATES",
    "TERMINATE_PREFIX",
    "WORKERS_CONSUMER",
    "Task",
    "TaskRecordError",
    "TaskState",
    "claimed",
    "go_json",
    "now_rfc3339_nano",
    "expired",
    "parse_queue_item",
    "parse_time",
    "retried",
    "queue_item",
    "queue_stream",
    "queue_subject",
    "succeeded",
    "task_state_event",
    "task_state_subject",
    "task_subject",
    "terminated",
]

TASKS_STREAM: Final = "CHORIA_AJ_TASKS"
WORKERS_CONSUMER: Final = "WORKERS"
"""The durable pull consumer every queue stream has; its limits are the queue's run time, tries, concurrency."""
HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE: Final = "Nats-Expected-Last-Subject-Sequence"
HEADER_MSG_ID: Final = "Nats-Msg-Id"
EVENT_TYPE_TASK_STATE: Final = "io.choria.asyncjobs.v1.task_state"
DEFAULT_MAX_TRIES: Final = 10
"""A task's own try limit when the submitter sets none (the queue's `max_deliver` may be lower)."""


class TaskState:
    """The engine's state names, exactly (note `complete`, not `completed`)."""

    NEW: Final = "new"
    ACTIVE: Final = "active"
    RETRY: Final = "retry"
    EXPIRED: Final = "expired"
    TERMINATED: Final = "terminated"
    COMPLETE: Final = "complete"
    QUEUE_ERROR: Final = "queue_error"
    BLOCKED: Final = "blocked"
    UNREACHABLE: Final = "unreachable"


TERMINAL_STATES: Final = frozenset(
    {TaskState.EXPIRED, TaskState.TERMINATED, TaskState.COMPLETE, TaskState.QUEUE_ERROR, TaskState.UNREACHABLE}
)
"""States a task does not leave on its own: the answer (or the reason there is none) is final."""


class TaskRecordError(ValueError):
    """A task record that is not the engine's JSON (names the field at fault)."""


def task_subject(task_id: str) -> str:
    return f"CHORIA_AJ.T.{task_id}"


def queue_stream(queue: str) -> str:
    return f"CHORIA_AJ_Q_{queue}"


def queue_subject(queue: str, task_id: str) -> str:
    return f"CHORIA_AJ.Q.{queue}.{task_id}"


def task_state_subject(task_id: str) -> str:
    return f"CHORIA_AJ.E.task_state.{task_id}"


_GO_ESCAPES: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value: object) -> str:
    """Compact JSON as Go's `json.Marshal` writes it: UTF-8 kept, HTML-sensitive characters escaped.

    The escapes are safe to apply to the whole text: outside strings JSON never contains these characters.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in _GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def now_rfc3339_nano(*, plus_ns: int = 0) -> str:
    """Now (plus `plus_ns`) in UTC as Go's RFC3339Nano writes it: nanoseconds, trailing zeros trimmed, `Z`."""
    stamp = time.time_ns() + plus_ns
    seconds, nanos = divmod(stamp, 1_000_000_000)
    fraction = f"{nanos:09d}".rstrip("0")
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + (f".{fraction}" if fraction else "") + "Z"


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One task record.

    `payload` is the raw bytes (base64 in the JSON); `result` is the engine's
    `{"payload": <any>, "completed": <time>}` object as stored, or None.
    """

    id: str
    type: str
    queue: str = ""
    dependencies: tuple[str, ...] = ()
    dependency_results: dict[str, Any] | None = None
    load_dependencies: bool = False
    payload: bytes | None = None
    deadline: str | None = None
    max_tries: int = DEFAULT_MAX_TRIES
    result: dict[str, Any] | None = None
    state: str = TaskState.NEW
    created: str = ""
    tried: str | None = None
    tries: int = 0
    last_err: str = ""
    signature: str = ""
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """Fields this version does not know, kept so a rewrite loses nothing."""

    @classmethod
    def new(cls, task_type: str, payload: bytes, *, task_id: str = "", **fields: Any) -> Task:
        """A fresh task as the engine's `NewTask` makes it: a KSUID id, state `new`, created now."""
        return cls(id=task_id or new_id(), type=task_type, payload=payload, created=now_rfc3339_nano(), **fields)

    def to_json(self) -> bytes:
        """The record's bytes, in the engine's field order with its empty-field omissions."""
        body: dict[str, Any] = {"id": self.id, "type": self.type, "queue": self.queue}
        if self.dependencies:
            body["dependencies"] = list(self.dependencies)
        if self.dependency_results:
            body["dependency_results"] = self.dependency_results
        if self.load_dependencies:
            body["load_dependencies"] = True
        # Go writes a nil []byte as null and an empty one as "".
        body["payload"] = None if self.payload is None else base64.b64encode(self.payload).decode("ascii")
        if self.deadline is not None:
            body["deadline"] = self.deadline
        body["max_tries"] = self.max_tries
        if self.result is not None:
            body["result"] = self.result
        body["state"] = self.state
        body["created"] = self.created
        if self.tried is not None:
            body["tried"] = self.tried
        body["tries"] = self.tries
        if self.last_err:
            body["last_err"] = self.last_err
        if self.signature:
            body["signature"] = self.signature
        body.update({key: value for key, value in self.extra.items() if key not in body})
        return go_json(body).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Task:
        """Parse a stored record.

        Raises:
            TaskRecordError: not JSON, not an object, or a field of the wrong type (named).
        """
        try:
            document: object = json.loads(data)
        except (ValueError, UnicodeDecodeError) as err:
            raise TaskRecordError(f"task record is not JSON: {err}") from None
        if not isinstance(document, dict):
            raise TaskRecordError("task record is not a JSON object")
        raw = cast("dict[str, Any]", document)
        known = {f for f in cls.__dataclass_fields__ if f != "extra"}
        payload = raw.get("payload")
        if payload is not None and not isinstance(payload, str):
            raise TaskRecordError('task record field "payload" is not a base64 string')
        try:
            decoded = None if payload is None else base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise TaskRecordError('task record field "payload" is not valid base64') from None
        result = raw.get("result")
        if result is not None and not isinstance(result, dict):
            raise TaskRecordError('task record field "result" is not an object')
        try:
            return cls(
                id=_text(raw, "id", required=True),
                type=_text(raw, "type"),
                queue=_text(raw, "queue"),
                dependencies=tuple(_strings(raw, "dependencies")),
                dependency_results=cast("dict[str, Any] | None", raw.get("dependency_results")),
                load_dependencies=bool(raw.get("load_dependencies", False)),
                payload=decoded,
                deadline=_optional_text(raw, "deadline"),
                max_tries=_int(raw, "max_tries"),
                result=cast("dict[str, Any] | None", result),
                state=_text(raw, "state"),
                created=_text(raw, "created"),
                tried=_optional_text(raw, "tried"),
                tries=_int(raw, "tries"),
                last_err=_text(raw, "last_err"),
                signature=_text(raw, "signature"),
                extra={key: value for key, value in raw.items() if key not in known},
            )
        except TypeError as err:
            raise TaskRecordError(str(err)) from None

    def with_changes(self, **changes: Any) -> Task:
        return replace(self, **changes)

    @property
    def result_payload(self) -> object:
        """What the handler returned (`result.payload`), or None when there is no result."""
        return None if self.result is None else self.result.get("payload")

    @property
    def completed(self) -> str:
        """When the result was stored (`result.completed`), or ""."""
        value = None if self.result is None else self.result.get("completed")
        return value if isinstance(value, str) else ""


def _text(raw: dict[str, Any], name: str, *, required: bool = False) -> str:
    value = raw.get(name)
    if value is None:
        if required:
            raise TypeError(f'task record has no "{name}"')
        return ""
    if not isinstance(value, str):
        raise TypeError(f'task record field "{name}" is not a string')
    return value


def _optional_text(raw: dict[str, Any], name: str) -> str | None:
    return _text(raw, name) if raw.get(name) is not None else None


def _int(raw: dict[str, Any], name: str) -> int:
    value = raw.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f'task record field "{name}" is not an integer')
    return value


def _strings(raw: dict[str, Any], name: str) -> list[str]:
    value: object = raw.get(name) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in cast("list[object]", value)):
        raise TypeError(f'task record field "{name}" is not a list of strings')
    return cast("list[str]", value)


def queue_item(task_id: str) -> bytes:
    """The work-queue entry for a task (kind 0 = a task item)."""
    return go_json({"kind": 0, "job": task_id}).encode("utf-8")


TERMINATE_PREFIX: Final = "terminate task: "
"""How a refusal reads in `last_err`: the engine's ErrTerminateTask text wrapping the reason (inferred: a Go
handler returns `fmt.Errorf("%w: %s", ErrTerminateTask, reason)`)."""


def claimed(task: Task) -> Task:
    """The record as the engine saves it when a worker takes the task: `active`, tried now, no error.

    `tries` is not bumped here: the engine counts the try in memory and saves it with the outcome.
    """
    return task.with_changes(state=TaskState.ACTIVE, tried=now_rfc3339_nano(), last_err="")


def succeeded(task: Task, payload: object) -> Task:
    """The record once the handler returned `payload` (stored as `result.payload`): `complete`."""
    now = now_rfc3339_nano()
    return task.with_changes(
        state=TaskState.COMPLETE,
        tries=task.tries + 1,
        tried=now,
        last_err="",
        result={"payload": payload, "completed": now},
    )


def terminated(task: Task, reason: str) -> Task:
    """The record of a task refused without retry: `terminated`, the reason in `last_err`."""
    return task.with_changes(
        state=TaskState.TERMINATED, tries=task.tries + 1, tried=now_rfc3339_nano(), last_err=TERMINATE_PREFIX + reason
    )


def retried(task: Task, reason: str, *, queue_tries: int = -1) -> Task:
    """The record after a failed try the queue retries (the engine's handleTaskError).

    `retry` with the reason in `last_err`; `expired` once the queue's try limit is reached.
    """
    tries = task.tries + 1
    state = TaskState.EXPIRED if queue_tries > 0 and tries >= queue_tries else TaskState.RETRY
    return task.with_changes(state=state, tries=tries, tried=now_rfc3339_nano(), last_err=reason)


def expired(task: Task) -> Task:
    """The record of a task past its deadline or its own try limit (the engine's handleTaskExpired)."""
    return task.with_changes(state=TaskState.EXPIRED)


def parse_time(stamp: str | None) -> float | None:
    """Seconds since the epoch of an RFC 3339 time as Go writes it (nanoseconds cut to micro), or None."""
    if not stamp:
        return None
    import datetime as _dt

    text = stamp.replace("Z", "+00:00")
    head, dot, rest = text.partition(".")
    if dot:
        digits = "".join(ch for ch in rest if ch.isdigit())
        zone = rest[len(digits) :]
        text = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
    try:
        return _dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def parse_queue_item(data: bytes) -> str:
    """The task id a work-queue entry names.

    Raises:
        TaskRecordError: not the engine's item (the engine terminates such an entry: no task to update).
    """
    try:
        document: object = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        document = None
    job = cast("dict[str, object]", document).get("job") if isinstance(document, dict) else None
    if not isinstance(job, str) or not job:
        raise TaskRecordError("queue item is corrupt: no task id")
    return job


def task_state_event(task: Task, *, age_ns: int | None = None) -> bytes:
    """The advisory the engine publishes on every saved state (`CHORIA_AJ.E.task_state.<id>`).

    Field order follows the Go struct, whose embedded base event's fields come last.
    """
    event_id = new_id()
    body: dict[str, Any] = {
        "task_id": task.id,
        "state": task.state,
        "tries": task.tries,
        "queue": task.queue,
        "task_type": task.type,
    }
    if task.last_err:
        body["last_error"] = task.last_err
    if age_ns:
        body["task_age"] = age_ns
    # The engine stamps the event with its KSUID's time, which has whole seconds.
    body.update({"event_id": event_id, "type": EVENT_TYPE_TASK_STATE, "timestamp": int(time.time()) * 1_000_000_000})
    return go_json(body).encode("utf-8")
