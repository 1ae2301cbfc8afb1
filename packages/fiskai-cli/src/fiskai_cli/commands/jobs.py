"""`fiskai jobs add|view`: hand an agent work on its asyncjobs queue and read the answer, without `ajc`.

A job is a choria-io/asyncjobs task whose payload is a v1 `request.prompt`; `fiskai serve` workers with
`expose.agent.jobs` take it and store a v1 `result` or `error` on the task. Tasks written here are the same
bytes `ajc tasks add` writes, so `ajc tasks view` reads them too, and the other way round.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import TYPE_CHECKING, Any

import anyio
import click

from fiskai_cli import _wiring as wiring
from fiskai_cli._wiring import load_settings, reported
from fiskai_cli.commands.a2a import connection_options
from fiskai_cli.ui.text import json_text
from fiskai_core.config import Mode

if TYPE_CHECKING:
    from fiskai_a2a import NatsContext
    from fiskai_a2a.jobs import JobOutcome, Task

__all__ = ["jobs"]

_DEFAULT_QUEUE = "FISK_AI"
_DEFAULT_TYPE = "fisk-ai:run"
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_NS = {"ms": 1_000_000, "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}


def _duration_ns(text: str) -> int:
    """A Go-style duration (`90s`, `10m`, `1h30m`) in nanoseconds."""
    parts = _DURATION_PART.findall(text)
    if not text or "".join(number + unit for number, unit in parts) != text:
        raise click.BadParameter(f'"{text}" is not a duration such as 90s, 10m or 1h30m', param_hint="--deadline")
    return int(sum(float(number) * _UNIT_NS[unit] for number, unit in parts))


def _target(ctx: click.Context, server_url: str | None, context_name: str | None, what: str) -> NatsContext:
    config = None
    if not (server_url or context_name):
        settings = load_settings(ctx, Mode.MCP, required=False)
        config = settings.config if settings is not None else None
    return wiring.nats_target(
        wiring.NatsTarget(server_url=server_url, context_name=context_name), config, needed_for=what
    )


_format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json` prints one object for scripts.",
)


@click.group("jobs")
def jobs() -> None:
    """Submit prompts to an agent's job queue and read the answers (asyncjobs, like `ajc`).

    The queue and the task store must exist (fiskai creates no storage); an operator makes them once:

    \b
      ajc tasks initialize
      ajc queue add FISK_AI --run-time 10m --tries 3 --concurrent 10

    \b
    Examples:
      fiskai jobs add "Which streams have no consumers?" --server nats://127.0.0.1:4222
      fiskai jobs view 3MuCSDXq3Nekz4SjeXsq6NjQke5 --wait 5m --server nats://127.0.0.1:4222
    """


@jobs.command("add")
@click.argument("prompt")
@connection_options
@click.option("--queue", default=_DEFAULT_QUEUE, show_default=True, help="The asyncjobs queue the agent serves.")
@click.option(
    "--type", "task_type", default=_DEFAULT_TYPE, show_default=True, help="Task type (expose.agent.jobs.task_type)."
)
@click.option("--sender", default="fiskai", show_default=True, help="Who is asking (letters, digits, - and _).")
@click.option(
    "--context-file",
    type=click.File("r", encoding="utf-8"),
    help="Supporting material for the prompt, read from this file (- for stdin).",
)
@click.option("--max-tokens", type=click.IntRange(min=1), help="Lower the agent's token budget for this job.")
@click.option("--max-iterations", type=click.IntRange(min=1), help="Lower the agent's model-call cap for this job.")
@click.option("--id", "task_id", default="", help="The task id (default: a new KSUID, as ajc makes).")
@click.option("--tries", type=click.IntRange(min=1), default=10, show_default=True, help="The task's own try limit.")
@click.option("--deadline", metavar="DURATION", help="Do not start the job after this long (e.g. 1h).")
@click.option(
    "--object-payload",
    is_flag=True,
    help="Store the message as a JSON object (a library caller's encoding) instead of as text (ajc's).",
)
@_format_option
@click.pass_context
def add(
    ctx: click.Context,
    prompt: str,
    server_url: str | None,
    context_name: str | None,
    queue: str,
    task_type: str,
    sender: str,
    context_file: Any,
    max_tokens: int | None,
    max_iterations: int | None,
    task_id: str,
    tries: int,
    deadline: str | None,
    object_payload: bool,
    output_format: str,
) -> None:
    """Submit PROMPT as a job to an agent's queue.

    Prints `Enqueued task <id>`, as `ajc tasks add` does. PROMPT `-` reads the prompt from stdin. The job is a v1 request.prompt; read its answer with
    `fiskai jobs view ID` or `ajc tasks view ID --json`.

    \b
    Examples:
      fiskai jobs add "Which streams have no consumers?" --server nats://127.0.0.1:4222
      fiskai jobs add - --context ops --queue FISK_AI < question.txt
      fiskai -c agent.yaml jobs add "summarise the alerts" --max-tokens 20000 --format json
    """
    from fiskai_a2a.jobs import Task, encode_prompt_payload, now_rfc3339_nano, prompt_request

    if prompt == "-":
        prompt = sys.stdin.read()
    if not prompt.strip():
        raise click.BadParameter("the prompt is empty", param_hint="PROMPT")
    if not _NAME.match(sender):
        raise click.BadParameter(f'"{sender}" may hold only letters, digits, - and _', param_hint="--sender")
    for name, value in (("--queue", queue), ("--id", task_id)):
        if value and not re.fullmatch(r"[^\s.*>]+", value):
            raise click.BadParameter(
                f'"{value}" cannot be part of a NATS subject (no spaces, ., * or >)', param_hint=name
            )
    budget = {k: v for k, v in (("max_tokens", max_tokens), ("max_iterations", max_iterations)) if v is not None}
    request = prompt_request(
        prompt, sender=sender, context=context_file.read() if context_file is not None else None, budget=budget
    )
    extra: dict[str, Any] = {"max_tries": tries}
    if deadline:
        extra["deadline"] = now_rfc3339_nano(plus_ns=_duration_ns(deadline))
    task = Task.new(task_type, encode_prompt_payload(request, as_string=not object_payload), task_id=task_id, **extra)
    target = _target(ctx, server_url, context_name, "fiskai jobs add")
    stored = anyio.run(_add, target, task, queue)
    if output_format == "json":
        body = {"id": stored.id, "queue": stored.queue, "type": stored.type, "request": request.header.request}
        click.echo(json_text(body))
        return
    click.echo(f"Enqueued task {stored.id}")


async def _add(target: NatsContext, task: Task, queue: str) -> Task:
    from fiskai_a2a.jobs.store import TaskStore

    with reported():
        async with wiring.open_nats(target, name="fiskai jobs add") as transport:
            return (await TaskStore(transport.client).add(task, queue=queue)).task


@jobs.command("view")
@click.argument("task_id", metavar="ID")
@connection_options
@click.option(
    "--wait",
    metavar="DURATION",
    help="Wait up to this long (e.g. 5m) for the job to finish before printing.",
)
@_format_option
@click.pass_context
def view(
    ctx: click.Context,
    task_id: str,
    server_url: str | None,
    context_name: str | None,
    wait: str | None,
    output_format: str,
) -> None:
    """Show a job's state and, once it finished, its answer.

    The task is read as `ajc tasks view` reads it. Exit status: 0 when the task was read (finished with an answer, or still queued or running);
    1 when the job ended without an answer: a stored error, a refusal, an expired or unqueued task.

    \b
    Examples:
      fiskai jobs view 3MuCSDXq3Nekz4SjeXsq6NjQke5 --server nats://127.0.0.1:4222
      fiskai jobs view 3MuCSDXq3Nekz4SjeXsq6NjQke5 --wait 5m --format json | jq -r .answer.text
    """
    wait_ns = _duration_ns(wait) if wait else 0
    target = _target(ctx, server_url, context_name, "fiskai jobs view")
    job = anyio.run(_view, target, task_id, wait_ns / 1e9)
    if output_format == "json":
        click.echo(json_text(job.to_json()))
    else:
        click.echo(render(job))
    if job.failed:
        ctx.exit(1)


async def _view(target: NatsContext, task_id: str, wait_seconds: float) -> JobOutcome:
    from fiskai_a2a.jobs import outcome
    from fiskai_a2a.jobs.store import TaskStore

    deadline = time.monotonic() + wait_seconds
    with reported():
        async with wiring.open_nats(target, name="fiskai jobs view") as transport:
            store = TaskStore(transport.client)
            while True:
                job = outcome((await store.load(task_id)).task)
                if job.finished or time.monotonic() >= deadline:
                    return job
                await anyio.sleep(min(0.5, max(0.0, deadline - time.monotonic())))


def render(job: JobOutcome) -> str:
    """The text view: the task's standing, then the answer or why there is none."""
    from fiskai_a2a.protocol import serve

    task = job.task
    lines = [f"Task {task.id} ({task.type} on {task.queue or '-'})", f"  State: {task.state}  Tries: {task.tries}"]
    lines.append(f"  Created: {task.created}")
    if task.completed:
        lines.append(f"  Completed: {task.completed}")
    if task.last_err:
        lines.append(f"  Last error: {task.last_err}")
    answer = job.answer
    if isinstance(answer, serve.ResultReply):
        lines.append(f"  Stop reason: {answer.stop_reason}")
        if answer.usage:
            lines.append("  Usage: " + ", ".join(f"{key} {value}" for key, value in answer.usage.items()))
        lines += ["", answer.text or ""]
    elif isinstance(answer, serve.ErrorReply):
        code = f" [{answer.code}]" if answer.code else ""
        lines.append(f"  Stop reason: {answer.stop_reason or 'error'}")
        lines += ["", f"error{code}: {answer.error}"]
    elif task.result is not None:
        lines += ["", "result (not a v1 message):", json.dumps(task.result_payload, ensure_ascii=False)]
    elif not job.finished:
        lines += ["", "not finished yet: view again later, or pass --wait 5m"]
    return "\n".join(lines)
