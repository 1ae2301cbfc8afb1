"""The asyncjobs task record and the v1 job payloads, against the records the reference observed."""

import base64
import json
import re
import time

import pytest

from fiskai_a2a.jobs import (
    DEFAULT_MAX_PAYLOAD,
    JobRefusedError,
    Task,
    TaskRecordError,
    TaskState,
    claimed,
    decode_answer,
    decode_prompt_payload,
    encode_prompt_payload,
    go_json,
    job_session_id,
    now_rfc3339_nano,
    outcome,
    parse_queue_item,
    prompt_request,
    queue_item,
    succeeded,
    terminated,
)
from fiskai_a2a.protocol import serve

# The record `ajc tasks add` stored on a real server (reference: asyncjobs-storage.md), byte for byte.
AJC_RECORD = (
    b'{"id":"3MuCSDXq3Nekz4SjeXsq6NjQke5","type":"fisk-ai:run","queue":"FISK_AI",'
    b'"payload":"IntcInByb21wdFwiOlwiaGVsbG8gZnJvbSB0aGUgYWpjIGZ1bmN0aW9uYWwgY2hlY2tcIixcIm1vZGVsXCI6XCJ0ZXN0XCIsXCJuXCI6MX0i",'
    b'"max_tries":10,"state":"new","created":"2026-12-02T05:57:42.598707958Z","tries":0}'
)


def test_the_ajc_record_round_trips_byte_for_byte() -> None:
    task = Task.from_json(AJC_RECORD)
    assert (task.id, task.type, task.queue, task.state, task.max_tries) == (
        "3MuCSDXq3Nekz4SjeXsq6NjQke5",
        "fisk-ai:run",
        "FISK_AI",
        "new",
        10,
    )
    assert (
        task.payload == b'"{\\"prompt\\":\\"hello from the ajc functional check\\",\\"model\\":\\"test\\",\\"n\\":1}"'
    )
    assert task.created == "2026-12-02T05:57:42.598707958Z"
    assert task.to_json() == AJC_RECORD


def test_a_record_built_like_ajc_tasks_add_is_the_reference_record() -> None:
    text = '{"prompt":"hello from the ajc functional check","model":"test","n":1}'
    task = Task(
        id="3MuCSDXq3Nekz4SjeXsq6NjQke5",
        type="fisk-ai:run",
        queue="FISK_AI",
        payload=go_json(text).encode(),
        created="2026-12-02T05:57:42.598707958Z",
    )
    assert task.to_json() == AJC_RECORD


def test_optional_fields_appear_in_the_engine_order_only_when_set() -> None:
    task = Task.from_json(AJC_RECORD).with_changes(
        state=TaskState.COMPLETE,
        tried="2026-12-02T05:58:00.1Z",
        tries=1,
        deadline="2026-12-02T06:57:42Z",
        result={"payload": {"a": 1}, "completed": "2026-12-02T05:58:01Z"},
        last_err="boom <&>",
    )
    keys = list(json.loads(task.to_json()))
    assert keys == [
        "id", "type", "queue", "payload", "deadline", "max_tries", "result",
        "state", "created", "tried", "tries", "last_err",
    ]  # fmt: skip
    # Go escapes HTML-sensitive characters inside strings.
    assert b'"last_err":"boom \\u003c\\u0026\\u003e"' in task.to_json()
    assert Task.from_json(task.to_json()) == task


def test_unknown_fields_survive_a_rewrite() -> None:
    record = AJC_RECORD[:-1] + b',"future_field":{"x":1}}'
    assert json.loads(Task.from_json(record).to_json())["future_field"] == {"x": 1}


@pytest.mark.parametrize(
    ("record", "named"),
    [
        (b"nope", "not JSON"),
        (b"[]", "not a JSON object"),
        (b'{"type":"x"}', '"id"'),
        (b'{"id":"a","payload":"***"}', '"payload"'),
        (b'{"id":"a","tries":"1"}', '"tries"'),
    ],
)
def test_a_broken_record_is_refused_naming_the_field(record: bytes, named: str) -> None:
    with pytest.raises(TaskRecordError, match=named):
        Task.from_json(record)


def test_queue_item_is_the_engines() -> None:
    assert queue_item("3MuCSDXq3Nekz4SjeXsq6NjQke5") == b'{"kind":0,"job":"3MuCSDXq3Nekz4SjeXsq6NjQke5"}'
    assert parse_queue_item(queue_item("-odd:id")) == "-odd:id"
    for corrupt in (b"", b"[]", b'{"kind":0}', b'{"job":""}'):
        with pytest.raises(TaskRecordError, match="queue item is corrupt"):
            parse_queue_item(corrupt)


def test_now_keeps_nanoseconds_like_go() -> None:
    # RFC3339Nano: up to nine fraction digits, trailing zeros trimmed.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{0,8}[1-9])?Z", now_rfc3339_nano())


def test_both_payload_encodings_decode_to_the_same_prompt() -> None:
    request = prompt_request("Which streams have no consumers?", sender="ops-console", context="prod")
    as_text = encode_prompt_payload(request)
    as_object = encode_prompt_payload(request, as_string=False)
    assert as_text.startswith(b'"{') and as_object.startswith(b"{")
    for payload in (as_text, as_object):
        decoded = decode_prompt_payload(payload)
        assert decoded.prompt == "Which streams have no consumers?"
        assert decoded.context == "prod"
        assert decoded.header.sender.name == "ops-console"
        assert decoded.header.id == decoded.header.request == decoded.header.conversation


def test_the_reference_example_payload_decodes() -> None:
    message = (
        '{"protocol":"io.choria.fisk-ai.v1.request.prompt","id":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR",'
        '"request":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR","conversation":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR",'
        '"sequence":0,"time":"2026-08-15T11:30:00Z","sender":{"name":"ops-console"},'
        '"prompt":"Which streams have no consumers?"}'
    )
    assert decode_prompt_payload(go_json(message).encode()).header.request == "2fT8kMxQ1aBcDeFgHiJkLmNoPqR"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"x" * (DEFAULT_MAX_PAYLOAD + 1), "larger than max_payload"),
        (b"{nope", "not a valid v1 message"),
        (b'"hello"', "not a valid v1 message"),
        (
            go_json(
                '{"protocol":"io.choria.fisk-ai.v1.request.resume","id":"a","request":"a","conversation":"a",'
                '"sequence":0,"time":"2026-08-15T11:30:00Z","sender":{"name":"x"},"conversation_token":"t"}'
            ).encode(),
            "only io.choria.fisk-ai.v1.request.prompt is accepted",
        ),
        (
            b'{"protocol":"io.choria.fisk-ai.v1.request.prompt","id":"a","request":"a","conversation":"a",'
            b'"sequence":0,"time":"2026-08-15T11:30:00Z","sender":{"name":"x"},"prompt":"  "}',
            "prompt is empty",
        ),
    ],
)
def test_refusals_say_why(payload: bytes, reason: str) -> None:
    with pytest.raises(JobRefusedError, match=reason):
        decode_prompt_payload(payload)


def test_session_ids_depend_on_task_and_identity_and_accept_any_task_id() -> None:
    odd = "-leading:colon id"
    assert job_session_id(odd, "ops") == job_session_id(odd, "ops")
    assert job_session_id(odd, "ops") != job_session_id(odd, "other")
    assert job_session_id("a", "ops") != job_session_id("b", "ops")
    session = job_session_id(odd, "ops")
    assert session.startswith("job-") and session[4:].isalnum()


_RESULT = {
    "protocol": "io.choria.fisk-ai.v1.result",
    "id": "3Hzmp3SCMH824UgPUV6bKqBUSh3",
    "request": "2fT8kMxQ1aBcDeFgHiJkLmNoPqR",
    "conversation": "2fT8kMxQ1aBcDeFgHiJkLmNoPqR",
    "sequence": 0,
    "time": "2026-08-15T11:31:00Z",
    "sender": {"name": "worker"},
    "recipient": {"name": "ops-console"},
    "stop_reason": "end_turn",
    "text": "ORDERS and PAYMENTS have no consumers.",
    "usage": {"input_tokens": 1608, "cache_read_tokens": 663, "output_tokens": 51, "llm_calls": 2, "tool_calls": 1},
}


@pytest.mark.parametrize(
    "stored",
    [
        _RESULT,
        json.dumps(_RESULT),
        base64.b64encode(json.dumps(_RESULT).encode()).decode(),
    ],
    ids=["object", "json-string", "base64-bytes"],
)
def test_an_answer_is_read_from_any_result_payload_encoding(stored: object) -> None:
    answer = decode_answer(stored)
    assert isinstance(answer, serve.ResultReply)
    assert answer.text == "ORDERS and PAYMENTS have no consumers."


def test_an_error_with_a_code_is_a_finished_failure() -> None:
    error = {**_RESULT, "protocol": "io.choria.fisk-ai.v1.error", "error": "rate limited", "code": "provider_busy"}
    del error["text"]
    task = Task.from_json(AJC_RECORD).with_changes(
        state=TaskState.COMPLETE, result={"payload": error, "completed": "2026-12-02T05:58:01Z"}
    )
    job = outcome(task)
    assert isinstance(job.answer, serve.ErrorReply) and job.answer.code == "provider_busy"
    assert job.finished and job.failed
    assert job.to_json()["answer"]["code"] == "provider_busy"


def test_a_new_task_is_not_finished_and_a_refusal_is() -> None:
    assert not outcome(Task.from_json(AJC_RECORD)).finished
    refused = outcome(Task.from_json(AJC_RECORD).with_changes(state=TaskState.TERMINATED, last_err="empty prompt"))
    assert refused.finished and refused.failed and refused.to_json()["last_err"] == "empty prompt"


def test_engine_transitions_write_the_engines_fields() -> None:
    task = Task.from_json(AJC_RECORD)
    active = claimed(task)
    assert (active.state, active.tries, active.last_err) == ("active", 0, "")
    assert active.tried is not None and active.result is None
    done = succeeded(active, {"x": 1})
    assert (done.state, done.tries, done.last_err) == ("complete", 1, "")
    assert done.result == {"payload": {"x": 1}, "completed": done.tried}
    assert list(json.loads(done.to_json())).index("result") < list(json.loads(done.to_json())).index("state")
    refused = terminated(active, "the payload's prompt is empty")
    assert (refused.state, refused.tries) == ("terminated", 1)
    assert refused.last_err == "terminate task: the payload's prompt is empty"
    assert outcome(refused).failed


def test_strings_are_escaped_as_go_escapes_them() -> None:
    # Go's encoding/json: HTML-sensitive characters and the JS line separators as \\u escapes, other
    # non-ASCII kept as UTF-8, control characters short where JSON has a short form, else lowercase \\u00xx.
    text = "<a>&\u2028\u2029é\x01\t\n"
    assert go_json(text) == '"\\u003ca\\u003e\\u0026\\u2028\\u2029é\\u0001\\t\\n"'


def test_a_retried_task_counts_the_try_and_expires_at_the_queue_limit() -> None:
    from fiskai_a2a.jobs import TaskState, expired, retried

    task = Task.new("fisk-ai:run", b'"x"', queue="FISK_AI").with_changes(tries=1)
    again = retried(task, "conversation_busy: held", queue_tries=3)
    assert (again.state, again.tries, again.last_err) == (TaskState.RETRY, 2, "conversation_busy: held")
    assert retried(again, "again", queue_tries=3).state == TaskState.EXPIRED
    assert retried(again, "again").state == TaskState.RETRY  # no queue limit known: the engine's -1
    assert expired(task).state == TaskState.EXPIRED and expired(task).tries == 1


def test_go_times_are_read_to_the_microsecond() -> None:
    from fiskai_a2a.jobs import now_rfc3339_nano, parse_time

    assert parse_time("2026-12-02T05:57:42.598707958Z") == pytest.approx(1796191062.598707)
    assert parse_time("2026-12-02T05:57:42Z") == 1796191062.0
    assert parse_time("") is None and parse_time(None) is None and parse_time("yesterday") is None
    stamp = parse_time(now_rfc3339_nano())
    assert stamp is not None and abs(stamp - time.time()) < 5
