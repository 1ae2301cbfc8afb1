"""What may be printed about an `mcp_clients` server: its endpoint without credentials.

1. Value redaction: every value a reference in `url` or `headers` resolved to is replaced by `REDACTED`
   wherever it appears in a message about that server (an SDK or HTTP error quoting the URL included),
   only when the value has at least 8 characters: shorter ones are never searched for.
2. Structural redaction of every printed endpoint: userinfo, each query parameter's value and the
   fragment become `REDACTED`; scheme, host, port, path and parameter names stay. References print as
   written (the variable's name, not its value).
3. A stdio entry prints its command line with each argument passed through the same URL redaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit, urlunsplit

__all__ = ["MIN_REDACTED_LENGTH", "REDACTED", "Redactor", "redact_command", "redact_url"]

REDACTED = "REDACTED"
MIN_REDACTED_LENGTH = 8


def redact_url(url: str) -> str:
    """`url` with userinfo, query values and fragment replaced; anything that is not a URL unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(
        f"{name}={REDACTED}" if sep else name
        for name, sep, _value in (item.partition("=") for item in parts.query.split("&") if item)
    )
    fragment = REDACTED if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def redact_command(command: str, args: Sequence[str]) -> str:
    """A stdio server's command line as printed: each argument through `redact_url`."""
    return " ".join([command, *(redact_url(arg) for arg in args)])


class Redactor:
    """Replaces resolved reference values (8 characters or more) in text about one server."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a value containing another is replaced whole.
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_REDACTED_LENGTH}, key=len, reverse=True)

    def add(self, secrets: Iterable[str]) -> None:
        """Also redact these values."""
        self._secrets = sorted(
            {*self._secrets, *(s for s in secrets if len(s) >= MIN_REDACTED_LENGTH)}, key=len, reverse=True
        )

    def __call__(self, text: str) -> str:
        """`text` with every known value replaced by `REDACTED`."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text
