"""A Messages API content block as the neutral model holds it."""

from __future__ import annotations

from typing import cast

from fiskai_core.tools import DecodedValue

from ._types import ContentBlock, JsonObject, ProviderBlock, TextBlock, ThinkingBlock, ToolUseBlock

__all__ = ["neutral_block"]


def neutral_block(raw: JsonObject, exact: DecodedValue) -> ContentBlock:
    """One response block, plain JSON; `exact` is a tool_use's input as decoded (numbers kept).

    Text without citations, thinking and tool_use are modelled; anything else travels as a
    `ProviderBlock` holding its full JSON, sent back exactly as it came.
    """
    kind = raw.get("type")
    if kind == "text" and set(raw) <= {"type", "text", "citations"} and not raw.get("citations"):
        return TextBlock(text=str(raw.get("text", "")))
    if kind == "thinking":
        return ThinkingBlock(text=str(raw.get("thinking", "")), signature=str(raw.get("signature", "")))
    if kind == "tool_use":
        tool_input = raw.get("input")
        return ToolUseBlock(
            id=str(raw.get("id", "")),
            name=str(raw.get("name", "")),
            input=cast("JsonObject", tool_input) if isinstance(tool_input, dict) else {},
            exact=exact,
        )
    return ProviderBlock(kind=str(kind), raw=raw)
