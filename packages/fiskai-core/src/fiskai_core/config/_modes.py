"""What each command requires of a configuration, checked in the original's order (first failure wins).

Modes: `agent` (`run`), `mcp` (`mcp`, `info`, `knowledge`, `session --config`, `discover`; the most
lenient) and `server` (`a2a`). Before the mode rules come the checks that span blocks. Messages are
the original's, word for word, after the file and line (a missing nats_context for `a2a` then adds the
command-line fix the original lacks).
"""

from __future__ import annotations

import re
from enum import StrEnum

from fiskai_core._gojson import go_quote

from ._config import Config
from ._mcp_clients import check_mcp_clients
from ._origin import Origin
from ._schema import KNOWLEDGE_SEARCH_TOOL

__all__ = ["Mode", "validate_for_mode"]

# fullmatch, not `$`: Python's `$` also matches before a trailing newline.
_NAME = re.compile(r"[A-Za-z0-9_-]+")


class Mode(StrEnum):
    """Which command the configuration is loaded for."""

    AGENT = "agent"
    """`fiskai run`: needs a model and, unless served over MCP, a system prompt."""
    MCP = "mcp"
    """`mcp`, `info`, `knowledge`, `session --config`, `discover`: nothing beyond the shared rules."""
    SERVER = "server"
    """`fiskai a2a`: needs an application and a NATS context."""


def validate_for_mode(config: Config, mode: Mode, origin: Origin) -> None:
    """Apply the cross-block checks, the rules shared by every mode, then `mode`'s own.

    Raises:
        ConfigError: the first rule that fails.
    """
    _check_builtins(config, origin)
    _check_shared(config, origin)
    if mode is Mode.SERVER:
        _check_server(config, origin)
    elif mode is Mode.AGENT:
        _check_agent(config, origin)


def _check_builtins(config: Config, origin: Origin) -> None:
    mcp = config.expose.agent.mcp
    if mcp is not None and KNOWLEDGE_SEARCH_TOOL in mcp.builtins and not config.harness.knowledge.enabled:
        raise origin.error(
            ("expose", "agent", "mcp", "builtins"),
            "expose.agent.mcp.builtins lists knowledge_search but knowledge is not enabled; add a harness.knowledge "
            "block with 'enabled: true' or remove knowledge_search from builtins",
            exact=True,
        )


def _check_shared(config: Config, origin: Origin) -> None:
    if config.global_flags and not config.application_path:
        raise origin.error(
            ("global_flags",),
            "global_flags is set but application_path is not: global flags are the wrapped application's own "
            "globals and have nothing to attach to without an application; remove global_flags or set "
            "application_path",
            exact=True,
        )
    if config.identity and not _NAME.fullmatch(config.identity):
        # A derived identity is the application's basename: point at the key that produced it.
        line = origin.lines.get(("identity",)) or origin.lines.get(("application_path",))
        raise origin.error(
            ("identity",),
            f"identity {go_quote(config.identity)} is invalid: it must contain only letters, digits, '-' or '_' "
            "(it doubles as a NATS queue group); set an explicit identity if the application binary name "
            "contains other characters",
            line=line,
            exact=True,
        )
    for index, host in enumerate(config.remote_tools):
        _check_remote_host(index, host.name, host.alias, bool(host.exclude.tags), origin)
    if config.mcp_clients and config.mcp_servers:
        raise origin.error(
            ("mcp_servers",),
            "mcp_servers is the earlier name of mcp_clients and both are set; merge them into mcp_clients",
        )
    check_mcp_clients(config.mcp_client_entries, origin, key="mcp_clients" if config.mcp_clients else "mcp_servers")


def _check_remote_host(index: int, name: str, alias: str, exclude_tags: bool, origin: Origin) -> None:
    at = ("remote_tools", index)
    if not name:
        raise origin.error(at, "remote_tools host is missing a name", exact=True)
    if not _NAME.fullmatch(name):
        raise origin.error(
            (*at, "name"),
            f"remote_tools host name {go_quote(name)} is invalid: it must contain only letters, digits, '-' or '_' "
            "(it keys the NATS subjects)",
            exact=True,
        )
    if alias and not _NAME.fullmatch(alias):
        raise origin.error(
            (*at, "alias"),
            f"remote_tools host {go_quote(name)} has an invalid alias {go_quote(alias)}: it must contain only letters, digits, "
            "'-' or '_' (it prefixes imported tool names)",
            exact=True,
        )
    if exclude_tags:
        raise origin.error(
            (*at, "exclude", "tags"),
            f"remote_tools host {go_quote(name)} has an exclude.tags filter, which cannot be honored: discovery does not "
            "carry tags, so a tool excluded by tag would be imported anyway; exclude by tool name instead",
            exact=True,
        )


def _check_server(config: Config, origin: Origin) -> None:
    if not config.has_tool_source:
        raise origin.error(
            ("application_path",),
            "application_path is required for the a2a server: a2a serves the wrapped application's tools and "
            "cannot serve the built-in tools",
            exact=True,
        )
    if not config.nats_context:
        # The original's words, then the fix: `fiskai a2a` can also be given a connection on the command line.
        raise origin.error(
            ("nats_context",),
            "nats_context is required for the a2a server: set nats_context in agent.yaml to a nats CLI context, "
            "or pass --server URL or --context NAME",
            exact=True,
        )


def _check_agent(config: Config, origin: Origin) -> None:
    if config.remote_tools and not config.nats_context:
        raise origin.error(
            ("nats_context",),
            "nats_context is required when remote_tools is set",
            line=origin.lines.get(("nats_context",)) or origin.lines.get(("remote_tools",)),
            exact=True,
        )
    if config.expose.agent.mcp is None:
        # Unreachable while identity is always defaulted; kept so the order matches the original.
        if not config.identity:
            raise origin.error(("identity",), "identity is required unless exposed over MCP", exact=True)
        if not config.system_prompt:
            raise origin.error(("system_prompt",), "prompt is required unless exposed over MCP", exact=True)
    if not config.llm.model:
        raise origin.error(("llm", "model"), "llm.model is required", exact=True)
