"""Queued jobs compatible with choria-io/asyncjobs: the task record and the v1 payloads.

Reading and writing tasks on a NATS server is in `fiskai_a2a.jobs.store`, which imports nats-py.

An operator submits with `ajc tasks add` or `fiskai jobs add` and reads the answer with `ajc tasks view`
or `fiskai jobs view`; a worker claims queue items, refuses bad payloads without retry and stores a v1
`result` or `error` on the task. This package is the shared codec both sides use.
"""

from ._payloads import (
    DEFAULT_MAX_PAYLOAD,
    DEFAULT_QUEUE,
    DEFAULT_TASK_TYPE,
    JOB_CODES,
    JobOutcome,
    JobRefusedError,
    decode_answer,
    decode_prompt_payload,
    encode_prompt_payload,
    job_session_id,
    outcome,
    prompt_request,
)
from ._records import (
    DEFAULT_MAX_TRIES,
    EVENT_TYPE_TASK_STATE,
    HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE,
    HEADER_MSG_ID,
    TASKS_STREAM,
    TERMINAL_STATES,
    WORKERS_CONSUMER,
    Task,
    TaskRecordError,
    TaskState,
    go_json,
    now_rfc3339_nano,
    parse_queue_item,
    queue_item,
    queue_stream,
    queue_subject,
    task_state_event,
    task_state_subject,
    task_subject,
)

__all__ = [
    "DEFAULT_MAX_PAYLOAD",
    "DEFAULT_MAX_TRIES",
    "DEFAULT_QUEUE",
    "DEFAULT_TASK_TYPE",
    "EVENT_TYPE_TASK_STATE",
    "HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE",
    "HEADER_MSG_ID",
    "JOB_CODES",
    "TASKS_STREAM",
    "TERMINAL_STATES",
    "WORKERS_CONSUMER",
    "JobOutcome",
    "JobRefusedError",
    "Task",
    "TaskRecordError",
    "TaskState",
    "decode_answer",
    "decode_prompt_payload",
    "encode_prompt_payload",
    "go_json",
    "job_session_id",
    "now_rfc3339_nano",
    "outcome",
    "parse_queue_item",
    "prompt_request",
    "queue_item",
    "queue_stream",
    "queue_subject",
    "task_state_event",
    "task_state_subject",
    "task_subject",
]
