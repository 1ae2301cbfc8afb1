"""The `MCP clients` section of `fiskai info`: every server connected best effort, then closed.

Where each server was reached and over which transport, how long it took, tools advertised, kept by the
entry's filters and imported (with their final names), and tools left out with their reasons. A server
that cannot be reached is reported with its (redacted) reason and the others go on; a name collision is
reported, not fatal. Loaded only when `mcp_clients` is set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from fiskai_cli._settings import Settings
from fiskai_cli.ui.text import items

if TYPE_CHECKING:
    from fiskai_mcp.client import McpTool

__all__ = ["ImportedTools", "mcp_clients", "render_mcp_clients"]


@dataclass(slots=True)
class ImportedTools:
    """What `info` shows of `mcp_clients`."""

    servers: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    tools: list[McpTool] = field(default_factory=list["McpTool"])
    warnings: list[str] = field(default_factory=list[str])


def mcp_clients(settings: Settings, taken: Sequence[str]) -> ImportedTools:
    """Connect every server (best effort), describe it, and close it again."""
    try:
        from fiskai_mcp.client import open_mcp_clients
    except ImportError:
        return ImportedTools(
            warnings=["mcp_clients are not listed: they need the mcp extra, pip install 'fiskai-cli[mcp]'"]
        )
    from fiskai_cli._mcp_clients import top_level_kept

    config = settings.config

    async def gather() -> ImportedTools:
        async with open_mcp_clients(
            config.mcp_client_entries,
            root=settings.folder,
            taken=taken,
            strict=False,
            strip_env=config.credential_env_names(),
            pass_env=config.passed_env_names(),
        ) as clients:
            kept = top_level_kept(settings, clients.tools)
            servers = [
                {
                    "name": r.name,
                    "alias": r.alias,
                    "transport": r.transport,
                    "endpoint": r.endpoint,
                    "reached": r.reached,
                    "error": r.error,
                    "seconds": round(r.elapsed, 3),
                    "advertised": r.advertised,
                    "kept": r.kept,
                    "imported": [name for name in r.imported if any(t.name == name for t in kept)],
                    "skipped": r.skipped,
                    "confirm": r.confirm,
                }
                for r in clients.reports
            ]
            warnings = [f"{s['name']} is unavailable: {s['error']}" for s in servers if not s["reached"]]
            warnings += [f"imported tool name collision: {c}" for c in clients.collisions]
            return ImportedTools(servers=servers, tools=kept, warnings=warnings)

    imported = anyio.run(gather)
    imported.warnings.extend(config.notices())
    return imported


def render_mcp_clients(servers: Sequence[dict[str, Any]]) -> list[str]:
    """The section's lines."""
    out = ["", "MCP clients"]
    for server in servers:
        alias = f" (alias {server['alias']})" if server["alias"] != server["name"] else ""
        pairs = [("Server", f"{server['name']}{alias}, {server['transport']}: {server['endpoint']}")]
        if not server["reached"]:
            pairs.append(("Status", f"unavailable: {server['error']}"))
        else:
            pairs += [
                ("Status", f"reached in {server['seconds']:.2f}s; confirm {server['confirm']}"),
                (
                    "Tools",
                    f"{server['advertised']} advertised, {server['kept']} kept by filters, "
                    f"{len(server['imported'])} imported",
                ),
                ("Imported", ", ".join(server["imported"]) or "none"),
            ]
            if server["skipped"]:
                pairs.append(("Left out", "; ".join(server["skipped"])))
        out.append(items(pairs))
    return out
