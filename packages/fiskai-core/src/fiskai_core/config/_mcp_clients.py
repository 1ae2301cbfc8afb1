"""`mcp_clients`: third-party MCP servers whose tools a run imports (`mcp_servers` is an older name).

One entry per server, over stdio (`command`, `args`, `env`) or streamable HTTP (`url`, `headers`). Every
imported tool is named `<alias>_<tool>`. Values of `env`, `headers` and `url` may hold `${VAR}` and
`${file:PATH}` references (`_references`), checked for syntax here and resolved only when the server
connects. Beyond the original, imported tools go through the confirm gate: `confirm` says which ask first.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Literal

from pydantic import Field, field_validator

from fiskai_core._gojson import go_quote

from ._origin import Origin
from ._references import check_references
from ._schema import Block, SettingError, Text, ToolFilter, _duration  # pyright: ignore[reportPrivateUsage]

__all__ = ["DEFAULT_MCP_CLIENT_TIMEOUT", "McpClientEntry", "McpConfirm", "check_mcp_clients"]

DEFAULT_MCP_CLIENT_TIMEOUT = timedelta(seconds=30)
_NAME = re.compile(r"[A-Za-z0-9_-]+")

McpConfirm = Literal["all", "destructive", "none"]
"""Which imported tools ask the operator first: every one, those not marked read-only or marked
destructive (the default), or none."""


class McpClientEntry(Block):
    """One `mcp_clients` entry: a server whose tools are imported as `<alias>_<tool>`."""

    name: Text = ""
    """Letters, digits, `-`, `_`; names the server in errors; unique across entries."""
    alias: Text = ""
    """The prefix of imported tool names (same characters); defaults to `name`; unique across entries."""
    command: Text = ""
    """Runs the server as a child process over stdio (taken literally, no references); forbids `url` and `headers`."""
    args: list[Text] = Field(default_factory=list[str])
    """Arguments of `command`, taken literally."""
    env: dict[str, Text] = Field(default_factory=dict[str, str])
    """Variables set for the stdio child on top of this process's environment minus credentials; values take
    `${VAR}` and `${file:PATH}` references."""
    url: Text = ""
    """Streamable HTTP endpoint; takes references; forbids `command`, `args` and `env`."""
    headers: dict[str, Text] = Field(default_factory=dict[str, str])
    """Sent with every request to the endpoint's host (never across a redirect to another host); values take
    references."""
    timeout: timedelta = DEFAULT_MCP_CLIENT_TIMEOUT
    """Bounds connecting (start and handshake) and, again, listing tools; `0s` and negatives are rejected."""
    include: ToolFilter = Field(default_factory=ToolFilter)
    """`tools`: regexes on the server's own tool names (before the prefix); `tags` is rejected (MCP has none)."""
    exclude: ToolFilter = Field(default_factory=ToolFilter)
    """Drops from what `include` kept; `tools` only."""
    watch_tools: bool = False
    """Follow the server's tool-list-changed notifications; the model sees the new set on its next call."""
    confirm: McpConfirm = "destructive"
    """Which imported tools ask the operator first: `all`, `destructive` (any tool whose annotations do not say
    `readOnlyHint: true`, or say `destructiveHint: true`) or `none`."""

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, value: object) -> object:
        parsed = _duration(value, key="mcp_clients timeout", default=DEFAULT_MCP_CLIENT_TIMEOUT)
        if isinstance(parsed, timedelta) and parsed <= timedelta(0):
            raise SettingError(f"timeout must be positive, got {go_quote(str(value))}; write e.g. 30s")
        return parsed

    @property
    def effective_alias(self) -> str:
        """The prefix imported tools carry: `alias`, else `name`."""
        return self.alias or self.name

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """How the server is reached."""
        return "stdio" if self.command else "http"


def check_mcp_clients(entries: list[McpClientEntry], origin: Origin, *, key: str = "mcp_clients") -> None:
    """The rules that span an entry's keys and the whole list.

    Raises:
        ConfigError: the first rule that fails, naming the entry's key.
    """
    names: dict[str, int] = {}
    aliases: dict[str, int] = {}
    for index, entry in enumerate(entries):
        at = (key, index)
        _check_entry(entry, at, origin)
        if entry.name in names:
            raise origin.error(
                (*at, "name"), f'server name "{entry.name}" is used twice ({key}[{names[entry.name]}] too); rename one'
            )
        names[entry.name] = index
        alias = entry.effective_alias
        if alias in aliases:
            raise origin.error(
                (*at, "alias"),
                f'alias "{alias}" is already the alias of {key}[{aliases[alias]}]; imported tools would collide, so '
                "set a distinct alias",
            )
        aliases[alias] = index


def _check_entry(entry: McpClientEntry, at: tuple[str | int, ...], origin: Origin) -> None:
    if not entry.name:
        raise origin.error(at, "the server needs a name (letters, digits, - or _)")
    if not _NAME.fullmatch(entry.name):
        raise origin.error(
            (*at, "name"), f"name {go_quote(entry.name)} is invalid: it must contain only letters, digits, '-' or '_'"
        )
    if entry.alias and not _NAME.fullmatch(entry.alias):
        raise origin.error(
            (*at, "alias"),
            f"alias {go_quote(entry.alias)} is invalid: it must contain only letters, digits, '-' or '_' (it prefixes "
            "imported tool names)",
        )
    if bool(entry.command) == bool(entry.url):
        both = "both" if entry.command else "neither"
        raise origin.error(
            at,
            f'server "{entry.name}" sets {both} of command and url: set command (stdio) or url (streamable HTTP)',
        )
    if entry.command and entry.headers:
        raise origin.error((*at, "headers"), "headers apply to url servers only; remove them or use url")
    if entry.url and (entry.args or entry.env):
        which = "args" if entry.args else "env"
        raise origin.error((*at, which), f"{which} apply to command servers only; remove it or use command")
    if entry.url and not entry.url.startswith(("http://", "https://", "${")):
        raise origin.error((*at, "url"), "url must start with http:// or https:// (only streamable HTTP is supported)")
    for which, rule in (("include", entry.include), ("exclude", entry.exclude)):
        if rule.tags:
            raise origin.error(
                (*at, which, "tags"), "MCP tools carry no tags, so a tag filter cannot apply; filter by tools instead"
            )
    _check_values(entry, at, origin)


def _check_values(entry: McpClientEntry, at: tuple[str | int, ...], origin: Origin) -> None:
    problem = check_references(entry.url)
    if problem:
        raise origin.error((*at, "url"), problem)
    for which, values in (("env", entry.env), ("headers", entry.headers)):
        for name, value in values.items():
            problem = check_references(value)
            if problem:
                raise origin.error((*at, which, name), problem)
