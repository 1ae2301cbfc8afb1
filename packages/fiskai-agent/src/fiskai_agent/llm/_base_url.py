"""Base URL validation (reference 6.9): https anywhere, plain http only to a loopback address.

A base URL receives the whole conversation and the API key, so plain http is allowed only where it
cannot leave the machine. Names are not resolved: `localhost` is loopback, a name that merely looks
local is not. Credentials embedded in the URL are refused (they would end up in logs and traces).
`loopback_authority` tells the adapter when to bypass proxies (a loopback URL never goes through one).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from fiskai_agent.errors import SetupError

__all__ = ["loopback_authority", "validate_base_url"]


def validate_base_url(raw: str, *, label: str = "--base-url / ANTHROPIC_BASE_URL") -> str:
    """Check a provider base URL.

    Args:
        raw: The URL as the operator wrote it.
        label: Where it came from, for the message.

    Returns:
        `raw`, unchanged.

    Raises:
        SetupError: Userinfo, a scheme other than http/https, no host, or http to a non-loopback host.
    """
    try:
        parts = urlsplit(raw)
        host = parts.hostname
    except ValueError as err:
        raise SetupError(f'invalid {label} "{raw}": {err}') from None
    if parts.username is not None or parts.password is not None:
        raise SetupError(f'invalid {label} "{raw}": must not embed userinfo credentials')
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise SetupError(f'invalid {label} "{raw}": scheme must be http or https')
    if not host:
        raise SetupError(f'invalid {label} "{raw}": it has no host')
    if scheme == "http" and not _is_loopback(host):
        raise SetupError(
            f'{label} "{raw}" uses http to a non-loopback host; use https, or a loopback address '
            "(127.0.0.1, ::1, localhost) for a local server"
        )
    return raw


def loopback_authority(url: str) -> str | None:
    """The loopback host of `url`, written as an httpx mount pattern names it; None for any other host.

    `127.0.0.1`, `localhost` or `[::1]` (brackets for IPv6); None too for an unparsable URL.
    """
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return None
    if not _is_loopback(host):
        return None
    return f"[{host}]" if ":" in host else host


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
