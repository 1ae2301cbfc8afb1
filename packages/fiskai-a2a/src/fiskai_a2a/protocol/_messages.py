"""The v1 messages: a framing `Header` plus each message's own body.

On the wire the header's fields are flattened into the body (Go embeds the struct), so a captured
message decodes without its transport. In Python the header is a field of every message, which keeps
the framing (who, which request, which conversation) apart from the content. Optional fields are `None`
when absent and are left out when encoding, as Go's `omitempty` does.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from ._ids import (
    ACK,
    CANCEL,
    DISCOVERY_REPLY,
    DISCOVERY_REQUEST,
    ERROR,
    EVENT,
    REQUEST,
    RESULT,
    TOOL_REPLY,
    TOOL_REQUEST,
)

__all__ = [
    "HEADER_FIELDS",
    "Ack",
    "AgentCallBlock",
    "Block",
    "Budget",
    "Cancel",
    "DiscoveryReply",
    "DiscoveryRequest",
    "ErrorMessage",
    "Event",
    "ExecResult",
    "Header",
    "Identity",
    "Message",
    "Request",
    "Result",
    "StatusBlock",
    "StopReason",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "ToolDescriptor",
    "ToolReply",
    "ToolRequest",
    "ToolResultBlock",
    "Usage",
]

StopReason = Literal[
    "end_turn", "max_tokens", "refusal", "canceled", "error", "budget_exhausted", "suspended", "max_iterations"
]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_NAME_PATTERN = r"^[a-zA-Z0-9_-]+$"


class Identity(_Wire):
    """An agent: its logical name (the config identity) and optionally one running instance of it."""

    name: str = Field(pattern=_NAME_PATTERN)
    instance: str | None = Field(default=None, pattern=_NAME_PATTERN)


class Header(_Wire):
    """The framing every message carries: what it is, who sent it, and which request it belongs to."""

    protocol: str
    id: str
    """Unique id of this message (a KSUID)."""
    request: str
    """Correlation id: equals `id` on a request; every reply and event echoes it."""
    conversation: str
    """Stable across the requests of one session."""
    sequence: int = Field(default=0, ge=0)
    """Per-request ordering; 0 for direct RPCs, 1, 2, ... for the events of one call."""
    time: str
    """RFC 3339, UTC; advisory only."""
    sender: Identity
    parent: str | None = None
    """The request that spawned this one (multi-hop)."""
    recipient: Identity | None = None
    must_understand: bool | None = None
    """A receiver that does not understand `protocol` must fail closed."""


HEADER_FIELDS = frozenset(Header.model_fields)
"""The top-level wire keys that belong to the header."""


class Usage(_Wire):
    input_tokens: int | None = None
    output_tokens: int | None = None


class Budget(_Wire):
    max_tokens: int | None = None
    max_iterations: int | None = None
    call_timeout: str | None = None
    """A Go duration string such as `60s`."""


class ExecResult(_Wire):
    """What ran: the command line, its exit code (absent = 0) and whether the output was cut."""

    command: str | None = None
    exit_code: int | None = None
    truncated: bool | None = None


class ToolDescriptor(_Wire):
    """One tool in an agent card."""

    name: str
    description: str | None = None
    input_schema: dict[str, JsonValue] | None = None


class ThinkingBlock(_Wire):
    type: Literal["thinking"] = "thinking"
    text: str
    signature: str | None = None
    provider: str | None = None


class TextBlock(_Wire):
    type: Literal["text"] = "text"
    text: str


class ToolCallBlock(_Wire):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: dict[str, JsonValue] | None = None


class ToolResultBlock(_Wire):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    is_error: bool | None = None
    output: str | None = None
    exec: ExecResult | None = None


class AgentCallBlock(_Wire):
    type: Literal["agent_call"] = "agent_call"
    id: str
    name: str
    task: str


class StatusBlock(_Wire):
    type: Literal["status"] = "status"
    iteration: int | None = None
    phase: str | None = None
    usage: Usage | None = None


Block = Annotated[
    ThinkingBlock | TextBlock | ToolCallBlock | ToolResultBlock | AgentCallBlock | StatusBlock,
    Field(discriminator="type"),
]


class Message(_Wire):
    """A v1 message: its `header` and the body fields of its protocol."""

    PROTOCOL: ClassVar[str] = ""
    """The protocol id this class carries."""

    header: Header

    @model_validator(mode="after")
    def _protocol_matches(self) -> Message:
        if self.header.protocol != self.PROTOCOL:
            raise ValueError(f"header protocol {self.header.protocol!r} does not match {self.PROTOCOL!r}")
        return self

    def to_wire(self) -> dict[str, Any]:
        """The flattened JSON object: header fields, then the body, absent optionals left out."""
        body = self.model_dump(mode="json", exclude={"header"}, exclude_none=True)
        return {**self.header.model_dump(mode="json", exclude_none=True), **body}


class Request(Message):
    """A task for a remote agent's model (modeled and validated; not carried by the NATS binding)."""

    PROTOCOL: ClassVar[str] = REQUEST
    prompt: str
    context: str | None = None
    tool_hints: list[str] | None = None
    budget: Budget | None = None
    stream: bool | None = None
    """Absent means stream."""


class Event(Message):
    """One block of progress for a request or a tool call; `header.sequence` orders them."""

    PROTOCOL: ClassVar[str] = EVENT
    block: Block


class Result(Message):
    """The terminal answer of a request."""

    PROTOCOL: ClassVar[str] = RESULT
    stop_reason: StopReason
    text: str | None = None
    usage: Usage | None = None


class ErrorMessage(Message):
    """A request or message that failed as a whole; `code` is machine-readable (fiskai uses `400`, `500`)."""

    PROTOCOL: ClassVar[str] = ERROR
    error: str
    stop_reason: StopReason | None = None
    code: str | None = None


class Cancel(Message):
    """Stop the request named by `header.request`."""

    PROTOCOL: ClassVar[str] = CANCEL
    reason: str | None = None


class Ack(Message):
    """Whether a request or cancel was accepted."""

    PROTOCOL: ClassVar[str] = ACK
    accepted: bool
    reason: str | None = None


class ToolRequest(Message):
    """Call one tool directly; `input` is its JSON arguments (absent means `{}`)."""

    PROTOCOL: ClassVar[str] = TOOL_REQUEST
    name: str
    input: dict[str, JsonValue] | None = None


class ToolReply(Message):
    """A tool call's outcome: `is_error` for a harness failure; a non-zero exit is in `exec`, not an error."""

    PROTOCOL: ClassVar[str] = TOOL_REPLY
    is_error: bool | None = None
    output: str | None = None
    exec: ExecResult | None = None


class DiscoveryRequest(Message):
    """Ask an agent for its card."""

    PROTOCOL: ClassVar[str] = DISCOVERY_REQUEST


class DiscoveryReply(Message):
    """An agent card: who the agent is, what it speaks and the tools it serves."""

    PROTOCOL: ClassVar[str] = DISCOVERY_REPLY
    name: str
    version: str
    description: str | None = None
    protocols: list[str] | None = None
    tools: list[ToolDescriptor] | None = None
