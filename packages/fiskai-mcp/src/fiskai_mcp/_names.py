"""Which tools the protocol can carry, and how each is described to a client.

MCP tool names must match SEP-986 (`^[A-Za-z0-9._-]{1,128}$`); the low-level server does not check,
so a name the protocol rejects is skipped here with a warning rather than offered to a client that
would refuse the whole listing. Annotations are hints a client may show or act on; they are derived
from the tags an application already uses, never from anything a client sends.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import mcp_types as types
from mcp.shared.tool_name_validation import validate_tool_name

from fiskai_core.tools import Tool, requires_confirmation

__all__ = ["READ_ONLY_TAG", "WRITE_TAG", "describe_tool", "servable_tools"]

READ_ONLY_TAG = "impact:ro"
"""The fisk convention for a command that only reads."""
WRITE_TAG = "impact:rw"
"""The fisk convention for a command that changes something."""


def servable_tools(tools: Sequence[Tool], *, warn: Callable[[str], None]) -> list[Tool]:
    """Keep the tools whose names the protocol accepts, first of a name wins, in order."""
    kept: dict[str, Tool] = {}
    for tool in tools:
        if not validate_tool_name(tool.name).is_valid:
            warn(f'skipping tool "{tool.name}": not a valid MCP tool name')
            continue
        if tool.name in kept:
            warn(f'skipping tool "{tool.name}": another tool already has that name')
            continue
        kept[tool.name] = tool
    return list(kept.values())


def describe_tool(tool: Tool, *, confirm_tags: Collection[str]) -> types.Tool:
    """The `tools/list` entry: the tool's own schema and description, hints from its tags.

    A gated or `impact:rw` tool is marked destructive (and so not read-only) even when it also says
    `impact:ro`: the hint a client might use to skip its own approval must never err towards safety
    that is not there.
    """
    tags = tool.tags
    writes = requires_confirmation(tags, confirm_tags) or WRITE_TAG in tags
    annotations = types.ToolAnnotations(
        title=tool.name.replace("_", " "),
        read_only_hint=False if writes else (True if READ_ONLY_TAG in tags else None),
        destructive_hint=True if writes else (False if READ_ONLY_TAG in tags else None),
    )
    schema = dict(tool.input_schema) or {"type": "object"}
    return types.Tool(name=tool.name, description=tool.description, input_schema=schema, annotations=annotations)
