"""Loopback URLs never go through a proxy (the embeddings client and model downloads).

httpx and urllib honour HTTP_PROXY, HTTPS_PROXY and ALL_PROXY for every host NO_PROXY does not name,
loopback included, so traffic to a local embeddings server or model mirror, bearer token and all, would
cross the proxy. Go's net/http never proxies loopback; neither does fiskai. Names are not resolved:
`localhost` and loopback addresses count, a name that merely resolves to one does not. Every other URL keeps
the environment's proxies. (fiskai_agent's provider has the same rule; this leaf library cannot import it.)
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["loopback_authority"]


def loopback_authority(url: str) -> str | None:
    """The loopback host of `url`, written as an httpx mount pattern names it; None for any other host.

    `127.0.0.1`, `localhost` or `[::1]` (brackets for IPv6); None too for an unparsable URL.
    """
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return None
    if host != "localhost":
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            return None
    return f"[{host}]" if ":" in host else host
