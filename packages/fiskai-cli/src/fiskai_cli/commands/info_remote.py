"""The `remote_tools` of `fiskai info`: a best-effort import, so an unreachable peer is a warning.

A run imports strictly (its prompt may depend on those tools); `info` still shows the local tools
when a host, or NATS itself, cannot be reached, and says why. Loaded only when `remote_tools` is set,
so `info` without it never imports NATS.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from fiskai_core.config import Config
from fiskai_core.remote import RemoteTool

__all__ = ["remote_tools"]


def remote_tools(config: Config, taken: Sequence[str]) -> tuple[list[RemoteTool], list[str]]:
    """The remote tools a run would import (with their names, tags and limits), and warnings for the rest.

    The tools' connection is closed on return: `info` only describes them.
    """
    try:
        from fiskai_a2a import load_context
        from fiskai_a2a.remote_import import open_remote_tools
    except ImportError as err:
        return [], [f"remote_tools are not listed: they need the `a2a` extra, pip install 'fiskai-cli[a2a]' ({err})"]

    async def gather() -> tuple[list[RemoteTool], list[str]]:
        async with open_remote_tools(
            config.remote_tools,
            context=load_context(config.nats_context),
            identity=config.identity,
            call_timeout=config.llm.budget.call_timeout.total_seconds(),
            taken=taken,
            strict=False,
        ) as imported:
            return list(imported.tools), list(imported.warnings)

    try:
        return anyio.run(gather)
    except Exception as err:  # noqa: BLE001 - info is best-effort for peers: any failure is a warning
        return [], [f"remote_tools could not be imported: {err}"]
