"""A streamed Messages response (SSE) assembled into one `Response`, tool arguments decoded once.

The SDK's own accumulator parses each tool call's partial JSON as it grows and keeps floats; this one
concatenates a block's `input_json_delta` fragments and decodes the whole text once at the end with
its numbers kept (`1.50` stays `1.50`). Events are read as plain dicts (`to_dict()`), so an event kind
or field this code does not know is passed over, never fatal.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any, cast

from fiskai_agent.errors import ProviderError
from fiskai_core.tools import DecodedValue, loads_exact, plain_json

from ._blocks import neutral_block
from ._types import ContentBlock, JsonObject, Message, Response, Usage, exact_of

__all__ = ["collect_stream"]

_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


class _Block:
    __slots__ = ("json_text", "raw")

    def __init__(self, raw: JsonObject) -> None:
        self.raw = raw
        self.json_text: list[str] = []


async def collect_stream(events: AsyncIterable[Any]) -> Response:
    """Read every event of one streamed message and build the response.

    Raises:
        ProviderError: The stream ended without a message, or carried an `error` event.
    """
    head: JsonObject = {}
    blocks: dict[int, _Block] = {}
    usage: JsonObject = {}
    stop_reason = ""
    async for event in events:
        data = cast("JsonObject", event.to_dict())
        kind = data.get("type")
        if kind == "message_start":
            head = cast("JsonObject", data.get("message") or {})
            usage.update(cast("JsonObject", head.get("usage") or {}))
        elif kind == "content_block_start":
            blocks[int(data.get("index", len(blocks)))] = _Block(
                dict(cast("JsonObject", data.get("content_block") or {}))
            )
        elif kind == "content_block_delta":
            block = blocks.get(int(data.get("index", -1)))
            if block is not None:
                _apply(block, cast("JsonObject", data.get("delta") or {}))
        elif kind == "message_delta":
            delta = cast("JsonObject", data.get("delta") or {})
            stop_reason = str(delta.get("stop_reason") or stop_reason)
            usage.update({k: v for k, v in cast("JsonObject", data.get("usage") or {}).items() if v is not None})
        elif kind == "error":
            raise ProviderError(f"the model API stream failed: {data.get('error')}")
    if not head:
        raise ProviderError("the model API stream ended before a message started")
    content = tuple(_finish(blocks[index]) for index in sorted(blocks))
    return Response(
        message=Message(role="assistant", content=content),
        stop_reason=stop_reason,
        usage=Usage(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cache_create_tokens=int(usage.get("cache_creation_input_tokens") or 0),
        ),
        model=str(head.get("model") or ""),
        id=str(head.get("id") or ""),
    )


def _apply(block: _Block, delta: JsonObject) -> None:
    raw = block.raw
    match delta.get("type"):
        case "text_delta":
            raw["text"] = str(raw.get("text", "")) + str(delta.get("text", ""))
        case "thinking_delta":
            raw["thinking"] = str(raw.get("thinking", "")) + str(delta.get("thinking", ""))
        case "signature_delta":
            raw["signature"] = str(delta.get("signature", ""))
        case "input_json_delta":
            block.json_text.append(str(delta.get("partial_json", "")))
        case "citations_delta":
            cited = raw.setdefault("citations", [])
            if isinstance(cited, list):
                cast("list[object]", cited).append(delta.get("citation"))
        case _:
            pass


def _finish(block: _Block) -> ContentBlock:
    raw = block.raw
    kind = raw.get("type")
    exact: DecodedValue = None
    if kind in _INPUT_BLOCKS:
        text = "".join(block.json_text)
        if text.strip():
            try:
                exact = loads_exact(text)
            except ValueError as err:
                raise ProviderError(f"the model API streamed tool input that is not JSON: {err}") from None
        else:
            # No input_json_delta: the input came whole in content_block_start (some compatible servers send
            # it so), already decoded by the SDK; kept, as the SDK's own accumulator keeps it.
            exact = exact_of(raw.get("input", {}))
        raw["input"] = plain_json(exact)
    return neutral_block(raw, exact)
