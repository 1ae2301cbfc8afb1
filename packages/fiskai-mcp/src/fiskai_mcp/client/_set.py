"""The connection set: every `mcp_clients` server, connected once, and the tools they bring.

`open_mcp_clients(entries, ...)` connects and lists the servers one after the other (a slow server
delays the later ones; each is bounded twice by its timeout), names every kept tool `<alias>_<tool>`
and yields an `McpClients` that a short command or a long-lived process (`fiskai serve`) holds; leaving
the block closes every session and stops every stdio child.

Strict (a run): a server that cannot be reached fails the whole block. Best effort (`fiskai info`):
it is reported, with the reason, and the others go on. A tool with no description, a schema that is
not an object, or a name that is not a valid tool name is skipped with its reason.

`watch_tools`: a server's list-changed notification re-lists it and re-applies its filters and naming;
`McpClients.tools` then returns the new set, swapped whole, and `changes` counts the swaps (a driver
takes the set before each model call; a batch already dispatched keeps the set it had). A new tool
under a name another tool holds is left out and reported.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncGenerator, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
import mcp_types as types
from pydantic import JsonValue

from fiskai_core._peer_limits import capped_description, schema_problem
from fiskai_core.config import McpClientEntry
from fiskai_core.prompter import Prompter
from fiskai_core.tools import MAX_TOOL_NAME_LENGTH

from ._connection import McpConnection, McpServerError
from ._tool import McpTool, tool_tags

__all__ = ["McpClients", "ServerReport", "open_mcp_clients"]

_NAME = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(slots=True, kw_only=True)
class ServerReport:
    """What became of one server: for `fiskai info` and the run's start notices."""

    name: str
    alias: str
    transport: str
    endpoint: str
    """Where it is, redacted."""
    confirm: str
    reached: bool = False
    error: str = ""
    """Why it was not reached (redacted)."""
    elapsed: float = 0.0
    """Seconds to connect and list."""
    advertised: int = 0
    kept: int = 0
    """Tools left after the entry's include and exclude."""
    imported: list[str] = field(default_factory=list[str])
    """Final names of the tools it brings."""
    skipped: list[str] = field(default_factory=list[str])
    """`<tool> (reason)` for every tool left out after filtering."""
    collisions: list[str] = field(default_factory=list[str])


class McpClients:
    """Connected servers and their tools; build with `open_mcp_clients`."""

    def __init__(self, *, taken: Collection[str]) -> None:
        self.reports: list[ServerReport] = []
        self.changes = 0
        """How many times a watched server's tools were swapped in."""
        self.notices: list[str] = []
        """Messages for the operator from watched servers since they were last taken (`take_notices`)."""
        self._taken = set(taken)
        self._tools: dict[str, list[McpTool]] = {}
        self._connections: dict[str, McpConnection] = {}
        self._lock = anyio.Lock()

    @property
    def tools(self) -> list[McpTool]:
        """Every imported tool, servers in configuration order (the current set)."""
        return [tool for report in self.reports for tool in self._tools.get(report.name, [])]

    @property
    def collisions(self) -> list[str]:
        """Every name that collided at start."""
        return [c for report in self.reports for c in report.collisions]

    def connection(self, server: str) -> McpConnection | None:
        """The session of `server`, if it was reached."""
        return self._connections.get(server)

    def take_notices(self) -> list[str]:
        """The queued notices, emptied."""
        taken, self.notices = self.notices, []
        return taken

    async def _add(self, connection: McpConnection, group: Any, report: ServerReport) -> None:
        began = time.perf_counter()
        await connection.start(group)
        self._connections[connection.name] = connection
        listed = await connection.list_tools()
        report.reached = True
        report.elapsed = time.perf_counter() - began
        self._tools[connection.name] = self._name_tools(connection, listed, report)

    def _name_tools(
        self, connection: McpConnection, listed: Sequence[types.Tool], report: ServerReport
    ) -> list[McpTool]:
        entry = connection.entry
        report.advertised = len(listed)
        kept = _filtered(listed, entry)
        report.kept = len(kept)
        report.imported, report.skipped, report.collisions = [], [], []
        others = self._taken | {t.name for name, tools in self._tools.items() if name != entry.name for t in tools}
        tools: list[McpTool] = []
        for tool in kept:
            final = f"{entry.effective_alias}_{tool.name}"
            reason = _skip_reason(tool, final)
            if not reason and final in others:
                reason = f'name "{final}" is already taken'
                report.collisions.append(f'"{final}" (MCP server "{entry.name}")')
            if reason:
                report.skipped.append(f"{tool.name} ({reason})")
                continue
            others.add(final)
            tools.append(_tool_of(tool, final, connection))
            report.imported.append(final)
        return tools

    async def relist(self, connection: McpConnection) -> None:
        """Re-read a watched server's tools and swap its part of the set whole."""
        report = next((r for r in self.reports if r.name == connection.name), None)
        if report is None:
            return
        async with self._lock:
            try:
                listed = await connection.list_tools()
            except McpServerError as err:
                self.notices.append(f"{err}; its tools stay as they were")
                return
            before = set(report.imported)
            self._tools[connection.name] = self._name_tools(connection, listed, report)
            self.changes += 1
            added = sorted(set(report.imported) - before)
            removed = sorted(before - set(report.imported))
            self.notices.append(
                f'MCP server "{connection.name}" changed its tools: added {", ".join(added) or "none"}; removed '
                f"{', '.join(removed) or 'none'}"
                + (f"; left out {', '.join(report.skipped)}" if report.skipped else "")
            )


def _filtered(listed: Sequence[types.Tool], entry: McpClientEntry) -> list[types.Tool]:
    kept = list(listed)
    if entry.include.tools:
        patterns = [re.compile(p) for p in entry.include.tools]
        kept = [t for t in kept if any(p.search(t.name) for p in patterns)]
    if entry.exclude.tools:
        patterns = [re.compile(p) for p in entry.exclude.tools]
        kept = [t for t in kept if not any(p.search(t.name) for p in patterns)]
    return kept


def _skip_reason(tool: types.Tool, final: str) -> str:
    if not (tool.description or "").strip():
        return "no description"
    schema = tool.input_schema
    if schema.get("type", "object") != "object":
        return "input schema root is not an object"
    problem = schema_problem(schema)
    if problem:
        return problem
    if not _NAME.fullmatch(final):
        return f'"{final}" is not a valid tool name (letters, digits, _ and - only)'
    if len(final) > MAX_TOOL_NAME_LENGTH:
        return f'"{final}" is longer than {MAX_TOOL_NAME_LENGTH} characters'
    return ""


def _tool_of(tool: types.Tool, final: str, connection: McpConnection) -> McpTool:
    notes = tool.annotations
    read_only = notes.read_only_hint if notes else None
    destructive = notes.destructive_hint if notes else None
    idempotent = notes.idempotent_hint if notes else None
    schema = cast("dict[str, JsonValue]", dict(tool.input_schema))
    if "type" not in schema:
        schema = {"type": "object", **schema}
    return McpTool(
        name=final,
        remote_name=tool.name,
        server=connection.name,
        alias=connection.entry.effective_alias,
        description=capped_description(tool.description or "", ()),
        input_schema=schema,
        tags=tool_tags(connection.entry.confirm, read_only=read_only, destructive=destructive, idempotent=idempotent),
        caller=connection.call,
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
    )


@asynccontextmanager
async def open_mcp_clients(
    entries: Sequence[McpClientEntry],
    *,
    root: Path | None,
    taken: Collection[str] = (),
    strict: bool = True,
    strip_env: list[str] | None = None,
    pass_env: list[str] | None = None,
    prompter: Prompter | None = None,
) -> AsyncGenerator[McpClients]:
    """Connect every server in order and yield the set; every session closes when the block ends.

    Args:
        entries: The `mcp_clients` entries.
        root: The configuration's folder (relative `${file:}` paths, a stdio child's working directory).
        taken: Names local tools already hold.
        strict: Fail on the first server that cannot be reached (a run); else report it and go on (`info`).
        strip_env: Extra credential variables to strip from a stdio child's environment.
        pass_env: Default-stripped names passed through.
        prompter: Answers servers' elicitation requests.

    Raises:
        McpServerError: (strict) a server could not be reached or listed, or imported names collide.
    """
    clients = McpClients(taken=taken)
    try:
        async with anyio.create_task_group() as group:
            try:
                for entry in entries:
                    report = ServerReport(
                        name=entry.name,
                        alias=entry.effective_alias,
                        transport="stdio" if entry.command else "streamable HTTP",
                        endpoint="",
                        confirm=entry.confirm,
                    )
                    clients.reports.append(report)

                    async def changed(connection: McpConnection) -> None:
                        group.start_soon(clients.relist, connection)

                    connection = McpConnection(
                        entry,
                        root=root,
                        strip_env=strip_env,
                        pass_env=pass_env,
                        prompter=prompter,
                        on_tools_changed=changed,
                    )
                    report.endpoint = connection.endpoint
                    try:
                        await clients._add(connection, group, report)  # pyright: ignore[reportPrivateUsage]
                    except McpServerError as err:
                        if strict:
                            raise
                        report.error = str(err)
                if strict and clients.collisions:
                    raise McpServerError(
                        f"imported tool name collision: {', '.join(clients.collisions)}; set a distinct alias on the "
                        "mcp_clients entry or exclude the tool"
                    )
                yield clients
            finally:
                # Every session started so far ends here, also when a later server failed the block.
                for connection in clients._connections.values():  # pyright: ignore[reportPrivateUsage]
                    await connection.aclose()
    except BaseExceptionGroup as group_error:
        # The sessions' tasks keep their own failures; what reaches here was raised by this block or the
        # caller's, and is raised as it was, not wrapped in the task group's exception group.
        if len(group_error.exceptions) == 1:
            raise group_error.exceptions[0] from None
        raise
