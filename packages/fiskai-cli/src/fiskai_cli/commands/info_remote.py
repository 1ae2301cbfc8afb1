"""The `remote_tools` rows of `fiskai info`: a best-effort import, so an unreachable peer is a warning.

A run imports strictly (its prompt may depend on those tools); `info` still shows the local tools
when a host, or NATS itself, cannot be reached, and says why. Loaded only when `remote_tools` is set,
so `info` without it never imports NATS.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import anyio

from fiskai_core.config import Config

__all__ = ["remote_rows"]


def remote_rows(config: Config, taken: Collection[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The imported remote tools as `info` rows, and warnings for what could not be imported."""
    try:
        from fiskai_a2a import load_context
        from fiskai_a2a.nats_transport import open_remote_tools
    except ImportError as err:
        return [], [f"remote_tools are not listed: they need the `a2a` extra, pip install 'fiskai-cli[a2a]' ({err})"]

    async def gather() -> tuple[list[dict[str, Any]], list[str]]:
        async with open_remote_tools(
            config.remote_tools,
            context=load_context(config.nats_context),
            identity=config.identity,
            call_timeout=config.llm.budget.call_timeout.total_seconds(),
            taken=taken,
            strict=False,
        ) as imported:
            rows = [
                {
                    "name": tool.name,
                    "source": f"remote {tool.agent}",
                    "confirm": False,
                    "deferred": False,
                    "description": tool.description,
                    "tags": list(tool.tags),
                }
                for tool in imported.tools
            ]
            return rows, list(imported.warnings)

    try:
        return anyio.run(gather)
    except Exception as err:  # noqa: BLE001 - info is best-effort for peers: any failure is a warning
        return [], [f"remote_tools could not be imported: {err}"]
