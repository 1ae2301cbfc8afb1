"""The server the harness's tool set is served by over MCP: what `fiskai mcp` runs (a2a: `fiskai_cli.serve`).

Part of the harness: a server face's command parses its flags, opens the harness and serves what is
built here, so limits, skipped tools and banners are decided in one place for every face that serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from fiskai_cli._version import VERSION

if TYPE_CHECKING:
    from collections.abc import Callable

    from fiskai_cli._wiring import Harness
    from fiskai_core.prompter import Prompter
    from fiskai_core.tools import Tool
    from fiskai_mcp import ServerOptions

__all__ = ["McpServing", "mcp_server"]


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

    from fiskai_cli._hooks import command_hooks
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
        hooks=command_hooks(harness.settings),
        pii_mode=config.harness.pii.mode,
    )
    return McpServing(build_server(served, options, approver=approver, log=log), options, served)
