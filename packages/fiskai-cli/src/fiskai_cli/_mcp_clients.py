"""`mcp_clients` in the harness: third-party MCP servers' tools joined to a run's or `fiskai tools`' set.

The servers are connected once per harness (strictly: one that cannot be reached or listed, or a name
that collides, stops the command with the server named) and closed with it. Their tools enter the
`ToolSet` as kind `mcp`, after the top-level `include`/`exclude` (tool-name rules, on the final
`<alias>_<tool>` name), so the agent loop, the gate and the journal treat them as they treat commands.
`fiskai serve` connects them once, for its prompts channel's runs: every conversation shares the
sessions. Served sets (`fiskai mcp`, `fiskai a2a`, serve's tool endpoint) never get them: imported tools
are not served again.

Loaded only when `mcp_clients` is set: a configuration without it never imports the `mcp` client.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

import click

from fiskai_cli._settings import Settings, reported

if TYPE_CHECKING:
    from fiskai_cli._wiring import Harness
    from fiskai_core.prompter import Prompter
    from fiskai_core.tools import ToolEntry
    from fiskai_mcp.client import McpClients, McpTool

__all__ = ["ImportedToolUpdates", "attach_imported_tools", "open_imported_tools", "top_level_kept"]

_MISSING = "mcp_clients needs the MCP client: install the mcp extra, pip install 'fiskai-cli[mcp]'"


def top_level_kept(settings: Settings, tools: Sequence[McpTool]) -> list[McpTool]:
    """The top-level include/exclude name rules applied to final names (imported tools carry no tags)."""
    config = settings.config
    kept = list(tools)
    try:
        if config.include.tools:
            patterns = [re.compile(p) for p in config.include.tools]
            kept = [t for t in kept if any(p.search(t.name) for p in patterns)]
        if config.exclude.tools:
            patterns = [re.compile(p) for p in config.exclude.tools]
            kept = [t for t in kept if not any(p.search(t.name) for p in patterns)]
    except re.error as err:
        raise click.ClickException(f"invalid include/exclude pattern: {err}") from err
    return kept


async def open_imported_tools(
    settings: Settings,
    stack: AsyncExitStack,
    *,
    taken: Sequence[str],
    prompter: Prompter | None,
) -> tuple[McpClients, list[ToolEntry]]:
    """Connect every `mcp_clients` server (closed with `stack`) and return the set and its tool entries.

    Raises:
        click.ClickException: the extra is missing, a server cannot be reached or listed, or names collide.
    """
    try:
        from fiskai_mcp.client import McpServerError, open_mcp_clients
    except ImportError as err:
        raise click.ClickException(_MISSING) from err
    from fiskai_core.tools import ToolEntry

    config = settings.config
    try:
        clients = await stack.enter_async_context(
            open_mcp_clients(
                config.mcp_client_entries,
                root=settings.folder,
                taken=taken,
                strict=True,
                strip_env=config.credential_env_names(),
                pass_env=config.passed_env_names(),
                prompter=prompter,
            )
        )
    except McpServerError as err:
        raise click.ClickException(str(err)) from None
    entries = [ToolEntry(tool=tool, kind="mcp", origin=tool.server) for tool in top_level_kept(settings, clients.tools)]
    return clients, entries


class ImportedToolUpdates:
    """The imported tools as a part of a run's set that `watch_tools` may change (`fiskai_agent.ToolUpdates`)."""

    kind = "mcp"

    def __init__(self, settings: Settings, clients: McpClients) -> None:
        self._settings = settings
        self._clients = clients

    @property
    def changes(self) -> int:
        """How many times a watched server's tools were swapped in."""
        return self._clients.changes

    def entries(self) -> list[ToolEntry]:
        """The imported tools now, after the top-level include/exclude."""
        from fiskai_core.tools import ToolEntry

        kept = top_level_kept(self._settings, self._clients.tools)
        return [ToolEntry(tool=tool, kind="mcp", origin=tool.server) for tool in kept]

    def take_notices(self) -> list[str]:
        """What the watched servers reported since the last model call."""
        return self._clients.take_notices()


async def attach_imported_tools(harness: Harness, stack: AsyncExitStack, prompter: Prompter | None) -> None:
    """Connect the servers for `harness` (run, tools, serve channel runs) and add their tools to its set as kind `mcp`."""
    settings = harness.settings
    harness.notices.extend(("config_renamed_key", notice) for notice in settings.config.notices())
    harness.mcp, entries = await open_imported_tools(settings, stack, taken=harness.tools.names(), prompter=prompter)
    with reported():
        harness.tools = harness.tools.with_entries(entries)
    if any(entry.watch_tools for entry in settings.config.mcp_client_entries):
        harness.tool_updates = ImportedToolUpdates(settings, harness.mcp)
