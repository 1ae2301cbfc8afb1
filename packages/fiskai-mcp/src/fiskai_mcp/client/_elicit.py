"""A server's elicitation request, relayed to the operator's prompter; declined when nobody can answer.

A form with no fields is a yes/no question, as is a form of one boolean field. Otherwise each field is asked in turn: a boolean as a yes/no
question, an enumeration as a choice, anything else as text (a number or an integer is read back as one;
an unreadable answer declines). A URL elicitation is declined: fiskai opens nothing on a server's behalf.
Every question names the server, so an operator knows who is asking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import mcp_types as types
from mcp.client.session import ClientRequestContext, ElicitationFnT

from fiskai_core.prompter import PromptDeclined, Prompter

__all__ = ["elicitation_relay"]


def elicitation_relay(prompter: Prompter, server: str) -> ElicitationFnT:
    """The `elicitation_callback` for `server`'s client."""

    async def relay(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        if not prompter.can_prompt() or not isinstance(params, types.ElicitRequestFormParams):
            return types.ElicitResult(action="decline")
        try:
            content = await _ask(prompter, server, params.message, params.requested_schema)
        except PromptDeclined:
            return types.ElicitResult(action="cancel")
        if content is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=content)

    return relay


async def _ask(
    prompter: Prompter, server: str, message: str, schema: Mapping[str, Any]
) -> dict[str, str | int | float | bool | list[str] | None] | None:
    head = f'MCP server "{server}" asks: {message}'
    properties = cast("dict[str, dict[str, Any]]", schema.get("properties") or {})
    if not properties:
        return {} if await prompter.ask_confirm(head) else None
    if len(properties) == 1:
        ((key, field),) = properties.items()
        if field.get("type") == "boolean":
            # One yes/no field (an approval): one question, and a "no" is an answer the server reads, not a decline.
            label = str(field.get("title") or field.get("description") or key)
            return {key: await prompter.ask_confirm(f"{head} ({label})")}
    if not await prompter.ask_confirm(f"{head} (answer {len(properties)} question(s))"):
        return None
    content: dict[str, str | int | float | bool | list[str] | None] = {}
    for key, field in properties.items():
        label = str(field.get("title") or field.get("description") or key)
        kind = field.get("type")
        options = field.get("enum")
        if kind == "boolean":
            content[key] = await prompter.ask_confirm(f"{label}?")
        elif isinstance(options, list) and options:
            shown = [str(o) for o in cast("list[object]", options)]
            content[key] = shown[await prompter.ask_select(label, shown)]
        else:
            text = await prompter.ask_input(f"{label}:", str(field.get("default", "")))
            if kind in ("number", "integer"):
                try:
                    content[key] = int(text) if kind == "integer" else float(text)
                except ValueError:
                    return None
            else:
                content[key] = text
    return content
