"""The servers the harness's tool set is served by: what `fiskai a2a` (and `fiskai mcp`) run.

Part of the harness: a server face's command parses its flags, opens the harness and serves what is
built here, so limits, skipped tools and banners are decided in one place for every face that serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from fiskai_cli._settings import reported
from fiskai_cli._version import VERSION
from fiskai_cli.ui.text import items

if TYPE_CHECKING:
    from fiskai_a2a import Server as A2AServer
    from fiskai_a2a.nats_transport import NatsTransport
    from fiskai_cli._wiring import Harness

__all__ = ["a2a_banner", "a2a_server"]


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
