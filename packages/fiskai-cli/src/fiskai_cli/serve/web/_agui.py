"""AG-UI (`POST <base>/agui`): the run input, events, interrupts and resume, history.

The body is a `RunAgentInput` (camelCase): `threadId`, `runId`, `messages` (only the last user message
counts: the journal is the conversation) and `resume` (answers to the interrupts the last run ended
on). Events, one JSON per SSE `data:` line: `RUN_STARTED`, a `CUSTOM` event `fisk.capabilities`, text
(`TEXT_MESSAGE_START`/`_CONTENT`/`_END`), tool calls (`TOOL_CALL_START`/`_ARGS`/`_END`, then
`TOOL_CALL_RESULT`), and last `RUN_FINISHED` (outcome `success`, or `interrupt` with one interrupt
whose id is `<kind>:<toolUseId>`) or `RUN_ERROR`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any, cast

from ._questions import ASK_KINDS, Answer, Question, parse_answer
from ._turns import TurnEvent
from ._vercel import PING, sse, text_parts

__all__ = ["CAPABILITIES", "AguiRequest", "history", "parse_request", "stream"]

CAPABILITIES: dict[str, Any] = {
    "interrupts": ["approval", "confirm", "select", "input"],
    "approvals": ["once", "conversation", "decline"],
    "history": "server",
    "streaming": True,
}
"""What the `fisk.capabilities` event tells a client: questions end the run as interrupts; the server
keeps the conversation (a client's history is ignored but for the last message)."""


class AguiRequest:
    def __init__(self, thread: object, run_id: str, text: str, answer: Answer | None) -> None:
        self.thread = thread
        self.run_id = run_id
        self.text = text
        self.answer = answer


def parse_request(body: dict[str, Any]) -> AguiRequest:
    """A `RunAgentInput`.

    Raises:
        ValueError: a field of the wrong shape, named.
    """
    run_id = body.get("runId") or "run-" + uuid.uuid4().hex
    if not isinstance(run_id, str):
        raise ValueError("runId must be text")
    answer = _resume(body.get("resume"))
    messages = body.get("messages", [])
    if not isinstance(messages, list):
        raise ValueError("messages must be a list")
    text = ""
    if answer is None and messages:
        last: Any = messages[-1]  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(last, dict) or last.get("role") != "user":  # pyright: ignore[reportUnknownMemberType]
            raise ValueError("the last message must be the user's")
        content: Any = last.get("content")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(content, list):
            content = text_parts(cast("object", content))
        text = content if isinstance(content, str) else ""
    return AguiRequest(body.get("threadId"), run_id, text, answer)


def _resume(resume: object) -> Answer | None:
    if not resume:
        return None
    if not isinstance(resume, list) or not isinstance(resume[0], dict):
        raise ValueError("resume must be a list of {interruptId, status, payload}")
    entry: dict[str, Any] = resume[0]  # pyright: ignore[reportUnknownVariableType]
    interrupt = entry.get("interruptId")
    kind, sep, tool_use_id = str(interrupt or "").partition(":")
    if not sep or kind not in ("approval", *ASK_KINDS.values()):
        raise ValueError("resume[0].interruptId must be <kind>:<toolUseId> as the interrupt gave it")
    status = entry.get("status")
    if status == "cancelled":
        none: dict[str, object] = {"approval": "decline", "confirm": False, "select": -1, "input": None}
        field = {"approval": "approval", "confirm": "confirmed", "select": "index", "input": "value"}[kind]
        declined: dict[str, object] = {"toolUseId": tool_use_id, "kind": kind, field: none[kind]}
        return parse_answer(declined)
    if status != "resolved":
        raise ValueError("resume[0].status must be resolved or cancelled")
    payload = entry.get("payload")
    if not isinstance(payload, dict):
        raise ValueError("resume[0].payload must be an object {approval|confirmed|index|value}")
    resolved: dict[str, object] = {**cast("dict[str, object]", payload), "toolUseId": tool_use_id, "kind": kind}
    return parse_answer(resolved)


async def stream(events: AsyncIterator[TurnEvent], thread: str, run_id: str) -> AsyncIterator[bytes]:
    """The turn's events as AG-UI events."""
    yield sse({"type": "RUN_STARTED", "threadId": thread, "runId": run_id})
    yield sse({"type": "CUSTOM", "name": "fisk.capabilities", "value": CAPABILITIES})
    count = 0
    async for kind, block in events:
        if kind == "ping":
            yield PING
            continue
        count += 1
        for event in _events(kind, block, thread, run_id, count):
            yield sse(event)


def _events(kind: str, block: dict[str, Any], thread: str, run_id: str, count: int) -> list[dict[str, Any]]:
    if kind == "text":
        message = f"{run_id}-m{count}"
        return [
            {"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": str(block.get("text", "")) or " "},
            {"type": "TEXT_MESSAGE_END", "messageId": message},
        ]
    if kind == "tool_call":
        call = str(block["id"])
        start: dict[str, Any] = {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": str(block["name"])}
        if block.get("display"):
            start["metadata"] = {"display": str(block["display"])}
        return [
            start,
            {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": json.dumps(block.get("input", {}))},
            {"type": "TOOL_CALL_END", "toolCallId": call},
        ]
    if kind == "tool_result":
        call = str(block["call_id"])
        return [
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": f"{run_id}-r{count}",
                "toolCallId": call,
                "content": str(block["output"]),
                "role": "tool",
            }
        ]
    if kind == "warning":
        return [{"type": "CUSTOM", "name": "fisk.warning", "value": block}]
    if kind == "end":
        return [_end(block, thread, run_id)]
    return []


def _end(block: dict[str, Any], thread: str, run_id: str) -> dict[str, Any]:
    reason = block["reason"]
    if reason == "question":
        question: Question = block["question"]
        interrupt = {
            "id": question.interrupt_id,
            "reason": question.kind,
            "message": question.text,
            "toolCallId": question.tool_use_id,
            "metadata": question.wire(),
        }
        return {
            "type": "RUN_FINISHED",
            "threadId": thread,
            "runId": run_id,
            "outcome": {"type": "interrupt", "interrupts": [interrupt]},
        }
    if reason == "completed":
        return {
            "type": "RUN_FINISHED",
            "threadId": thread,
            "runId": run_id,
            "result": {"answer": block.get("answer", "")},
            "outcome": {"type": "success"},
        }
    return {
        "type": "RUN_ERROR",
        "message": str(block.get("error") or "the run failed"),
        "code": block.get("code", "failed"),
    }


def history(blocks: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """A conversation read back from the journal as AG-UI messages."""
    messages: list[dict[str, Any]] = []
    for kind, block in blocks:
        index = len(messages)
        if kind == "prompt":
            messages.append({"id": f"u{index}", "role": "user", "content": block["text"]})
        elif kind == "text":
            messages.append({"id": f"a{index}", "role": "assistant", "content": block["text"]})
        elif kind == "tool_call":
            call = {
                "id": block["id"],
                "type": "function",
                "function": {"name": block["name"], "arguments": json.dumps(block.get("input", {}))},
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("toolCalls", []).append(call)
            else:
                messages.append({"id": f"a{index}", "role": "assistant", "toolCalls": [call]})
        elif kind == "tool_result":
            message = {"id": f"t{index}", "role": "tool", "toolCallId": block["call_id"], "content": block["output"]}
            if block.get("is_error"):
                message["error"] = block["output"]
            messages.append(message)
    return messages
