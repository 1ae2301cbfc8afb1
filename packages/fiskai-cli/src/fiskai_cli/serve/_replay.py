"""Reading a served conversation back from its journal as protocol blocks (`request.read`, replay).

Sends what a caller may see: prompts, prose, tool calls and results. Never thinking signatures, the
configuration fingerprint, the caller, the token or standing approvals. Long values are trimmed so one
block always fits a message.
"""

from __future__ import annotations

from typing import Any, Final

from fiskai_agent.llm import TextBlock, ToolResultBlock, ToolUseBlock, message_from_json
from fiskai_runstate import JournalNotFoundError, Store, fold
from fiskai_runstate.state import Counters

__all__ = ["MAX_REPLAY", "PendingCalls", "pending_calls", "read_conversation", "session_exists"]

MAX_REPLAY: Final = 200
_MAX_TEXT: Final = 64 * 1024

Block = tuple[str, dict[str, Any]]


async def session_exists(store: Store, session: str) -> bool:
    """Whether the journal exists (a follow-up to an unknown token is refused before its ack)."""
    try:
        return bool(await store.load(session))
    except JournalNotFoundError:
        return False


PendingCalls = tuple[list[tuple[str, str]], set[str]]
"""A conversation's calls waiting for a result (id, tool name) in order, and the ids that have one."""


async def pending_calls(store: Store, session: str) -> PendingCalls | None:
    """What a `request.answer` may address: the last model turn's calls still without a result.

    None when there is no such conversation.
    """
    try:
        state = fold(await store.load(session))
    except JournalNotFoundError:
        return None
    answered: set[str] = set()
    for raw in state.messages:
        for block in message_from_json(raw).content:
            if isinstance(block, ToolResultBlock):
                answered.add(block.tool_use_id)
    pending = state.pending
    if pending is None:
        return [], answered
    answered.update(pending.answered)
    names = {
        block.id: block.name
        for block in message_from_json(pending.assistant).content
        if isinstance(block, ToolUseBlock)
    }
    return [(use, names.get(use, "")) for use in pending.unanswered], answered


async def read_conversation(store: Store, session: str, replay: int) -> tuple[list[Block], bool, dict[str, int]] | None:
    """A conversation's last `replay` blocks, whether older ones were left out, and its whole usage.

    `replay` is capped at 200 and widened back to the start of a turn; None when there is no such conversation.
    """
    try:
        records = await store.load(session)
    except JournalNotFoundError:
        return None
    if not records:
        return None
    state = fold(records)
    turns: list[list[Block]] = []
    for raw in state.messages:
        message = message_from_json(raw)
        for block in message.content:
            if isinstance(block, TextBlock) and block.text:
                if message.role == "user":
                    turns.append([("prompt", {"text": _trim(block.text)})])
                else:
                    _last(turns).append(("text", {"text": _trim(block.text), "final": False}))
            elif isinstance(block, ToolUseBlock):
                _last(turns).append(("tool_call", {"id": block.id, "name": block.name, "input": block.input}))
            elif isinstance(block, ToolResultBlock):
                output = {"call_id": block.tool_use_id, "output": _trim(block.content), "is_error": block.is_error}
                _last(turns).append(("tool_result", output))
    for turn in turns:  # the last prose of a turn is its answer
        texts = [block for kind, block in turn if kind == "text"]
        if texts:
            texts[-1]["final"] = True
    wanted = min(max(replay, 1), MAX_REPLAY)
    kept: list[Block] = []
    for turn in reversed(turns):
        if len(kept) >= wanted:
            break
        kept[:0] = turn  # whole turns: a result never arrives without its call
    total = sum(len(turn) for turn in turns)
    return kept, len(kept) < total, journal_usage(state.counters)


def journal_usage(counters: Counters) -> dict[str, int]:
    """A journal's token and call counters as a v1 reply's `usage` (a replay's and a job answered from it)."""
    return {
        "input_tokens": counters.in_tokens,
        "output_tokens": counters.out_tokens,
        "cache_read_tokens": counters.cache_read_tokens,
        "cache_create_tokens": counters.cache_create_tokens,
        "llm_calls": counters.llm_calls,
        "tool_calls": counters.tool_calls,
    }


def _last(turns: list[list[Block]]) -> list[Block]:
    if not turns:
        turns.append([])
    return turns[-1]


def _trim(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + "\n[trimmed]"
