"""The provider-neutral conversation model: messages, content blocks, requests, responses, usage.

No provider SDK type crosses this line. An adapter converts to and from its wire form on every call,
and a block it does not model (a server tool call, a search result, redacted thinking) travels as a
`ProviderBlock` holding the block's full JSON, so it is sent back exactly as it came.

The JSON form (`message_to_json` / `message_from_json`) is what the run journal stores: each block is
an object with exactly one key, as in fisk-ai's journal v3:

    {"text": {"text": ...}}
    {"thinking": {"text": ..., "signature": ...}}
    {"tool_use": {"id": ..., "name": ..., "input": {...}}}   (+ "exact": "<JSON text>" when numbers differ)
    {"tool_result": {"tool_use_id": ..., "content": ..., "is_error": true}}   (is_error only when true)
    {"provider": {"kind": "<provider block type>", "raw": {...}}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

from fiskai_core.tools import DecodedValue, JsonNumber, dumps_exact, exact_of, loads_exact

from ._capabilities import Capabilities

__all__ = [
    "CacheTTL",
    "ContentBlock",
    "JsonObject",
    "Message",
    "ProviderBlock",
    "Request",
    "Response",
    "Role",
    "TextBlock",
    "ThinkingBlock",
    "ToolDef",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
    "exact_of",
    "message_from_json",
    "message_to_json",
    "tool_result_from_json",
    "tool_result_to_json",
]

JsonObject: TypeAlias = dict[str, Any]
Role = Literal["user", "assistant"]
CacheTTL = Literal["5m", "1h"]
_DERIVED: Any = JsonNumber("")
"""`ToolUseBlock.exact` left unset (a sentinel no decoder produces)."""


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Prose from the model or the user."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """The model's (summarized) reasoning; `signature` must go back unmodified."""

    text: str
    signature: str = ""


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """A tool call the model asked for."""

    id: str
    name: str
    input: JsonObject = field(default_factory=lambda: {})
    """The arguments as plain JSON (what is sent back to the model server); `{}` when they are no object."""
    exact: DecodedValue = _DERIVED
    """The arguments exactly as the model wrote them, decoded once where the response arrived (numbers keep
    their text: `1.50` stays `1.50`); any JSON value, so a non-object is refused, not run. Derived from
    `input` when not given (a message built in code, or journaled before this field existed)."""

    @property
    def arguments(self) -> DecodedValue:
        """What the tool is called with: `exact`, else `input` with its numbers as Python writes them."""
        return self.exact if self.exact is not _DERIVED else exact_of(self.input)


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """A tool's answer, sent back in the next user message."""

    tool_use_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ProviderBlock:
    """A block only its provider understands, kept verbatim (e.g. `server_tool_use`, `tool_search_tool_result`)."""

    kind: str
    raw: JsonObject


ContentBlock: TypeAlias = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ProviderBlock


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation turn."""

    role: Role
    content: tuple[ContentBlock, ...]

    @property
    def text(self) -> str:
        """The message's text blocks joined with blank lines (the answer, for a final turn)."""
        return "\n\n".join(block.text for block in self.content if isinstance(block, TextBlock))

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        """The tool calls in block order."""
        return tuple(block for block in self.content if isinstance(block, ToolUseBlock))


@dataclass(frozen=True, slots=True)
class ToolDef:
    """A tool as offered to the model."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    defer_loading: bool = False
    """Found through server-side tool search rather than sent up front."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token counts of one call, in the four tiers a budget sums."""

    input_tokens: int = 0
    """Uncached input."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0

    @property
    def total(self) -> int:
        """All four tiers: what the run budget measures."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_create_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """Everything one model call needs; built by the loop, rendered by an adapter."""

    model: str
    system: tuple[str, ...]
    """System text blocks, in order (prompt, notes, resume reminder, memory index)."""
    messages: tuple[Message, ...]
    tools: tuple[ToolDef, ...] = ()
    tool_search: bool = False
    """Append the server-side BM25 tool-search tool (some tool is deferred)."""
    thinking: bool = False
    """Ask for adaptive, summarized thinking."""
    max_output_tokens: int = 8192
    effort: str = ""
    """`llm.reasoning_effort`, passed through unchecked; empty sends nothing. Rides on the thinking capability."""
    prompt_cache: bool = False
    """Mark the two cache breakpoints (last system block, conversation tail)."""
    cache_ttl: CacheTTL = "5m"
    """1h for interactive runs, whose pauses between turns outlast 5 minutes."""
    iteration: int = 0
    """The loop iteration, for tracing."""
    capabilities: Capabilities | None = None
    """The run's capabilities when narrower than the provider's own (a server refused one mid-run): a
    capability off here is neither used nor named in the request. `None` keeps the provider's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Response:
    """One model answer."""

    message: Message
    """The assistant message, every block kept (provider blocks included)."""
    stop_reason: str
    """`end_turn`, `tool_use`, `max_tokens`, `pause_turn`, `refusal`, `stop_sequence`, or whatever the provider said."""
    usage: Usage
    model: str = ""
    id: str = ""


def _block_to_json(block: ContentBlock) -> JsonObject:
    match block:
        case TextBlock():
            return {"text": {"text": block.text}}
        case ThinkingBlock():
            return {"thinking": {"text": block.text, "signature": block.signature}}
        case ToolUseBlock():
            body: JsonObject = {"id": block.id, "name": block.name, "input": block.input}
            if block.exact is not _DERIVED:
                exact = dumps_exact(block.exact)
                if exact != dumps_exact(exact_of(block.input)):
                    # Kept only when it differs (`1.50`, `1e2`, a non-object), so a resumed call runs as written.
                    body["exact"] = exact
            return {"tool_use": body}
        case ToolResultBlock():
            return {"tool_result": tool_result_to_json(block)}
        case ProviderBlock():
            return {"provider": {"kind": block.kind, "raw": block.raw}}


def tool_result_to_json(block: ToolResultBlock) -> JsonObject:
    """The journal's tool result object `{tool_use_id, content, is_error?}`."""
    out: JsonObject = {"tool_use_id": block.tool_use_id, "content": block.content}
    if block.is_error:
        out["is_error"] = True
    return out


def tool_result_from_json(obj: Mapping[str, Any]) -> ToolResultBlock:
    """Parse a journal tool result object.

    Raises:
        ValueError: It is not shaped like one.
    """
    use_id, content, is_error = obj.get("tool_use_id"), obj.get("content", ""), obj.get("is_error", False)
    if not isinstance(use_id, str) or not isinstance(content, str) or not isinstance(is_error, bool):
        raise ValueError("a tool_result needs a string tool_use_id and content")
    return ToolResultBlock(tool_use_id=use_id, content=content, is_error=is_error)


def message_to_json(message: Message) -> JsonObject:
    """The journal form of a message."""
    return {"role": message.role, "content": [_block_to_json(block) for block in message.content]}


def _block_from_json(obj: object) -> ContentBlock:
    if not isinstance(obj, dict) or len(cast("dict[str, Any]", obj)) != 1:
        raise ValueError("a content block must be an object with exactly one key")
    ((kind, body),) = cast("dict[str, Any]", obj).items()
    if not isinstance(body, dict):
        raise ValueError(f"content block {kind!r} must hold an object")
    data = cast("dict[str, Any]", body)
    match kind:
        case "text":
            return TextBlock(text=_str(data, "text"))
        case "thinking":
            return ThinkingBlock(text=_str(data, "text"), signature=_str(data, "signature", ""))
        case "tool_use":
            raw_input = data.get("input", {})
            exact = data.get("exact")
            return ToolUseBlock(
                id=_str(data, "id"),
                name=_str(data, "name"),
                input=cast("JsonObject", raw_input) if isinstance(raw_input, dict) else {},
                exact=loads_exact(exact) if isinstance(exact, str) else _DERIVED,
            )
        case "tool_result":
            return tool_result_from_json(data)
        case "provider":
            raw = data.get("raw")
            if not isinstance(raw, dict):
                raise ValueError("a provider block needs a raw object")
            return ProviderBlock(kind=_str(data, "kind"), raw=cast("JsonObject", raw))
        case _:
            raise ValueError(f"unknown content block {kind!r}")


def _str(data: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string")
    return value


def message_from_json(obj: Mapping[str, Any]) -> Message:
    """Parse the journal form of a message.

    Raises:
        ValueError: It is not a message this model wrote.
    """
    role = obj.get("role")
    content = obj.get("content")
    if role not in ("user", "assistant") or not isinstance(content, list):
        raise ValueError("a message needs role user|assistant and a content list")
    blocks: Sequence[object] = cast("list[object]", content)
    return Message(role=role, content=tuple(_block_from_json(block) for block in blocks))
