"""Before a run sends server-side tool search to a base URL that is not Anthropic's, ask what serves it.

llama.cpp and Ollama silently drop `defer_loading` and the tool-search tool (nothing is refused, so the
fallback on a 400 never triggers): a Claude model name on such a server would have every deferred tool
reach the model plus a parameterless `tool_search_tool_bm25` function. Recognised (`recognise_server`),
the automatic choice turns tool search off (the client-side finder takes over, by size) and says why;
tool search forced on in `llm.capabilities` is refused with the fix, as that combination cannot work.
"""

from __future__ import annotations

from functools import partial

import anyio

from fiskai_agent.llm import Capabilities, anthropic_url, capabilities_for_server, recognise_server

__all__ = ["checked_capabilities"]


async def checked_capabilities(caps: Capabilities, base_url: str | None) -> Capabilities:
    """`caps` without server-side tool search when `base_url` is a server known to drop it silently.

    Raises:
        SetupError: `llm.capabilities.tool_search` is forced on for such a server.
    """
    if not caps.tool_search or not base_url or anthropic_url(base_url):
        return caps
    kind = await anyio.to_thread.run_sync(partial(recognise_server, base_url))
    return capabilities_for_server(caps, kind, base_url)
