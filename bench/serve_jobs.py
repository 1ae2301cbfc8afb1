"""The queued-jobs half of bench/serve.py: jobs per second through `fiskai serve` at 1, 2 and 4 workers.

Per worker count: a queue laid out as `ajc` lays it out, one `fiskai serve --workers N` (a real subprocess, file
session store), and rounds of `jobs` tasks enqueued as `ajc tasks add` stores them; a round's time runs from the
first enqueue to the last `complete` task-state advisory. Every job is one model call answered at once by the
scripted Messages server (its service time is recorded), so what is measured is the harness's own cost per job:
pull, load and save the task record three times, create and fill the journal (fsync per record), the agent loop,
the answer, the ack. A bare NATS request/reply is measured in the same rounds, interleaved, as the floor.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import nats
from nats.aio.msg import Msg

from fiskai_a2a.jobs import Task, encode_prompt_payload, prompt_request
from fiskai_a2a.jobs.store import TaskStore
from fiskai_a2a.jobs.testing import provision_queue, provision_task_store
from fiskai_agent.testing import MessagesServer

__all__ = ["WORKER_COUNTS", "measure_jobs", "print_jobs"]

WORKER_COUNTS = (1, 2, 4)
ECHO = "bench.jobs.echo"


def _config(folder: Path, app: Path, queue: str) -> Path:
    config = folder / f"jobs-{queue}.yaml"
    config.write_text(
        f"identity: bench-jobs\napplication_path: {app}\nsystem_prompt: You run jobs.\n"
        "llm: {model: claude-sonnet-4-6}\n"
        f"expose: {{agent: {{jobs: {{queue: {queue}}}}}}}\n",
        encoding="utf-8",
    )
    return config


async def _round(url: str, queue: str, jobs: int, model: MessagesServer) -> tuple[float, float, float]:
    """(seconds for `jobs` jobs, the model's service seconds in them, one bare request's seconds)."""
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    try:
        done = anyio.Event()
        seen: set[str] = set()

        async def on_state(msg: Msg) -> None:
            if b'"state":"complete"' in msg.data:
                seen.add(msg.subject)
                if len(seen) >= jobs:
                    done.set()

        async def echo(msg: Msg) -> None:
            await msg.respond(msg.data)

        await nc.subscribe("CHORIA_AJ.E.task_state.>", cb=on_state)  # pyright: ignore[reportUnknownMemberType]
        await nc.subscribe(ECHO, cb=echo)  # pyright: ignore[reportUnknownMemberType]
        payload = b'{"protocol":"io.choria.fisk-ai.v1.request.prompt"}' + b" " * 250
        started = time.perf_counter()
        await nc.request(ECHO, payload, timeout=10)
        floor = time.perf_counter() - started
        store = TaskStore(nc)
        served_before = len(model.service_seconds)
        started = time.perf_counter()
        for _ in range(jobs):
            task = Task.new("fisk-ai:run", encode_prompt_payload(prompt_request("status?", sender="bench")))
            await store.add(task, queue=queue)
        with anyio.fail_after(300):
            await done.wait()
        elapsed = time.perf_counter() - started
        return elapsed, sum(model.service_seconds[served_before:]), floor
    finally:
        await nc.close()


def measure_jobs(
    url: str,
    folder: Path,
    app: Path,
    model: MessagesServer,
    *,
    rounds: int,
    jobs: int,
    wait_for: Callable[[subprocess.Popen[str], str], None],
) -> dict[int, dict[str, list[float]]]:
    """Per worker count: per-round jobs/s, harness seconds per job, and the bare request's seconds."""

    async def provision(queue: str) -> None:
        nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
        try:
            if queue == f"BENCH{WORKER_COUNTS[0]}":
                await provision_task_store(nc)
            await provision_queue(nc, queue, run_time=600, tries=3, concurrency=100)
        finally:
            await nc.close()

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    env.update(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="bench")
    results: dict[int, dict[str, list[float]]] = {}
    for count in WORKER_COUNTS:
        queue = f"BENCH{count}"
        anyio.run(provision, queue)
        config = _config(folder, app, queue)
        command = [sys.executable, "-m", "fiskai_cli", "-c", str(config), "serve", "--server", url]
        command += ["--state-dir", str(folder / "runs"), "--workers", str(count)]
        worker = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        samples: dict[str, list[float]] = {"rate": [], "harness": [], "floor": []}
        try:
            wait_for(worker, "Taking queued jobs")
            anyio.run(_round, url, queue, jobs, model)  # warm-up: imports, first journals, first inboxes
            for _ in range(rounds):
                elapsed, model_seconds, floor = anyio.run(_round, url, queue, jobs, model)
                samples["rate"].append(jobs / elapsed)
                # With N workers the model's time overlaps; the harness's own cost is reported at N = 1.
                samples["harness"].append((elapsed - model_seconds) / jobs)
                samples["floor"].append(floor)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            if worker.stderr is not None:
                worker.stderr.close()
        results[count] = samples
    return results


def print_jobs(results: dict[int, dict[str, Any]], *, rounds: int, jobs: int) -> None:
    floor = statistics.median(value for samples in results.values() for value in samples["floor"])
    print()
    print(
        f"fiskai serve queued jobs, {rounds} rounds of {jobs} jobs per worker count (medians; one model call per job)"
    )
    print(f"bare NATS request/reply (floor): {floor * 1000:.3f} ms")
    print(f"{'workers':<10}{'jobs/s':>10}{'ms per job':>12}{'ratio':>10}{'harness ms/job (1 worker)':>28}")
    for count, samples in results.items():
        rate = statistics.median(samples["rate"])
        per_job = 1 / rate
        harness = f"{statistics.median(samples['harness']) * 1000:.3f}" if count == 1 else ""
        print(f"{count:<10}{rate:>10.1f}{per_job * 1000:>12.3f}{per_job / floor:>10.1f}{harness:>28}")
