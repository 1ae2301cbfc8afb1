"""The Vercel AI SDK UI message stream (`POST <base>/vercel`): request parsing, chunks, history.

Wire (the AI SDK's "data stream protocol"): SSE, one JSON chunk per `data:` line, header
`x-vercel-ai-ui-message-stream: v1`, ending with `data: [DONE]`. A turn is one assistant message:
`start`, then per model call `start-step` ... `finish-step` holding text (`text-start`/`-delta`/`-end`),
reasoning, and tool calls (`tool-input-available` with the command line as `title`, then
`tool-output-available` or `tool-output-error`), then `finish`. A question the turn ends on rides as a
`data-fisk-question` part (its `id` is the call's toolUseId) before `finish` (finishReason `other`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any, cast

from ._questions import Answer, Question, parse_answer
from ._turns import TurnEvent

__all__ = ["HEADERS", "VercelRequest", "history", "parse_request", "PING", "sse", "stream", "text_parts"]

HEADERS = {"x-vercel-ai-ui-message-stream": "v1"}
PING = b": ping\n\n"
"""An SSE comment: clients skip it; it keeps a quiet stream open through proxies."""


class VercelRequest:
    """What a POST asks: the thread, the last user message's text, an answer to a question."""

    def __init__(self, thread: object, text: str, answer: Answer | None) -> None:
        self.thread = thread
        self.text = text
        self.answer = answer


def parse_request(body: dict[str, Any]) -> VercelRequest:
    """`{id, messages, fiskAnswer?}`; only the last message counts (the journal is the conversation).

    Raises:
        ValueError: a field of the wrong shape, named.
    """
    answer = parse_answer(body["fiskAnswer"]) if body.get("fiskAnswer") is not None else None
    messages = body.get("messages", [])
    if not isinstance(messages, list):
        raise ValueError("messages must be a list of UI messages")
    text = ""
    if messages and answer is None:
        last: Any = messages[-1]  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(last, dict) or last.get("role") != "user":  # pyright: ignore[reportUnknownMemberType]
            raise ValueError("the last message must be the user's")
        text = _text_of(last)  # pyright: ignore[reportUnknownArgumentType]
    return VercelRequest(body.get("id"), text, answer)


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    return text_parts(message.get("parts")) or (content if isinstance(content, str) else "")


def text_parts(parts: object) -> str:
    """The text of a message's parts (`[{type: "text", text}]`), joined by newlines."""
    if not isinstance(parts, list):
        return ""
    texts: list[str] = []
    for part in cast("list[object]", parts):
        if isinstance(part, dict):
            fields = cast("dict[str, object]", part)
            if fields.get("type") == "text":
                texts.append(str(fields.get("text", "")))
    return "\n".join(texts)


def sse(chunk: dict[str, Any] | str) -> bytes:
    """One SSE event (`data: ...` and a blank line)."""
    data = chunk if isinstance(chunk, str) else json.dumps(chunk, separators=(",", ":"), ensure_ascii=False)
    return f"data: {data}\n\n".encode()


async def stream(events: AsyncIterator[TurnEvent], thread: str) -> AsyncIterator[bytes]:
    """The turn's events as UI message stream chunks, `[DONE]` last."""
    state = _Step()
    yield sse({"type": "start", "messageId": "msg-" + uuid.uuid4().hex})
    async for kind, block in events:
        if kind == "ping":
            yield PING
            continue
        for chunk in _chunks(state, kind, block, thread):
            yield sse(chunk)
    yield sse("[DONE]")


class _Step:
    def __init__(self) -> None:
        self.open = False
        self.tools = False
        self.parts = 0


def _chunks(state: _Step, kind: str, block: dict[str, Any], thread: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if kind in ("text", "thinking", "tool_call", "tool_result"):
        if state.open and state.tools and kind in ("text", "thinking"):
            out.append({"type": "finish-step"})  # a model call after tool results: a new step
            state.open = False
        if not state.open:
            out.append({"type": "start-step"})
            state.open, state.tools = True, False
    if kind in ("text", "thinking"):
        state.parts += 1
        prefix = "text" if kind == "text" else "reasoning"
        part = f"{prefix[0]}{state.parts}"
        out += [
            {"type": f"{prefix}-start", "id": part},
            {"type": f"{prefix}-delta", "id": part, "delta": str(block.get("text", ""))},
            {"type": f"{prefix}-end", "id": part},
        ]
    elif kind == "tool_call":
        state.tools = True
        chunk: dict[str, Any] = {
            "type": "tool-input-available",
            "toolCallId": str(block["id"]),
            "toolName": str(block["name"]),
            "input": block.get("input", {}),
            "dynamic": True,
        }
        if block.get("display"):
            chunk["title"] = str(block["display"])
        out.append(chunk)
    elif kind == "tool_result":
        state.tools = True
        call = str(block["call_id"])
        if block.get("is_error"):
            out.append(
                {"type": "tool-output-error", "toolCallId": call, "errorText": str(block["output"]), "dynamic": True}
            )
        else:
            out.append(
                {"type": "tool-output-available", "toolCallId": call, "output": block["output"], "dynamic": True}
            )
    elif kind == "warning":
        out.append({"type": "data-fisk-warning", "data": block, "transient": True})
    elif kind == "end":
        if state.open:
            out.append({"type": "finish-step"})
            state.open = False
        out += _end(block, thread)
    return out


def _end(block: dict[str, Any], thread: str) -> list[dict[str, Any]]:
    reason = block["reason"]
    meta: dict[str, Any] = {"threadId": thread, "reason": reason}
    if block.get("usage"):
        meta["usage"] = block["usage"]
    if reason == "question":
        question: Question = block["question"]
        return [
            {"type": "data-fisk-question", "id": question.tool_use_id, "data": question.wire()},
            {"type": "finish", "finishReason": "other", "messageMetadata": meta},
        ]
    if reason == "completed":
        return [{"type": "finish", "finishReason": "stop", "messageMetadata": meta}]
    meta["code"] = block.get("code", "failed")
    return [
        {"type": "error", "errorText": str(block.get("error") or "the turn failed")},
        {"type": "finish", "finishReason": "error", "messageMetadata": meta},
    ]


def history(blocks: list[tuple[str, dict[str, Any]]], question: Question | None) -> list[dict[str, Any]]:
    """A conversation read back from the journal as UI messages (tool parts `dynamic-tool`)."""
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    for kind, block in blocks:
        if kind == "prompt":
            messages.append(
                {"id": f"u{len(messages)}", "role": "user", "parts": [{"type": "text", "text": block["text"]}]}
            )
            continue
        if not messages or messages[-1]["role"] != "assistant":
            messages.append({"id": f"a{len(messages)}", "role": "assistant", "parts": []})
        parts: list[dict[str, Any]] = messages[-1]["parts"]
        if kind == "text":
            parts.append({"type": "text", "text": block["text"], "state": "done"})
        elif kind == "tool_call":
            part = {
                "type": "dynamic-tool",
                "toolName": block["name"],
                "toolCallId": block["id"],
                "state": "input-available",
                "input": block.get("input", {}),
            }
            calls[str(block["id"])] = part
            parts.append(part)
        elif kind == "tool_result":
            part = calls.get(str(block["call_id"]))
            if part is not None:
                if block.get("is_error"):
                    part.update(state="output-error", errorText=block["output"])
                else:
                    part.update(state="output-available", output=block["output"])
    if question is not None:
        if not messages or messages[-1]["role"] != "assistant":
            messages.append({"id": f"a{len(messages)}", "role": "assistant", "parts": []})
        messages[-1]["parts"].append(
            {"type": "data-fisk-question", "id": question.tool_use_id, "data": question.wire()}
        )
    return messages
