"""The loop's spans: `chat <model>` per model call and `execute_tool <name>` per tool call (reference 6.2, 6.3).

Attribute and metric names are the Go agent's, so its dashboards read fiskai's traces. Nothing the model
controls goes into a span name or a metric attribute: an unknown tool's span is plain `execute_tool`,
its requested name an attribute of that span only. Content (capture on) is converted to the GenAI
semantic-convention message shape, thinking signatures and provider payloads replaced by a marker.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fiskai_agent.llm import (
    Message,
    ProviderBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from fiskai_core.telemetry import OMITTED, Span, Telemetry, fit_json, fit_messages

__all__ = ["ChatTelemetry", "ToolSpan", "genai_messages"]

_PROVIDER = "anthropic"


def _part(block: object) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "content": block.text}
    if isinstance(block, ThinkingBlock):
        # The signature is an opaque provider token: worthless to a reader, and not ours to export.
        return {"type": "reasoning", "content": block.text, "signature": OMITTED if block.signature else ""}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_call", "id": block.id, "name": block.name, "arguments": block.input}
    if isinstance(block, ToolResultBlock):
        return {"type": "tool_call_response", "id": block.tool_use_id, "response": block.content}
    if isinstance(block, ProviderBlock):
        return {"type": block.kind, "content": OMITTED}
    return {"type": "unknown", "content": OMITTED}


def genai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages in the GenAI shape: `{"role", "parts": [...]}`; a user turn of tool results has role `tool`."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.role
        if role == "user" and message.content and all(isinstance(b, ToolResultBlock) for b in message.content):
            role = "tool"
        out.append({"role": role, "parts": [_part(block) for block in message.content]})
    return out


@dataclass(slots=True)
class ChatTelemetry:
    """Spans and metrics of the run's model calls; remembers what delta capture has already exported."""

    telemetry: Telemetry
    exported: int = 0
    """Messages of the conversation already exported (delta capture)."""

    def attributes(self, request: Request) -> dict[str, Any]:
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _PROVIDER,
            "gen_ai.request.model": request.model,
            "fisk.llm.iteration": request.iteration,
            "fisk.llm.messages": len(request.messages),
            "fisk.llm.tools": len(request.tools),
        }

    def capture_input(self, span: Span, request: Request) -> None:
        capture = self.telemetry.capture
        if capture is None or not span.recording:
            return
        start = 0 if capture.messages == "full" else min(self.exported, len(request.messages))
        fitted = fit_messages(genai_messages(request.messages[start:]), capture.max_bytes)
        span.set("gen_ai.input.messages", fitted.text)
        span.set("fisk.content.from_index", start + fitted.dropped)
        if fitted.dropped:
            span.set("fisk.content.dropped_messages", fitted.dropped)
        if fitted.truncated:
            span.set("fisk.content.truncated", True)
        # The reply joins the conversation next; the following delta starts after it.
        self.exported = len(request.messages) + 1

    def finished(self, span: Span, request: Request, response: Response, started: float) -> None:
        usage = response.usage
        total_in = usage.input_tokens + usage.cache_read_tokens + usage.cache_create_tokens
        span.set("gen_ai.response.model", response.model or request.model)
        if response.id:
            span.set("gen_ai.response.id", response.id)
        span.set("gen_ai.response.finish_reasons", [response.stop_reason])
        span.set("gen_ai.usage.input_tokens", total_in)
        span.set("gen_ai.usage.output_tokens", usage.output_tokens)
        span.set("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
        span.set("gen_ai.usage.cache_creation.input_tokens", usage.cache_create_tokens)
        span.set("fisk.llm.uncached_input_tokens", usage.input_tokens)
        capture = self.telemetry.capture
        if capture is not None and span.recording:
            out = genai_messages([response.message])
            out[0]["finish_reason"] = response.stop_reason
            span.set("gen_ai.output.messages", fit_messages(out, capture.max_bytes).text)
        base = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _PROVIDER,
            "gen_ai.request.model": request.model,
        }
        self.telemetry.record("gen_ai.client.token.usage", total_in, {**base, "gen_ai.token.type": "input"})
        self.telemetry.record("gen_ai.client.token.usage", usage.output_tokens, {**base, "gen_ai.token.type": "output"})
        self.telemetry.record("gen_ai.client.operation.duration", time.perf_counter() - started, base)

    def failed(self, span: Span, request: Request, error_type: str, started: float) -> None:
        span.error(error_type)
        self.telemetry.record(
            "gen_ai.client.operation.duration",
            time.perf_counter() - started,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": _PROVIDER,
                "gen_ai.request.model": request.model,
                "error.type": error_type,
            },
        )


@dataclass(slots=True)
class ToolSpan:
    """What one `execute_tool` span learns as the call goes through the path; `close` writes it down."""

    span: Span
    telemetry: Telemetry
    name: str = ""
    """The registered tool's name ("" while unknown: never a model-chosen value on a metric)."""
    kind: str = ""
    outcome: str = "executed"
    error_type: str = ""
    started: float = field(default_factory=time.perf_counter)

    def known(self, name: str, kind: str, arguments: dict[str, Any]) -> None:
        self.name, self.kind = name, kind
        self.span.set("gen_ai.tool.name", name)
        self.span.set("fisk.tool.kind", kind)
        self.span.set("fisk.tool.arg_keys", sorted(arguments))
        capture = self.telemetry.capture
        if capture is not None and self.span.recording:
            self.span.set("gen_ai.tool.call.arguments", fit_json(arguments, capture.max_bytes).text)

    def result(self, text: str, *, is_error: bool, exit_code: int | None) -> None:
        if exit_code is not None:
            self.span.set("fisk.tool.exit_code", exit_code)
        if is_error and self.outcome == "executed":
            self.outcome, self.error_type = "error", "tool_error"
        capture = self.telemetry.capture
        if capture is not None and self.span.recording:
            fitted = fit_json(text, capture.max_bytes)
            self.span.set("gen_ai.tool.call.result", fitted.text)
            if fitted.truncated:
                self.span.set("fisk.content.truncated", True)

    def refused(self, outcome: str) -> None:
        self.outcome, self.error_type = outcome, outcome

    def close(self) -> None:
        self.span.set("fisk.tool.outcome", self.outcome)
        if self.error_type:
            self.span.error(self.error_type)
        attributes: dict[str, Any] = {"fisk.tool.outcome": self.outcome}
        if self.name:
            attributes["gen_ai.tool.name"] = self.name
            attributes["fisk.tool.kind"] = self.kind
        if self.error_type:
            attributes["error.type"] = self.error_type
        self.telemetry.record("gen_ai.execute_tool.duration", time.perf_counter() - self.started, attributes)


def arguments_json(arguments: object) -> str:
    """Arguments as compact JSON (for a journaled hook rewrite)."""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
