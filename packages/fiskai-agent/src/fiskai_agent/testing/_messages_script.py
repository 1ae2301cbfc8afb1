"""The script a `MessagesServer` plays: content blocks and the steps each request takes in order.

Blocks: `text`, `thinking`, `redacted_thinking`, `tool_use` (its input optionally raw JSON text, sent as
written), server tool use and tool-search results. Steps: `Turn`, `Failure`, `Hang`, `Drop`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Block",
    "RawJSON",
    "dumps",
    "Drop",
    "Failure",
    "Hang",
    "Turn",
    "Usage",
    "redacted_thinking",
    "server_tool_use",
    "text",
    "thinking",
    "tool_search",
    "tool_search_result",
    "tool_use",
]

Block = dict[str, Any]


def text(value: str) -> Block:
    """A `text` content block."""
    return {"type": "text", "text": value}


def thinking(summary: str, signature: str = "c2lnbmF0dXJl") -> Block:
    """A `thinking` block with its signature (base64, passed back verbatim by a correct client)."""
    return {"type": "thinking", "thinking": summary, "signature": signature}


def redacted_thinking(data: str = "cmVkYWN0ZWQ=") -> Block:
    """A `redacted_thinking` block (opaque; must be sent back unchanged)."""
    return {"type": "redacted_thinking", "data": data}


@dataclass(frozen=True)
class RawJSON:
    """JSON text the server writes into its answer exactly as given."""

    text: str


def tool_use(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    id: str | None = None,  # noqa: A002
    raw_input: str | None = None,
) -> Block:
    """A `tool_use` block; `id` defaults to one numbered by the server when the turn is served.

    `raw_input` is the input as JSON text, sent verbatim in place of `arguments` (in the JSON body, and as
    the `input_json_delta` fragments of a stream): numbers as a model wrote them (`1.50`, `1e2`), or a
    value that is no object at all (`null`, `"x"`, `[1]`). It is not checked: invalid text is sent too.
    """
    tool_input: Any = RawJSON(raw_input) if raw_input is not None else dict(arguments or {})
    block: Block = {"type": "tool_use", "id": id or "", "name": name, "input": tool_input}
    return block


def dumps(value: object) -> str:
    """`json.dumps`, with each `RawJSON` written as its own text."""
    raws: list[str] = []

    def raw(item: object) -> str:
        if not isinstance(item, RawJSON):
            raise TypeError(f"{type(item).__name__} is not JSON serializable")
        raws.append(item.text)
        return f"\x00raw-json-{len(raws) - 1}\x00"

    encoded = json.dumps(value, default=raw)
    for index, text in enumerate(raws):
        encoded = encoded.replace(json.dumps(f"\x00raw-json-{index}\x00"), text, 1)
    return encoded


def server_tool_use(query: str, *, id: str | None = None, name: str = "tool_search_tool_bm25") -> Block:  # noqa: A002
    """A `server_tool_use` block: the server ran its tool search with `query`."""
    return {"type": "server_tool_use", "id": id or "", "name": name, "input": {"query": query}}


def tool_search_result(tool_use_id: str, tool_names: Sequence[str]) -> Block:
    """A successful `tool_search_tool_result` block loading `tool_names` (deferred tools) for the model."""
    return {
        "type": "tool_search_tool_result",
        "tool_use_id": tool_use_id,
        "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": name} for name in tool_names],
        },
    }


def tool_search(query: str, tool_names: Sequence[str], *, id: str = "srvtoolu_search") -> list[Block]:  # noqa: A002
    """The `server_tool_use` and `tool_search_tool_result` pair of one server-side tool search."""
    return [server_tool_use(query, id=id), tool_search_result(id, tool_names)]


@dataclass(frozen=True)
class Usage:
    """Token counts reported for a turn; `None` input or output is estimated from the sizes (4 bytes a token)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass(frozen=True)
class Turn:
    """One assistant response.

    Attributes:
        content: The content blocks, built with `text`, `thinking`, `tool_use`, `server_tool_use`, ...
        stop_reason: `tool_use` when a block is a tool_use, else `end_turn`, unless given
            (`max_tokens`, `pause_turn`, `refusal`, ...).
        usage: Token counts; estimated when not given.
    """

    content: Sequence[Block]
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Failure:
    """An HTTP error answer.

    Attributes:
        status: 429 (rate limit), 529 (overloaded), 400, 500, ...
        message: The error message in the Anthropic error body.
        retry_after: Seconds to send as `retry-after-ms` (the SDK waits exactly that), or None.
        should_retry: Sent as `x-should-retry` when not None (the SDK obeys it over the status).
    """

    status: int
    message: str = "scripted failure"
    retry_after: float | None = None
    should_retry: bool | None = None


@dataclass(frozen=True)
class Hang:
    """Read the request, then answer nothing until the client disconnects (its timeout) or the server stops."""


@dataclass(frozen=True)
class Drop:
    """Read the request, then close the connection without answering (a connection error to the client)."""
