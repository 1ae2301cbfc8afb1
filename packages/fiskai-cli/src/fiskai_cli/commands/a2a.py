"""`fiskai a2a`: kept as an alias of `fiskai serve` with the tool endpoint alone.

Also holds the `--context`/`--server` options that `serve` and `discover` share.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from fiskai_cli import _wiring as wiring
from fiskai_cli.serve.startup import Flags, start

__all__ = ["a2a", "connection_options"]


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
    """Serve the tools to other agents over NATS: `fiskai serve` with the tool endpoint alone.

    Kept for configurations written for it: accepts expose.agent.a2a.serve_tools: true or the older
    expose.agent.agent_to_agent: true, and serves the 0.0.5 tool protocol (ack, keepalives, reply; a call
    over expose.agent.a2a.max_concurrent_tools is refused with code capacity). Callers older than 0.0.5
    cannot use it. Confirmation-gated tools (ai:confirm, harness.confirm_tags) are never served.

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
    if not (config.expose.agent.agent_to_agent or config.expose.agent.a2a.serve_tools):
        raise click.ClickException(
            f"fiskai a2a requires expose.agent.a2a.serve_tools: true (or the older expose.agent.agent_to_agent: "
            f'true) in "{settings.path}"; this agent is not configured to serve its tools to other agents'
        )
    if not config.has_tool_source:
        raise click.ClickException(
            f'application_path is required for the a2a server in "{settings.path}": a2a serves the wrapped '
            "application's tools"
        )
    click.echo(
        "notice: fiskai a2a is now an alias of `fiskai serve` with the tool endpoint alone (0.0.5 protocol); "
        "set expose.agent.a2a.serve_tools: true and run fiskai serve",
        err=True,
    )
    sys.exit(start(settings, Flags(target=target, tools_only=True)))
