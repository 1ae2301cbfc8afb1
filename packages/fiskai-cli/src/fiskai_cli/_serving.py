"""The servers the harness's tool set is served by: what `fiskai a2a` (and `fiskai mcp`) run.

Part of the harness: a server face's command parses its flags, opens the harness and serves what is
built here, so limits, skipped tools and banners are decided in one place for every face that serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from fiskai_cli._settings import reported
from fiskai_cli._version import VERSION
from fiskai_cli.ui.text import items

if TYPE_CHECKING:
    from collections.abc import Callable

    from fiskai_a2a import Server as A2AServer
    from fiskai_a2a.nats_transport import NatsTransport
    from fiskai_cli._wiring import Harness
    from fiskai_core.prompter import Prompter
    from fiskai_core.tools import Tool
    from fiskai_mcp import ServerOptions

__all__ = ["McpServing", "a2a_banner", "a2a_server", "mcp_server"]


class McpServing:
    """An MCP server over the mcp face's tools: the server, the options it was built with, what it serves."""

    __slots__ = ("options", "served", "server")

    def __init__(self, server: Any, options: ServerOptions, served: list[Tool]) -> None:
        self.server = server
        self.options = options
        self.served = served


def mcp_server(harness: Harness, *, approver: Prompter | None, log: Callable[[str], None]) -> McpServing:
    """The MCP server over the mcp face's tools, with `expose.agent.mcp`'s settings.

    Raises:
        click.ClickException: nothing is left to serve.
    """
    from datetime import timedelta

    from fiskai_mcp import ConfirmMode, ServerOptions, build_server, servable_tools

    config = harness.config
    settings = config.expose.agent.mcp
    served = servable_tools(harness.tools.tools(), warn=lambda text: log(f"warning: {text}"))
    if not served:
        raise click.ClickException(
            f'no tools available after filtering; check include/exclude in "{harness.settings.path}"'
            if config.application_path
            else "no tools available to expose over MCP"
        )
    options = ServerOptions(
        name=config.identity or "fiskai",
        version=VERSION,
        instructions=settings.instructions,
        confirm_mode=ConfirmMode(settings.confirm_over_mcp),
        confirm_tags=tuple(config.harness.confirm_tags),
        max_concurrent=settings.max_concurrent_tools,
        tool_timeout=(settings.tool_timeout or timedelta(0)).total_seconds(),
    )
    return McpServing(build_server(served, options, approver=approver, log=log), options, served)


def a2a_server(harness: Harness) -> A2AServer:
    """The A2A server over the a2a face's tools, with `expose.agent.a2a`'s limits; skipped tools are warned of.

    Raises:
        click.ClickException: nothing is left to serve.
    """
    from fiskai_a2a import DEFAULT_MAX_CONCURRENT, DEFAULT_TOOL_TIMEOUT, Server

    config = harness.config
    limits = config.expose.agent.a2a
    with reported():
        server = Server(
            identity=config.identity,
            version=VERSION,
            tools=harness.tools.tools(),
            confirm_tags=config.harness.confirm_tags,
            max_concurrent=limits.max_concurrent_tools or DEFAULT_MAX_CONCURRENT,
            tool_timeout=limits.tool_timeout.total_seconds() if limits.tool_timeout else DEFAULT_TOOL_TIMEOUT,
        )
    for skipped in server.skipped:
        click.echo(f"warning: skipping tool {skipped.name}: {skipped.reason}", err=True)
    return server


def a2a_banner(server: A2AServer, transport: NatsTransport) -> str:
    """What `fiskai a2a` says once it serves: who, where, and on which subjects."""
    from fiskai_a2a.nats_transport import subject_for
    from fiskai_a2a.transport import Route

    identity = server.identity
    head = (
        f"Serving {len(server.tools)} tools over a2a as {identity}/{server.version} on {transport.context.describe()}"
    )
    body = items(
        [
            ("Discovery", subject_for(Route(agent=identity, kind="discovery"))),
            ("Tools", subject_for(Route(agent=identity, kind="tool"))),
            ("Exposed", ", ".join(server.tools)),
        ]
    )
    return f"{head}\n{body}"
