"""Composition of a serving worker: the harness built once, the endpoints over it, the banner, the host."""

from __future__ import annotations

import os
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import TYPE_CHECKING

import click

from fiskai_cli import _wiring as wiring
from fiskai_cli._version import VERSION

from ._banner import banner, go_duration
from ._channel import Channel, Work, WorkOutcome
from ._host import ServeHost
from ._runner import TurnPrompter

if TYPE_CHECKING:
    from .startup import Flags

__all__ = ["serve_with"]


async def serve_with(settings: wiring.Settings, flags: Flags, connection: wiring.ModelConnection | None) -> int:
    """Serve with telemetry installed: each served tool call is an execute_tool span joining its caller's trace."""
    from fiskai_cli._observe import start_telemetry

    observed = start_telemetry(settings, no_telemetry=False)
    try:
        with observed.installed():
            return await _serve(settings, flags, connection)
    finally:
        observed.shutdown(verbose=False)


async def _serve(settings: wiring.Settings, flags: Flags, connection: wiring.ModelConnection | None) -> int:
    """Serve until drained; 0 after a drain, 1 after a fault (a supervisor restarts the worker).

    Raises:
        click.ClickException: a start-up refusal (storage missing, nothing to serve, NATS unreachable).
    """
    from fiskai_a2a import A2AError

    config = settings.config
    a2a = config.expose.agent.a2a
    prompts = None if flags.tools_only else a2a.prompts
    jobs = None if flags.tools_only else config.expose.agent.jobs
    web = None if flags.tools_only else config.expose.agent.web
    channels_on = prompts is not None or jobs is not None or web is not None
    async with AsyncExitStack() as stack:
        harness = await stack.enter_async_context(
            wiring.open_harness(
                settings,
                "serve",
                checkpointing=channels_on,
                state_dir=flags.state_dir,
                nats=flags.target,
                prompter=TurnPrompter(),  # ask_human answers through each turn's own prompter
            )
        )
        _check_storage(harness)
        if flags.work_dir is not None:
            os.chdir(flags.work_dir)  # every command tool of every run starts here
        tools = None
        tool_rows: list[tuple[str, str]] = []
        if a2a.serve_tools or flags.tools_only:
            tools, tool_rows = _tool_endpoint(harness)  # refuses a set with nothing to serve before connecting
        service = None
        transport = None
        if prompts is not None or tools is not None or jobs is not None:
            transport = await harness.connected()
        if transport is not None and (prompts is not None or tools is not None):
            from fiskai_a2a.nats_service import ServiceHost

            service = ServiceHost(transport, config.identity)
        sections: list[list[tuple[str, str]]] = []
        channels: list[Channel] = []
        endpoints: list[str] = []
        runner = None
        if channels_on:
            assert connection is not None
            runner = await _runner(stack, harness, connection, flags)
        queue_workers = "1 (default; no queue)"
        queue_context = ""
        if jobs is not None:
            from ._jobs_setup import jobs_channel

            assert transport is not None
            jobs_endpoint = await jobs_channel(stack, harness, transport, jobs, flags)
            channels.append(jobs_endpoint)
            endpoints.append(jobs_endpoint.name)
            sections.append(jobs_endpoint.banner())
            queue_workers = f"{jobs_endpoint.workers} ({'flag' if flags.workers else 'config'})"
            queue_context = jobs_endpoint.context
        elif flags.workers:
            queue_workers = f"{flags.workers} (flag)"
        if prompts is not None:
            assert service is not None
            channel = _prompts_channel(harness, service, prompts.workers, prompts.elicit, a2a.request_timeout)
            channels.append(channel)
            endpoints.append(channel.name)
            sections.append(channel.banner())
        if web is not None:
            from ._web_start import web_channel

            channel = web_channel(harness, web, flags.token)
            channels.append(channel)
            endpoints.append(channel.name)
            sections.append(channel.banner())
        if tools is not None:
            assert service is not None
            tools.add_to(service)
            endpoints.append("a2a")
            sections.append(tool_rows)

        def ready() -> None:
            click.echo(
                banner(
                    config,
                    endpoints=endpoints,
                    sessions=_sessions(harness),
                    knowledge=harness.knowledge_directory or "disabled",
                    agent_context=transport.context.describe() if transport is not None else "none (no NATS endpoint)",
                    workers=queue_workers,
                    queue_context=queue_context,
                    work_dir=str(flags.work_dir or os.getcwd()),
                    sections=sections,
                ),
                err=True,
            )
            if tools is not None and transport is not None:  # the line scripts wait for, as `fiskai a2a` printed it
                served = tools.server
                _say(
                    f"Serving {len(served.tools)} tools over a2a as {served.identity}/{served.version} on "
                    f"{transport.context.describe()}"
                )

        host = ServeHost(runner or _NoRunner(), channels, service=service, tools=tools, say=_say)
        fault = await host.run(ready=ready)
        if fault is None:
            _say("fiskai serve stopped")
            return 0
        message = str(fault) if isinstance(fault, A2AError) else f"{type(fault).__name__}: {fault}"
        _say(f"fiskai serve: error: an endpoint failed: {message}")
        return 1
    raise AssertionError("unreachable")  # pragma: no cover


def _say(line: str) -> None:
    click.echo(line, err=True)


class _NoRunner:
    """The runner of a worker with no channel (tool endpoint only): never asked."""

    async def run(self, work: Work) -> WorkOutcome:  # pragma: no cover - no channel hands it work
        raise AssertionError(f"no channel is enabled, yet {work.channel} handed work")


def _check_storage(harness: wiring.Harness) -> None:
    from fiskai_runstate import FileJournalStore

    journal = harness.journal
    if isinstance(journal, FileJournalStore) and not journal.directory.is_dir():
        raise click.ClickException(
            f'the session directory "{journal.directory}" does not exist; create it (mkdir -p -m 700 '
            f"{journal.directory}) or pass --state-dir: fiskai serve provisions nothing"
        )


def _sessions(harness: wiring.Harness) -> str:
    if harness.journal is None:
        return "none (no channel)"
    sessions = harness.config.harness.sessions
    if sessions.backend == "jetstream":
        return f"jetstream ({sessions.options.get('stream', '')})"
    return f"file ({getattr(harness.journal, 'directory', '')})"


async def _runner(stack: AsyncExitStack, harness: wiring.Harness, connection: wiring.ModelConnection, flags: Flags):
    from fiskai_agent.llm import ProviderSettings, create_provider, overrides_from_settings

    from ._runner import HarnessRunner

    llm = harness.config.llm
    observer = None
    if flags.trace_path is not None:
        from fiskai_cli.commands.run_trace import TraceFile, open_exclusive

        try:
            fd = open_exclusive(flags.trace_path)
        except OSError as err:
            raise click.ClickException(f'--trace "{flags.trace_path}": {err.strerror or err}') from err
        observer = TraceFile(flags.trace_path, fd, lambda text: _say(f"warning: {text}"))
        observer.session(model=llm.model, config=str(harness.settings.path), version=VERSION)
        stack.callback(observer.close)
    provider = create_provider(
        llm.provider,
        ProviderSettings(
            model=llm.model,
            api_key=connection.api_key,
            base_url=connection.base_url,
            call_timeout=llm.budget.call_timeout.total_seconds(),
            observer=observer,
            overrides=overrides_from_settings(llm.capabilities),
        ),
    )
    stack.push_async_callback(provider.aclose)
    return HarnessRunner(harness, provider, tool_timeout=wiring.tool_time_limit(harness.config))


def _prompts_channel(
    harness: wiring.Harness, service: object, workers: int, elicit: bool, request_timeout: timedelta
) -> Channel:
    from ._replay import pending_calls, read_conversation, session_exists
    from .prompts import PromptsChannel

    journal = harness.journal
    assert journal is not None

    async def reader(session: str, replay: int):
        return await read_conversation(journal, session, replay)

    async def exists(session: str) -> bool:
        return await session_exists(journal, session)

    async def pending(session: str):
        return await pending_calls(journal, session)

    return PromptsChannel(
        service,  # pyright: ignore[reportArgumentType]
        workers=workers,
        reader=reader,
        exists=exists,
        elicit=elicit,
        window=request_timeout.total_seconds(),
        pending=pending,
    )


def _tool_endpoint(harness: wiring.Harness):
    from fiskai_a2a import A2AError, Server
    from fiskai_a2a.nats_service import serve_subject
    from fiskai_a2a.tool_endpoint import ToolEndpoint, default_max_concurrent
    from fiskai_cli._hooks import command_hooks

    config = harness.config
    a2a = config.expose.agent.a2a
    served = harness.served
    assert served is not None
    try:
        server = Server(
            identity=config.identity,
            version=VERSION,
            tools=served.tools(),
            confirm_tags=config.harness.confirm_tags,
            tool_timeout=a2a.tool_timeout.total_seconds() if a2a.tool_timeout else 30.0,
            hooks=command_hooks(harness.settings),
            pii_mode=config.harness.pii.mode,
        )
    except A2AError as err:
        raise click.ClickException(str(err)) from None
    for skipped in server.skipped:
        _say(f"warning: skipping tool {skipped.name}: {skipped.reason}")
    tools = ToolEndpoint(server, max_concurrent=a2a.max_concurrent_tools or default_max_concurrent())

    rows = [
        ("", "Serving tools over a2a:"),
        ("Discovery", serve_subject("discovery", config.identity)),
        ("Tools", serve_subject("tool", config.identity)),
        ("Concurrency", str(tools.max_concurrent)),
        ("Tool Timeout", go_duration(timedelta(seconds=server.tool_timeout))),
        ("Exposed", "\n".join(server.tools)),
    ]
    return tools, rows
