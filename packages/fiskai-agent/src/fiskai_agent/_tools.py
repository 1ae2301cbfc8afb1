"""The run's tool table: each tool of the set with how it is shown and whether it may be deferred.

How a call is shown follows from where the tool came from and what it does, never from its class: an
application command shows its command line, a remote tool names its agent, a tool that asks the
operator itself (`asks_operator`) draws its own prompt, anything else is a one-line trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from pydantic import JsonValue

from fiskai_agent.events import Presentation
from fiskai_agent.llm import ToolDef
from fiskai_core.tools import TAG_IDEMPOTENT, TAG_NO_DEFER, Tool, ToolEntry, ToolKind

__all__ = ["Entry", "entry_of", "tool_def", "tools_hash_input"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One callable tool in this run."""

    tool: Tool
    kind: ToolKind
    presentation: Presentation
    deferrable: bool
    gate_tag: str | None = None
    """The tag that puts it behind the confirm gate, if any."""
    agent: str = ""
    """The peer agent of a remote tool."""

    @property
    def idempotent(self) -> bool:
        """Safe to run twice after a crash (tagged `ai:idempotent`)."""
        return TAG_IDEMPOTENT in self.tool.tags

    @property
    def no_defer(self) -> bool:
        """Tagged `ai:no_defer`."""
        return TAG_NO_DEFER in self.tool.tags


def entry_of(item: ToolEntry, gate_tag: str | None) -> Entry:
    """The table entry of one tool of the set."""
    tool, kind = item.tool, item.kind
    presentation: Presentation
    if kind in ("application", "mcp"):
        # An imported MCP call shows as its gate line (`fs_write_file --path=...`): what an operator approves.
        presentation = "command"
    elif kind == "remote":
        presentation = "remote"
    elif getattr(tool, "asks_operator", False):
        presentation = "self_rendered"
    else:
        presentation = "traced"
    return Entry(
        tool=tool,
        kind=kind,
        presentation=presentation,
        deferrable=kind != "builtin",
        gate_tag=gate_tag,
        agent=item.origin,
    )


def tool_def(entry: Entry, *, defer: bool) -> ToolDef:
    """The definition the model receives."""
    tool = entry.tool
    return ToolDef(name=tool.name, description=tool.description, input_schema=tool.input_schema, defer_loading=defer)


def tools_hash_input(defs: Sequence[ToolDef]) -> list[Mapping[str, JsonValue]]:
    """What the fingerprint's `tools_hash` covers: every definition, in request order (the original's keys)."""
    return [
        {
            "Name": d.name,
            "Description": d.description,
            "InputSchema": cast("dict[str, JsonValue]", dict(d.input_schema)),
            "DeferLoading": d.defer_loading,
        }
        for d in defs
    ]
