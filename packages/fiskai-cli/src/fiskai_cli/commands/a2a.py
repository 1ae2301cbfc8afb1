"""`fiskai a2a`: serve the configured application's tools to other agents over NATS.

An adapter over the harness: the harness builds the a2a face's tool set and the one NATS connection
(from `--server`, `--context` or `nats_context`); this module serves the set on it. Also holds the
`--context`/`--server` options that `discover` shares.
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable
from functools import partial
from typing import TextIO

import anyio
import click

from fiskai_a2a import A2AError, Server
from fiskai_a2a.nats_transport import NatsTransport
from fiskai_cli import _wiring as wiring
from fiskai_cli._observe import start_telemetry
from fiskai_cli._serving import a2a_banner, a2a_server

__all__ = ["a2a", "connection_options"]

_DRAIN_SECONDS = 10.0
"""How long a stopping server waits for its stopped calls to be answered."""


def connection_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--context` and `--server`, shared by `a2a` and `discover`."""
    command = click.option(
        "--server",
        "server_url",
        metavar="URL",
        help="Connect to this NATS URL instead of a context (nats://host:4222).",
    )(command)
    return click.option(
        "--context",
        "context_name",
        metavar="NAME",
        help="NATS context to connect with (the nats CLI's ~/.config/nats/context/NAME.json); "
        "default: nats_context from the configuration.",
    )(command)


@click.command("a2a")
@connection_options
@click.pass_context
def a2a(ctx: click.Context, server_url: str | None, context_name: str | None) -> None:
    """Serve the tools to other agents over NATS (agent-to-agent).

    Needs `expose.agent.agent_to_agent: true`. Serves the application's tools that pass include/exclude
    and expose.agent.tools; confirmation-gated tools (ai:confirm, harness.confirm_tags) are never served,
    since no operator is there to approve them. At most expose.agent.a2a.max_concurrent_tools calls run at
    once (default 2), each for at most expose.agent.a2a.tool_timeout (default 30s). Instances with the same
    identity share the work. Runs until interrupted.

    \b
    Examples:
      fiskai -c agent.yaml a2a
      fiskai -c agent.yaml a2a --server nats://127.0.0.1:4222
      fiskai discover fixturectl --server nats://127.0.0.1:4222    (from another shell)
    """
    # A named connection relaxes the server mode's own nats_context requirement.
    target = wiring.NatsTarget(server_url=server_url, context_name=context_name)
    settings = wiring.load_settings(ctx, "mcp" if target.given else "server", required=True)
    assert settings is not None, "required=True raises instead of returning None"
    config = settings.config
    if not config.expose.agent.agent_to_agent:
        raise click.ClickException(
            f'fiskai a2a requires expose.agent.agent_to_agent: true in "{settings.path}"; this agent is not '
            "configured to serve its tools to other agents"
        )
    if not config.has_tool_source:
        raise click.ClickException(
            f'application_path is required for the a2a server in "{settings.path}": a2a serves the wrapped '
            "application's tools"
        )
    _log_to_stderr()
    try:
        anyio.run(_serve, settings, target)
    except KeyboardInterrupt:
        pass
    click.echo("a2a server stopped", err=True)


async def _serve(settings: wiring.Settings, target: wiring.NatsTarget) -> None:
    # Each served call is an execute_tool span, joining the caller's trace when the request carried it.
    observed = start_telemetry(settings, no_telemetry=False)
    try:
        with observed.installed():
            async with wiring.open_harness(settings, "a2a", nats=target) as harness:
                server = a2a_server(harness)
                await _serve_on(server, await harness.connected())
    except* A2AError as group:
        # A failure inside the serving task groups arrives grouped (nested); it is still one line for the operator.
        first: BaseException = group
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise click.ClickException(str(first)) from None
    finally:
        observed.shutdown(verbose=False)


async def _serve_on(server: Server, transport: NatsTransport) -> None:
    identity = server.identity
    async with anyio.create_task_group() as tasks:
        await tasks.start(_stop_on_signal, tasks.cancel_scope, server)
        await tasks.start(partial(transport.serve, identity=identity, version=server.version, handler=server))
        click.echo(a2a_banner(server, transport), err=True)


async def _stop_on_signal(scope: anyio.CancelScope, server: Server, *, task_status: anyio.abc.TaskStatus[None]) -> None:
    """On SIGINT or SIGTERM, answer the calls in flight (their commands are stopped), then stop serving.

    A second signal during that ends the process the default way.
    """
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            break
    with anyio.move_on_after(_DRAIN_SECONDS):
        await server.stop_calls(f'agent "{server.identity}" is shutting down')
    scope.cancel()


class _StderrLines(logging.StreamHandler[TextIO]):
    """The handler `fiskai a2a` adds, recognizable so it is added once."""


def _log_to_stderr() -> None:
    """The engine's per-call lines (`Running tool call`, ...) go to stderr, once however often this runs."""
    logger = logging.getLogger("fiskai_a2a")
    logger.setLevel(logging.INFO)
    if not any(isinstance(handler, _StderrLines) for handler in logger.handlers):
        handler = _StderrLines(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
