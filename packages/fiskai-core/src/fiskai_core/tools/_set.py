"""A run's tools, each with where it came from, and what the model must be told about them.

The harness builds one `ToolSet` per face (the application's selected commands, peer agents' tools,
the built-ins the configuration enables); a driver takes it as given. Names are unique across the set:
adding a name twice is an error that says which part brought each.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from fiskai_core.errors import ToolSelectionError

from ._protocols import Tool

__all__ = ["ToolEntry", "ToolKind", "ToolSet"]

ToolKind = Literal["application", "builtin", "remote", "custom", "mcp"]
"""Where a tool came from (stable accounting tokens): the wrapped application's commands, fiskai's
built-ins, another agent's tools over A2A, an embedder's own, or a third-party MCP server's (`mcp_clients`)."""

_OWNER = {
    "application": "the application",
    "builtin": "a built-in",
    "remote": "remote_tools",
    "custom": "a custom tool",
    "mcp": "mcp_clients",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEntry:
    """One tool and its origin."""

    tool: Tool
    kind: ToolKind
    origin: str = ""
    """Who serves it: the peer agent of a remote tool; empty for local tools."""


@dataclass(frozen=True, slots=True)
class ToolSet:
    """The tools one face offers, in a stable order, with the system-prompt notes they bring."""

    entries: tuple[ToolEntry, ...] = ()
    notes: tuple[str, ...] = ()
    """System-prompt blocks the tools need (how to ask the operator, that memory exists, ...)."""
    has_application: bool = True
    """Whether the configuration names an application (shapes the no-tools error)."""
    _by_name: dict[str, ToolEntry] = field(default_factory=dict[str, ToolEntry], repr=False, compare=False)

    def __post_init__(self) -> None:
        for entry in self.entries:
            name = entry.tool.name
            if not name:
                raise ToolSelectionError(f"{_OWNER[entry.kind]} adds a tool with an empty name")
            earlier = self._by_name.get(name)
            if earlier is not None:
                raise ToolSelectionError(
                    f'{_OWNER[entry.kind]} adds a tool "{name}" but {_OWNER[earlier.kind]} already has that name; '
                    "exclude or rename one of them"
                )
            self._by_name[name] = entry

    @classmethod
    def of(cls, tools: Iterable[Tool], kind: ToolKind = "application", *, has_application: bool = True) -> ToolSet:
        """A set of tools of one kind (tests, embedders)."""
        return cls(tuple(ToolEntry(tool=tool, kind=kind) for tool in tools), has_application=has_application)

    def with_entries(self, entries: Iterable[ToolEntry], notes: Iterable[str] = ()) -> ToolSet:
        """This set plus more entries and notes (a clash is an error)."""
        return ToolSet((*self.entries, *entries), (*self.notes, *notes), self.has_application)

    def get(self, name: str) -> ToolEntry | None:
        """The entry of `name`, if the set has it."""
        return self._by_name.get(name)

    def names(self) -> list[str]:
        """Every name, in order."""
        return [entry.tool.name for entry in self.entries]

    def tools(self) -> list[Tool]:
        """Every tool, in order."""
        return [entry.tool for entry in self.entries]

    def __iter__(self) -> Iterator[ToolEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)
