"""What a fisk-ai job carries: a v1 `request.prompt` in, a v1 `result` or `error` out.

The payload bytes of a task are the JSON encoding of whatever the submitter passed. `ajc tasks add` passes
the message as a string, so its bytes are a JSON string literal holding the message text; a library caller
passing an object stores the object's JSON. Both are accepted. The answer is stored as the task's
`result.payload`; this port stores the v1 message as a JSON object there (inferred: the reference shows
the answer as an object under `ajc tasks view --json`), and reads a base64 or string-encoded one as well.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Final, cast

from fiskai_a2a.errors import A2AError
from fiskai_a2a.protocol import Header, Identity, new_id, now_rfc3339, serve

from ._records import TERMINAL_STATES, Task, go_json

__all__ = [
    "DEFAULT_MAX_PAYLOAD",
    "DEFAULT_QUEUE",
    "DEFAULT_TASK_TYPE",
    "JOB_CODES",
    "JobOutcome",
    "JobRefusedError",
    "decode_answer",
    "decode_prompt_payload",
    "encode_prompt_payload",
    "job_session_id",
    "outcome",
    "prompt_request",
]

DEFAULT_QUEUE: Final = "FISK_AI"
DEFAULT_TASK_TYPE: Final = "fisk-ai:run"
DEFAULT_MAX_PAYLOAD: Final = 524_288
"""`expose.agent.jobs.max_payload`: checked before any decoding."""
JOB_CODES: Final = frozenset({"provider_busy", "provider_refused", "context_exceeded"})
"""The error codes a job can end with (reference 2.4); any other code is carried as it came."""


class JobRefusedError(A2AError):
    """A job the worker refuses without retry; the message is what goes in the task's `last_err`."""


def prompt_request(
    prompt: str,
    *,
    sender: str,
    context: str | None = None,
    budget: dict[str, int] | None = None,
    request_id: str = "",
) -> serve.PromptRequest:
    """A v1 `request.prompt` for a queue: `id`, `request` and `conversation` share one value."""
    message_id = request_id or new_id()
    header = Header(
        protocol=serve.PROMPT,
        id=message_id,
        request=message_id,
        conversation=message_id,
        sequence=0,
        time=now_rfc3339(),
        sender=Identity(name=sender),
    )
    return serve.PromptRequest(header=header, prompt=prompt, context=context, budget=dict(budget) if budget else None)


def encode_prompt_payload(request: serve.PromptRequest, *, as_string: bool = True) -> bytes:
    """The task payload bytes for a prompt message.

    `as_string` stores it as `ajc tasks add` stores a message given as text; otherwise as a library caller
    passing the object stores it.
    """
    message = serve.encode(request)
    if as_string:
        return go_json(message.decode("utf-8")).encode("utf-8")
    document = cast("object", json.loads(message))
    return go_json(document).encode("utf-8")


def decode_prompt_payload(payload: bytes | None, *, max_payload: int = DEFAULT_MAX_PAYLOAD) -> serve.PromptRequest:
    """The prompt a task asks for, from either payload encoding.

    Raises:
        JobRefusedError: too large (checked first), not a v1 message, not a `request.prompt`, or an empty prompt.
    """
    data = payload or b""
    if len(data) > max_payload:
        raise JobRefusedError(f"payload of {len(data)} bytes is larger than max_payload ({max_payload} bytes)")
    try:
        document: object = json.loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raise JobRefusedError(f"the payload is not a valid v1 message: not JSON: {err}") from None
    message = document.encode("utf-8") if isinstance(document, str) else data
    try:
        decoded = serve.decode(message)
    except A2AError as err:
        raise JobRefusedError(f"the payload is not a valid v1 message: {err}") from None
    if not isinstance(decoded, serve.PromptRequest):
        raise JobRefusedError(
            f"only {serve.PROMPT} is accepted on a queue, not {decoded.header.protocol}: "
            "nobody watches a queued conversation"
        )
    if not decoded.prompt.strip():
        raise JobRefusedError("the payload's prompt is empty")
    return decoded


def job_session_id(task_id: str, identity: str) -> str:
    """The journal session of a job: a hash of the serving identity and the task id.

    So any id the queue accepts works and a job only ever reaches its own session. Inferred: the pages name
    no hash; SHA-256 over `identity NUL task id`, hex, behind a `job-` prefix.
    """
    digest = hashlib.sha256(f"{identity}\0{task_id}".encode()).hexdigest()
    return f"job-{digest[:40]}"


def decode_answer(value: object) -> serve.ResultReply | serve.ErrorReply | None:
    """The v1 `result` or `error` held in a task's `result.payload`, or None when it holds neither.

    Accepted: the object itself, base64 of its JSON (a Go []byte), or a JSON string of it.
    """
    data: bytes | None = None
    if isinstance(value, dict):
        data = go_json(cast("dict[str, object]", value)).encode("utf-8")
    elif isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("{"):
            data = stripped.encode("utf-8")
        else:
            try:
                data = base64.b64decode(stripped, validate=True)
            except (binascii.Error, ValueError):
                return None
    if data is None:
        return None
    try:
        decoded = serve.decode(data, expect={serve.RESULT, serve.ERROR})
    except A2AError:
        return None
    return cast("serve.ResultReply | serve.ErrorReply", decoded)


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """Where a job stands, read from its task record as `ajc tasks view` reads it."""

    task: Task
    answer: serve.ResultReply | serve.ErrorReply | None
    """The stored v1 message, once the job completed."""

    @property
    def finished(self) -> bool:
        return self.task.state in TERMINAL_STATES

    @property
    def failed(self) -> bool:
        """True for a stored `error`, a refusal (terminated) or a task that will never run."""
        return self.finished and not isinstance(self.answer, serve.ResultReply)

    def to_json(self) -> dict[str, Any]:
        """The `--format json` object: the task's standing plus the answer message as stored."""
        task = self.task
        body: dict[str, Any] = {
            "id": task.id,
            "type": task.type,
            "queue": task.queue,
            "state": task.state,
            "tries": task.tries,
            "created": task.created,
        }
        if task.tried:
            body["tried"] = task.tried
        if task.completed:
            body["completed"] = task.completed
        if task.last_err:
            body["last_err"] = task.last_err
        if self.answer is not None:
            body["answer"] = self.answer.to_wire()
        elif task.result is not None:
            body["result"] = task.result_payload
        return body


def outcome(task: Task) -> JobOutcome:
    return JobOutcome(task=task, answer=decode_answer(task.result_payload) if task.result is not None else None)
