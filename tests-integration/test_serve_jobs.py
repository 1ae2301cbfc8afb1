"""Queued jobs under `fiskai serve`, as processes on a real nats-server with the scripted Messages server.

Storage is laid out as `ajc` lays it out (`fiskai_a2a.jobs.testing`); tasks are written as `ajc tasks add`
writes them and read back as `ajc tasks view` reads them. The agent's app is fixturectl's command model behind a
shell script: `args basic --name X` is the non-idempotent command, appending its argv to an effect ledger (one
line per time it really ran). The scripted model reads the job number from the prompt: a multiple of
`tool_every` calls that command once, then answers `answer N`; every other job answers at once.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.js.api import DiscardPolicy, StreamConfig

from fiskai_a2a import NatsContext
from fiskai_a2a.jobs import (
    HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE,
    HEADER_MSG_ID,
    TASKS_STREAM,
    Task,
    encode_prompt_payload,
    prompt_request,
    queue_item,
    queue_subject,
    task_subject,
)
from fiskai_a2a.jobs.store import TaskStore
from fiskai_a2a.jobs.testing import provision_queue, provision_task_store
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_a2a.prompts_client import send_turn
from fiskai_a2a.protocol import serve as wire
from fiskai_agent.testing import Failure, MessagesServer, RecordedRequest, Turn, text, tool_use

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

_MODEL = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "fixturectl.introspect.json"
AGENT = "jobs-agent"
READY = "Taking queued jobs"
_JOB = re.compile(r"job (\d+)")


def write_jobs_config(
    folder: Path,
    *,
    queue: str = "FISK_AI",
    workers: int = 1,
    sleep: float = 0.0,
    extra: str = "",
    prompts: bool = False,
) -> Path:
    """agent.yaml for a jobs worker (`extra` appended), its app (ledger at `folder/ledger`), the session directory."""
    app = folder / "fixturectl"
    ledger = folder / "ledger"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        f'echo "$*" >> "{ledger}"\n'
        + (f"sleep {sleep}\n" if sleep else "")
        + 'case "$*" in *slow*) sleep 8;; esac\n'
        + 'echo "ran $*"\n',
        encoding="utf-8",
    )
    app.chmod(0o755)
    config = folder / "agent.yaml"
    config.write_text(
        f"identity: {AGENT}\n"
        f"application_path: {app}\n"
        "system_prompt: You run jobs.\n"
        "llm: {model: claude-sonnet-4-6}\n"
        f"expose: {{agent: {{jobs: {{queue: {queue}, workers: {workers}}}"
        + (", a2a: {prompts: {}}" if prompts else "")
        + f"}}}}\n{extra}",
        encoding="utf-8",
    )
    (folder / "runs").mkdir(exist_ok=True)
    return config


def job_responder(*, tool_every: int = 3, delay: float = 0.0) -> Callable[[RecordedRequest], Turn | Failure]:
    """Also: a prompt saying `rate-limit` gets a 429, one saying `too-long` a 400 prompt-too-long (no retries)."""

    def respond(request: RecordedRequest) -> Turn | Failure:
        if delay:
            time.sleep(delay)
        first = str(request.messages[0].get("content"))
        if "rate-limit" in first:
            return Failure(429, "rate limited", should_retry=False)
        if "gated" in first and not request.tool_results():
            return Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "test"})])  # ai:confirm
        if "too-long" in first:
            return Failure(400, "prompt is too long: 250000 tokens > 200000 maximum", should_retry=False)
        found = _JOB.search(first)
        number = int(found.group(1)) if found else -1
        if number % tool_every == 0 and not request.tool_results():
            arguments: dict[str, Any] = {"name": f"job-{number}"}
            if "slow" in first:
                arguments["mode"] = "slow"  # the command sleeps 8 s
            return Turn([tool_use("args_basic", arguments)])
        return Turn([text(f"answer {number}")])

    return respond


class Worker:
    """A `fiskai serve` process; its stderr collected on a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr or ():
            self.lines.put(line)

    def stderr(self) -> str:
        while True:
            try:
                self.seen.append(self.lines.get_nowait())
            except queue.Empty:
                return "".join(self.seen)

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while READY not in self.stderr():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"fiskai serve did not start: {self.stderr()}")
            time.sleep(0.05)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def start_worker(config: Path, url: str, base_url: str, *extra: str) -> Worker:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="test-key")
    command = [sys.executable, "-m", "fiskai_cli", "-c", str(config), "serve", "--server", url]
    if "backend: jetstream" not in config.read_text(encoding="utf-8"):
        command += ["--state-dir", str(config.parent / "runs")]
    command += extra
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    return Worker(proc)


@contextmanager
def workers(config: Path, url: str, base_url: str, count: int, *extra: str) -> Generator[list[Worker]]:
    started = [start_worker(config, url, base_url, *extra) for _ in range(count)]
    try:
        for worker in started:
            worker.wait_ready()
        yield started
    finally:
        for worker in started:
            worker.close()


@pytest.fixture
async def nc(nats_server: str) -> AsyncGenerator[NatsClient]:
    client = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
    try:
        yield client
    finally:
        await client.close()


async def _provision(nc: NatsClient, *, run_time: float = 600, tries: int = 3) -> None:
    await provision_task_store(nc)
    await provision_queue(nc, "FISK_AI", run_time=run_time, tries=tries, concurrency=100)


async def _add(nc: NatsClient, number: int, *, as_string: bool = True, prompt: str | None = None) -> str:
    request = prompt_request(prompt if prompt is not None else f"do job {number}", sender="tester")
    task = Task.new("fisk-ai:run", encode_prompt_payload(request, as_string=as_string))
    await TaskStore(nc).add(task, queue="FISK_AI")
    return task.id


async def _view(nc: NatsClient, task_id: str) -> dict[str, Any]:
    """The task record as `ajc tasks view --json` reads it: the last message on its subject, parsed as JSON."""
    jsm = nc.jsm()  # pyright: ignore[reportUnknownMemberType]
    message = await jsm.get_last_msg(TASKS_STREAM, task_subject(task_id))
    return json.loads(message.data or b"{}")


_FINAL = ("complete", "terminated", "expired")


async def _until_final(nc: NatsClient, ids: list[str], within: float) -> dict[str, dict[str, Any]]:
    """Every task's record once all are final (polled as an operator polls `ajc tasks view`)."""
    records: dict[str, dict[str, Any]] = {}
    for _ in range(int(within / 0.2)):
        for task_id in ids:
            if records.get(task_id, {}).get("state") not in _FINAL:
                records[task_id] = await _view(nc, task_id)
        if all(r.get("state") in _FINAL for r in records.values()):
            return records
        await anyio.sleep(0.2)
    pending = {task_id: r.get("state") for task_id, r in records.items() if r.get("state") not in _FINAL}
    raise AssertionError(f"{len(pending)} tasks not final after {within:g}s: {list(pending.items())[:5]}")


async def test_a_task_written_as_ajc_writes_it_is_answered_on_its_record(
    nats_server: str, nc: NatsClient, tmp_path: Path
) -> None:
    """The reference's record, byte for byte, with a `request.prompt` in the `ajc tasks add` string encoding."""
    await _provision(nc)
    message = (
        '{"protocol":"io.choria.fisk-ai.v1.request.prompt","id":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR",'
        '"request":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR","conversation":"2fT8kMxQ1aBcDeFgHiJkLmNoPqR",'
        '"sequence":0,"time":"2026-08-15T11:30:00Z","sender":{"name":"ops-console"},'
        '"prompt":"do job 3 please"}'
    )
    task_id = "3MuCSDXq3Nekz4SjeXsq6NjQke5"
    record = (
        b'{"id":"3MuCSDXq3Nekz4SjeXsq6NjQke5","type":"fisk-ai:run","queue":"FISK_AI","payload":"'
        + base64.b64encode(json.dumps(message).encode())
        + b'","max_tries":10,"state":"new","created":"2026-12-02T05:57:42.598707958Z","tries":0}'
    )
    js = nc.jetstream()  # pyright: ignore[reportUnknownMemberType]
    await js.publish(task_subject(task_id), record, headers={HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE: "0"})
    await js.publish(queue_subject("FISK_AI", task_id), queue_item(task_id), headers={HEADER_MSG_ID: task_id})
    config = write_jobs_config(tmp_path, prompts=True)  # beside the prompts channel, on one harness
    with MessagesServer(responder=job_responder()) as model, workers(config, nats_server, model.base_url, 1) as [one]:
        records = await _until_final(nc, [task_id], 30)
        calls = len(model.requests)
        async with connect(NatsContext.from_url(nats_server)) as transport:
            with anyio.fail_after(30):
                reply = await send_turn(NatsStreams(transport), AGENT, sender="tester", prompt="job 7 by prompt")
        banner = one.stderr()
    assert isinstance(reply, wire.ResultReply) and reply.text == "answer 7"
    for line in ("Endpoints: asyncjobs/FISK_AI", "a2a/prompts", "Queue Context: ", "Queue Workers: 1 (config)"):
        assert line in banner, banner
    assert "Tries: 3" in banner and "Queue Concurrency: 100" in banner
    stored = records[task_id]
    assert stored["state"] == "complete" and stored["tries"] == 1 and "last_err" not in stored
    answer = stored["result"]["payload"]  # the v1 result, as an object
    assert answer["protocol"] == "io.choria.fisk-ai.v1.result"
    assert (answer["stop_reason"], answer["text"]) == ("end_turn", "answer 3")
    assert answer["request"] == "2fT8kMxQ1aBcDeFgHiJkLmNoPqR"
    assert answer["recipient"] == {"name": "ops-console"} and answer["sender"]["name"] == AGENT
    assert answer["usage"]["llm_calls"] == 2 and answer["usage"]["tool_calls"] == 1 and calls == 2
    assert (tmp_path / "ledger").read_text().count("job-3") == 1


async def test_refusals_terminate_without_retry_and_a_completed_session_is_answered_from_its_journal(
    nats_server: str, nc: NatsClient, tmp_path: Path
) -> None:
    await _provision(nc)
    good = await _add(nc, 1, as_string=False)  # the library encoding: the message as an object
    empty = await _add(nc, 2, prompt="   ")
    other = prompt_request("x", sender="tester")
    wrong = Task.new(
        "fisk-ai:run", json.dumps({**other.to_wire(), "protocol": "io.choria.fisk-ai.v1.request.read"}).encode()
    )
    await TaskStore(nc).add(wrong, queue="FISK_AI")
    busy = await _add(nc, 4, prompt="job 4 rate-limit")
    too_long = await _add(nc, 5, prompt="job 5 too-long")
    gated = await _add(nc, 7, prompt="job 7 gated")
    config = write_jobs_config(tmp_path)
    with MessagesServer(responder=job_responder()) as model, workers(config, nats_server, model.base_url, 1):
        records = await _until_final(nc, [good, empty, wrong.id, busy, too_long, gated], 30)
        # A confirmation-gated command is refused (nobody watches a queued job) and the model is told why.
        assert records[gated]["result"]["payload"]["text"] == "answer 7"
        told = next(r for r in model.requests if r.tool_results() and "job 7" in str(r.messages[0]))
        refusal = json.loads(str(told.tool_results()[0]["content"]))
        assert refusal["allowed"] is False and "queued jobs" in refusal["reason"], refusal
        # A failed run is a completed job: a v1 error with its code, not retried.
        for task_id, code in ((busy, "provider_busy"), (too_long, "context_exceeded")):
            error = records[task_id]["result"]["payload"]
            assert records[task_id]["state"] == "complete" and records[task_id]["tries"] == 1
            assert error["protocol"] == "io.choria.fisk-ai.v1.error"
            assert (error["code"], error["stop_reason"]) == (code, "error"), error
        assert records[empty]["state"] == "terminated" and records[empty]["tries"] == 1
        assert records[empty]["last_err"] == "terminate task: the payload's prompt is empty"
        assert records[wrong.id]["state"] == "terminated"
        assert records[wrong.id]["last_err"].startswith("terminate task: ")
        assert records[good]["result"]["payload"]["text"] == "answer 1"
        calls = len(model.requests)
        # Finished but the answer never stored (a worker died before saving it): the redelivery is answered
        # from the journal, with no model call.
        store = TaskStore(nc)
        stored = await store.load(good)
        await store.save(
            stored.task.with_changes(state="active", tried="2020-01-01T00:00:00Z", result=None), expected_seq=stored.seq
        )
        js = nc.jetstream()  # pyright: ignore[reportUnknownMemberType]
        await js.publish(queue_subject("FISK_AI", good), queue_item(good))
        again = (await _until_final(nc, [good], 20))[good]
        assert again["result"]["payload"]["text"] == "answer 1" and len(model.requests) == calls
        assert again["result"]["payload"]["usage"]["llm_calls"] == 1


def test_missing_storage_refuses_to_start_naming_the_ajc_command(nats_server: str, tmp_path: Path) -> None:
    config = write_jobs_config(tmp_path)
    worker = start_worker(config, nats_server, "http://127.0.0.1:9")
    try:
        assert worker.proc.wait(timeout=30) == 1
    finally:
        worker.close()
    err = worker.stderr()
    assert 'building the jobs endpoint: connecting to queue "FISK_AI": storage not ready' in err
    assert "ajc tasks initialize" in err and "Traceback" not in err


async def test_three_workers_take_200_jobs_through_a_kill_and_a_drain_each_answered_once(
    nats_server: str, nc: NatsClient, tmp_path: Path
) -> None:
    """Steps:
    1. Three `fiskai serve --workers 2` share one queue (run time 4 s) and one session directory.
    2. 200 jobs (both payload encodings); every third runs the non-idempotent command once.
    3. After 50 answers one worker is SIGKILLed; after 100 another is SIGTERMed (it drains: exit 0).
    4. Every job ends `complete` with its own answer, stored exactly once (one `complete` advisory per task), and
       the effect ledger shows no command ran twice: the killed worker's jobs resumed from their journals.
    """
    await _provision(nc, run_time=4, tries=50)
    completions: Counter[str] = Counter()

    async def on_state(msg: Any) -> None:
        event = json.loads(msg.data)
        if event.get("state") == "complete":
            completions[event["task_id"]] += 1

    await nc.subscribe("CHORIA_AJ.E.task_state.>", cb=on_state)  # pyright: ignore[reportUnknownMemberType]
    ids = [await _add(nc, number, as_string=number % 2 == 0) for number in range(200)]
    config = write_jobs_config(tmp_path, sleep=0.05)
    with (
        MessagesServer(responder=job_responder(delay=0.01)) as model,
        workers(config, nats_server, model.base_url, 3, "--workers", "2", "-v") as (killed, drained, survivor),
    ):
        for threshold, act in (
            (50, lambda: killed.proc.kill()),
            (100, lambda: drained.proc.send_signal(signal.SIGTERM)),
        ):
            for _ in range(600):
                if len(completions) >= threshold:
                    break
                await anyio.sleep(0.1)
            act()
        assert await anyio.to_thread.run_sync(lambda: drained.proc.wait(30)) == 0
        assert "draining: no new work is taken" in drained.stderr()
        records = await _until_final(nc, ids, 80)
        assert survivor.proc.poll() is None
        logs = survivor.stderr() + drained.stderr()
        # The killed worker's jobs and the drained worker's suspended ones were redelivered and resumed.
        assert logs.count("resume=True") >= 1, logs[-2000:]
    texts = {task_id: records[task_id].get("result", {}).get("payload", {}).get("text") for task_id in ids}
    # On a miss, the records themselves: a final state without its answer has been seen once in 20 loaded runs.
    wrong = [json.dumps(records[task_id])[:1500] for n, task_id in enumerate(ids) if texts[task_id] != f"answer {n}"]
    assert not wrong, wrong[:3]
    assert all(records[task_id]["state"] == "complete" for task_id in ids)
    # Advisories are published after the save: wait for the last ones, then no task may have two. Two may be
    # missing: each of the killed worker's two slots can die between storing an answer and announcing it.
    for _ in range(50):
        if len(completions) == 200:
            break
        await anyio.sleep(0.1)
    assert max(completions.values()) == 1 and len(completions) >= 198, len(completions)
    ran = Counter(line.split()[-1] for line in (tmp_path / "ledger").read_text().splitlines())
    assert max(ran.values()) == 1, [name for name, count in ran.items() if count > 1]
    assert len(ran) >= 60  # 67 tool jobs; only a call cut by the kill between its intent and its start is missing


async def test_a_broken_queue_is_a_fault_the_worker_exits_non_zero(
    nats_server: str, nc: NatsClient, tmp_path: Path
) -> None:
    """The queue's stream removed under a running worker: a channel fault, so a supervisor restarts it."""
    await _provision(nc)
    config = write_jobs_config(tmp_path)
    with MessagesServer(responder=job_responder()) as model, workers(config, nats_server, model.base_url, 1) as [one]:
        jsm = nc.jsm()  # pyright: ignore[reportUnknownMemberType]
        await jsm.delete_stream("CHORIA_AJ_Q_FISK_AI")
        code = await anyio.to_thread.run_sync(lambda: one.proc.wait(30))
        err = one.stderr()
    assert code == 1, err
    assert 'fiskai serve: error: an endpoint failed: queue "FISK_AI" cannot be read' in err
    assert "ajc queue info FISK_AI" in err and "Traceback" not in err


@pytest.mark.parametrize("sessions", ["file", "jetstream"])
async def test_a_job_past_its_run_time_is_taken_over_and_the_first_worker_stops_before_its_next_record(
    sessions: str, nats_server: str, nc: NatsClient, tmp_path: Path
) -> None:
    """Steps:
    1. The queue's run time is 2 s; the job's command takes 8 s, so the queue redelivers it mid-command.
    2. The second worker claims the journal (it is still held: the job goes back to the queue for a moment).
    3. The first worker's command ends; it sees the claim before journaling anything more and stops: no answer.
    4. The redelivery resumes the journal; the interrupted command is not run again (the model is told it may
       have taken effect) and the job is answered once.
    With jetstream sessions (several machines) there is no lock: the claimant resumes at once, and the first
    worker's next append is refused by the stream's fence.
    """
    await _provision(nc, run_time=2, tries=20)
    extra = ""
    if sessions == "jetstream":
        js = nc.jetstream()  # pyright: ignore[reportUnknownMemberType]
        await js.add_stream(  # pyright: ignore[reportUnknownMemberType]
            StreamConfig(
                name="RUNS",
                subjects=["fiskai.runs.>"],
                max_msgs_per_subject=1,
                discard=DiscardPolicy.NEW,
                discard_new_per_subject=True,
            )
        )
        extra = "harness: {sessions: {backend: jetstream, options: {stream: RUNS}}}\n"
    task_id = await _add(nc, 3, prompt="do job 3 slow")
    config = write_jobs_config(tmp_path, extra=extra)
    with (
        MessagesServer(responder=job_responder()) as model,
        workers(config, nats_server, model.base_url, 2, "-v") as pair,
    ):
        records = await _until_final(nc, [task_id], 60)
        logs = ""
        for _ in range(150):  # with jetstream the claimant may answer before the first worker's command ends
            logs = "".join(worker.stderr() for worker in pair)
            if "was taken over by another worker" in logs:
                break
            await anyio.sleep(0.1)
    stored = records[task_id]
    assert stored["state"] == "complete" and stored["result"]["payload"]["text"] == "answer 3", stored
    assert "was taken over by another worker" in logs, logs[-3000:]
    assert (tmp_path / "ledger").read_text().count("job-3") == 1
    told = [r for r in model.requests if r.tool_results()][-1].tool_results()[0]
    assert "may already have taken effect" in str(told.get("content")), told


async def test_a_second_interrupt_stops_a_running_job_and_the_next_worker_resumes_it(
    nats_server: str, nc: NatsClient, tmp_path: Path
) -> None:
    """Two SIGTERMs while the job's command runs: the command is stopped, nothing is stored on the task, and a
    worker started afterwards takes the redelivered job, resumes its journal (the stopped command is not run
    again) and answers it once."""
    await _provision(nc, run_time=2, tries=20)
    task_id = await _add(nc, 3, prompt="do job 3 slow")
    config = write_jobs_config(tmp_path)
    ledger = tmp_path / "ledger"
    with MessagesServer(responder=job_responder()) as model:
        with workers(config, nats_server, model.base_url, 1) as [first]:
            for _ in range(300):  # the command is running once it wrote the ledger
                if ledger.exists() and "job-3" in ledger.read_text():
                    break
                await anyio.sleep(0.05)
            first.proc.send_signal(signal.SIGTERM)
            await anyio.sleep(0.5)
            first.proc.send_signal(signal.SIGTERM)
            code = await anyio.to_thread.run_sync(lambda: first.proc.wait(30))
            assert "stopping now" in first.stderr()
        assert code == 0
        assert (await _view(nc, task_id))["state"] == "active"  # nothing stored: the queue redelivers it
        with workers(config, nats_server, model.base_url, 1):
            records = await _until_final(nc, [task_id], 60)
    assert records[task_id]["result"]["payload"]["text"] == "answer 3"
    assert ledger.read_text().count("job-3") == 1
