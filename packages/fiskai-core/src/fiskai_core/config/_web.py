"""`expose.agent.web` and the card keys a browser shows: the HTTP face of `fiskai serve` (0.0.6).

Split from `_expose.py` so each module stays small; same rules as `_schema.py`.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from fiskai_core._gojson import go_quote

from ._schema import Block, SettingError, Text

__all__ = ["DEFAULT_WEB_BASE_PATH", "DEFAULT_WEB_LISTEN", "WebSettings", "check_card"]

DEFAULT_WEB_LISTEN: Final = "127.0.0.1:8080"
DEFAULT_WEB_BASE_PATH: Final = "/fisk/v1"
_PATH: Final = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")


class WebSettings(Block):
    """`expose.agent.web`: its presence turns on the web channel; `origins` is required."""

    listen: Text = DEFAULT_WEB_LISTEN
    """host:port; port 0 picks a free one (printed in the banner)."""
    base_path: Text = DEFAULT_WEB_BASE_PATH
    """Where the routes live; must start with `/`."""
    origins: list[Text] = Field(default_factory=list[str], validate_default=True)
    """The pages allowed to call: scheme://host[:port], no path, no `*`, at least one."""

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str) -> str:
        value = value.strip() or DEFAULT_WEB_LISTEN
        host, sep, port = value.rpartition(":")
        if not sep or not port.isdigit() or int(port) > 65535:
            raise SettingError(
                f"invalid expose.agent.web.listen {go_quote(value)}: must be host:port, e.g. 127.0.0.1:8080"
            )
        if not host:
            raise SettingError(
                f"invalid expose.agent.web.listen {go_quote(value)}: name the host to bind, e.g. 127.0.0.1:{port}"
            )
        return value

    @field_validator("base_path")
    @classmethod
    def _base_path(cls, value: str) -> str:
        value = value.strip() or DEFAULT_WEB_BASE_PATH
        if not value.startswith("/") or _PATH.fullmatch(value) is None or "//" in value:
            raise SettingError(f"invalid expose.agent.web.base_path {go_quote(value)}: must be a path starting with /")
        return value.rstrip("/") or "/"

    @field_validator("origins")
    @classmethod
    def _origins(cls, values: list[str]) -> list[str]:
        origins = list(dict.fromkeys(value.strip().rstrip("/") for value in values if value.strip()))
        if not origins:
            raise SettingError(
                "expose.agent.web.origins is required: list the pages allowed to call the agent, e.g. "
                "[http://127.0.0.1:8080] for the built-in page"
            )
        for origin in origins:
            if "*" in origin:
                raise SettingError(
                    f"invalid expose.agent.web.origins entry {go_quote(origin)}: wildcards are not allowed; list "
                    "each origin"
                )
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
                raise SettingError(
                    f"invalid expose.agent.web.origins entry {go_quote(origin)}: must be scheme://host[:port] "
                    "with no path"
                )
        return origins


def check_card(*, display_name: str, icon: str, icon_url: str, prompts: list[str]) -> None:
    """Check the top-level card keys' limits.

    `display_name` <=128 bytes, `icon` <=16, `icon_url` https <=512, `prompts` <=8 of <=256 characters.

    Raises:
        SettingError: a value over its limit, naming the key.
    """
    if len(display_name.encode()) > 128:
        raise SettingError("invalid display_name: must be at most 128 bytes")
    if len(icon.encode()) > 16:
        raise SettingError("invalid icon: must be one emoji of at most 16 bytes")
    if icon_url:
        if len(icon_url.encode()) > 512:
            raise SettingError("invalid icon_url: must be at most 512 bytes")
        if urlsplit(icon_url).scheme != "https" or not urlsplit(icon_url).hostname:
            raise SettingError(f"invalid icon_url {go_quote(icon_url)}: must be an https URL")
    if len(prompts) > 8:
        raise SettingError(f"invalid prompts: at most 8 suggestions, got {len(prompts)}")
    for prompt in prompts:
        if len(prompt) > 256:
            raise SettingError(f"invalid prompts entry {go_quote(prompt[:40] + '...')}: must be at most 256 characters")
