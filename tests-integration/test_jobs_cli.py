"""`fiskai jobs add|view` against a real nats-server laid out as `ajc` lays it out.

The round trip an operator makes: `fiskai jobs add` submits, a simulated asyncjobs worker claims the item
and stores the answer on the task, `fiskai jobs view` prints it. A task `ajc tasks add` wrote (the
reference's record, byte for byte) is viewed the same way.
"""

import base64
import json
import subprocess
import sys
from collections.abc import AsyncGenerator
from typing import Any

import nats
import pytest
from nats.aio.client import Client as NatsClient

from fiskai_a2a.jobs import (
    HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE,
    HEADER_MSG_ID,
    TASKS_STREAM,
    Task,
    decode_prompt_payload,
    queue_item,
    queue_subject,
    task_subject,
)
from fiskai_a2a.jobs.testing import answer_next, provision_queue, provision_task_store

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

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


@pytest.fixture
async def nc(nats_server: str) -> AsyncGenerator[NatsClient]:
    client = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
    try:
        yield client
    finally:
        await client.close()


def _fiskai(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        input=stdin,
    )


async def test_add_then_a_worker_answers_then_view_prints_the_answer(nats_server: str, nc: NatsClient) -> None:
    await provision_task_store(nc)
    await provision_queue(nc, "FISK_AI")
    added = _fiskai(
        "jobs", "add", "Which streams have no consumers?", "--server", nats_server,
        "--sender", "ops-console", "--max-tokens", "20000", "--format", "json",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    submitted = json.loads(added.stdout)
    task_id = submitted["id"]
    assert submitted["queue"] == "FISK_AI" and submitted["type"] == "fisk-ai:run"

    pending = _fiskai("jobs", "view", task_id, "--server", nats_server)
    assert pending.returncode == 0, pending.stderr
    assert "State: new" in pending.stdout and "not finished yet" in pending.stdout

    # The stored record is ajc's shape: the payload is the message as a JSON string, as `ajc tasks add` stores it.
    raw = await nc.jsm().get_last_msg(TASKS_STREAM, task_subject(task_id))  # pyright: ignore[reportUnknownMemberType]
    task = Task.from_json(raw.data or b"")
    assert (task.payload or b"").startswith(b'"{')
    request = decode_prompt_payload(task.payload)
    assert request.prompt == "Which streams have no consumers?" and request.budget == {"max_tokens": 20000}

    assert await answer_next(nc, "FISK_AI", _RESULT) == task_id

    shown = _fiskai("jobs", "view", task_id, "--server", nats_server)
    assert shown.returncode == 0, shown.stderr
    assert "State: complete  Tries: 1" in shown.stdout
    assert shown.stdout.rstrip().endswith("ORDERS and PAYMENTS have no consumers.")
    as_json = json.loads(_fiskai("jobs", "view", task_id, "--server", nats_server, "--format", "json").stdout)
    assert as_json["state"] == "complete"
    assert as_json["answer"]["request"] == submitted["request"]
    assert as_json["answer"]["recipient"] == {"name": "ops-console"}


async def test_a_task_ajc_wrote_is_viewed_and_a_stored_error_exits_1(nats_server: str, nc: NatsClient) -> None:
    await provision_task_store(nc)
    await provision_queue(nc, "FISK_AI")
    message = (
        '{"protocol":"io.choria.fisk-ai.v1.request.prompt","id":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR",'
        '"request":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR","conversation":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR",'
        '"sequence":0,"time":"2026-08-15T11:30:00Z","sender":{"name":"ops-console"},'
        '"prompt":"Which streams have no consumers?"}'
    )
    record = (
        b'{"id":"3MuCSDXq3Nekz4SjeXsq6NjQke5","type":"fisk-ai:run","queue":"FISK_AI","payload":"'
        + base64.b64encode(json.dumps(message).encode())
        + b'","max_tries":10,"state":"new","created":"2026-12-02T05:57:42.598707958Z","tries":0}'
    )
    js = nc.jetstream()  # pyright: ignore[reportUnknownMemberType]
    task_id = "3MuCSDXq3Nekz4SjeXsq6NjQke5"
    await js.publish(task_subject(task_id), record, headers={HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE: "0"})
    await js.publish(queue_subject("FISK_AI", task_id), queue_item(task_id), headers={HEADER_MSG_ID: task_id})
    error = {**_RESULT, "protocol": "io.choria.fisk-ai.v1.error", "error": "rate limited", "code": "provider_busy"}
    error["stop_reason"] = "error"
    del error["text"]
    await answer_next(nc, "FISK_AI", error)
    shown = _fiskai("jobs", "view", task_id, "--server", nats_server, "--wait", "5s")
    assert shown.returncode == 1
    assert "error [provider_busy]: rate limited" in shown.stdout


def test_missing_storage_names_the_set_up_command(nats_server: str) -> None:
    added = _fiskai("jobs", "add", "hi", "--server", nats_server)
    assert added.returncode == 1
    assert "Traceback" not in added.stderr
    assert "`ajc tasks initialize`" in added.stderr
    viewed = _fiskai("jobs", "view", "3MuCSDXq3Nekz4SjeXsq6NjQke5", "--server", nats_server)
    assert viewed.returncode == 1 and "`ajc tasks initialize`" in viewed.stderr


async def test_missing_queue_and_unknown_task_are_one_line_errors(nats_server: str, nc: NatsClient) -> None:
    await provision_task_store(nc)
    added = _fiskai("jobs", "add", "hi", "--server", nats_server, "--queue", "OPS")
    assert added.returncode == 1
    assert "queue OPS (stream CHORIA_AJ_Q_OPS) does not exist" in added.stderr
    assert "`ajc queue add OPS --run-time 10m --tries 3 --concurrent 10`" in added.stderr
    viewed = _fiskai("jobs", "view", "nope", "--server", nats_server)
    assert viewed.returncode == 1 and 'no task "nope"' in viewed.stderr and "Traceback" not in viewed.stderr


def test_bad_input_is_refused_before_connecting() -> None:
    bad = _fiskai("jobs", "add", "hi", "--sender", "has space", "--server", "nats://127.0.0.1:1")
    assert bad.returncode == 2 and "--sender" in bad.stderr
    empty = _fiskai("jobs", "add", "-", "--server", "nats://127.0.0.1:1", stdin="  \n")
    assert empty.returncode == 2 and "the prompt is empty" in empty.stderr
    late = _fiskai("jobs", "add", "hi", "--deadline", "soon", "--server", "nats://127.0.0.1:1")
    assert late.returncode == 2 and "not a duration" in late.stderr
