"""A job whose session journal is corrupt is refused on its first delivery, never retried, the file left as it was.

A real `fiskai serve` worker over a real nats-server queue (provisioned as `ajc` would), a file session store and
the scripted Messages server. Two ways a job meets a damaged journal: one already at its derived session id
before it is first delivered, and one corrupted after the job was answered and before it is redelivered (a
worker that died before storing the answer).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import anyio
import nats
import pytest
from nats.aio.client import Client as NatsClient

from fiskai_a2a.jobs import (
    TASKS_STREAM,
    Task,
    encode_prompt_payload,
    job_session_id,
    prompt_request,
    queue_item,
    queue_subject,
    task_subject,
)
from fiskai_a2a.jobs.store import TaskStore
from fiskai_a2a.jobs.testing import provision_queue, provision_task_store
from fiskai_agent.testing import MessagesServer, RecordedRequest, Turn, text

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

AGENT = "jobs-agent"
_MODEL = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "fixturectl.introspect.json"


@pytest.fixture
async def nc(nats_server: str) -> AsyncGenerator[NatsClient]:
    client = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
    try:
        yield client
    finally:
        await client.close()


def _answer(request: RecordedRequest) -> Turn:
    return Turn([text("answered " + str(request.messages[0].get("content"))[-20:])])


def _start(folder: Path, url: str, base_url: str) -> tuple[subprocess.Popen[bytes], Path]:
    app = folder / "fixturectl"
    app.write_text(f'#!/bin/sh\nexec cat "{_MODEL}"\n', encoding="utf-8")
    app.chmod(0o755)
    config = folder / "agent.yaml"
    config.write_text(
        f"identity: {AGENT}\napplication_path: {app}\nsystem_prompt: You run jobs.\n"
        "llm: {model: claude-sonnet-4-6}\nexpose: {agent: {jobs: {}}}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="test-key")
    log = folder / "worker.log"
    command = [sys.executable, "-m", "fiskai_cli", "-c", str(config), "serve", "--server", url]
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*command, "--state-dir", str(folder / "runs")], stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env
        )
    deadline = time.monotonic() + 90
    while "Taking queued jobs" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"fiskai serve did not start: {log.read_text(errors='replace')}")
        time.sleep(0.05)
    return proc, log


async def _add(nc: NatsClient, prompt: str) -> str:
    task = Task.new("fisk-ai:run", encode_prompt_payload(prompt_request(prompt, sender="tester")))
    await TaskStore(nc).add(task, queue="FISK_AI")
    return task.id


async def _final(nc: NatsClient, task_id: str, within: float = 30) -> dict[str, Any]:
    """The task record (as `ajc tasks view --json` reads it) once it is final."""
    jsm = nc.jsm()  # pyright: ignore[reportUnknownMemberType]
    record: dict[str, Any] = {}
    for _ in range(int(within / 0.2)):
        record = json.loads((await jsm.get_last_msg(TASKS_STREAM, task_subject(task_id))).data or b"{}")
        if record.get("state") in ("complete", "terminated", "expired"):
            return record
        await anyio.sleep(0.2)
    raise AssertionError(f"task {task_id} not final after {within:g}s: {record}")


async def test_a_corrupt_journal_ends_its_job_on_the_first_delivery_and_the_file_is_left_as_it_was(
    nats_server: str, nc: NatsClient, tmp_path: Path
) -> None:
    await provision_task_store(nc)
    await provision_queue(nc, "FISK_AI", run_time=600, tries=5, concurrency=10)
    runs = tmp_path / "runs"
    runs.mkdir()
    early = await _add(nc, "do job 1")
    damaged = runs / f"{job_session_id(early, AGENT)}.json"
    damaged.write_bytes(b"this is not a journal record\n")
    late = await _add(nc, "do job 2")
    with MessagesServer(responder=_answer) as model:
        proc, log = _start(tmp_path, nats_server, model.base_url)
        try:
            first = await _final(nc, early)
            answered = await _final(nc, late)
            calls = len(model.requests)
            # The answer never reached the task (a worker died before saving it), and meanwhile the journal of
            # the finished session was damaged: the redelivery must not be retried until the try limit.
            journal = runs / f"{job_session_id(late, AGENT)}.json"
            with journal.open("ab") as file:
                file.write(b'{"seq": "torn by a bad restore"}\n')
            before = journal.read_bytes()
            store = TaskStore(nc)
            stored = await store.load(late)
            reset = stored.task.with_changes(state="active", tried="2020-01-01T00:00:00Z", result=None)
            await store.save(reset, expected_seq=stored.seq)
            await nc.jetstream().publish(queue_subject("FISK_AI", late), queue_item(late))  # pyright: ignore[reportUnknownMemberType]
            again = await _final(nc, late)
            calls_after = len(model.requests)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    output = log.read_text(errors="replace")
    assert "Traceback" not in output, output
    assert answered["state"] == "complete" and answered["result"]["payload"]["text"].startswith("answered")
    assert calls == 1 and calls_after == 1  # the damaged sessions never reached the model
    for record, path in ((first, damaged), (again, journal)):
        assert record["state"] == "terminated", record
        assert record["last_err"].startswith("terminate task: journal_corrupt: corrupt record sequence"), record
        assert f"the session file {path} was left as it is" in record["last_err"]
        assert "move it aside, then submit the job again" in record["last_err"]
    assert first["tries"] == 1 and again["tries"] == answered["tries"] + 1  # refused on the first delivery
    assert damaged.read_bytes() == b"this is not a journal record\n"
    assert journal.read_bytes() == before
