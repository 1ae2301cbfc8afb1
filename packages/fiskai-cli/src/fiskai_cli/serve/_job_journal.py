"""A job's session read from the journal store: whether it exists, and the answer of one that completed."""

from __future__ import annotations

from fiskai_agent.llm import TextBlock, message_from_json
from fiskai_runstate import JournalNotFoundError, Store, fold

__all__ = ["StoreJournals"]


class StoreJournals:
    """Implements `jobs.Journals` over the worker's journal store (lock-free reads)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def exists(self, session: str) -> bool:
        try:
            return bool(await self.store.load(session))
        except JournalNotFoundError:
            return False

    async def answered(self, session: str) -> tuple[str, dict[str, int]] | None:
        """The final answer of a completed session (its last assistant prose) and its whole usage."""
        try:
            records = await self.store.load(session)
        except JournalNotFoundError:
            return None
        if not records:
            return None
        state = fold(records)
        if not state.completed:
            return None
        answer = ""
        for raw in reversed(state.messages):
            message = message_from_json(raw)
            if message.role == "assistant":
                answer = "".join(block.text for block in message.content if isinstance(block, TextBlock))
                break
        counters = state.counters
        usage = {
            "input_tokens": counters.in_tokens,
            "output_tokens": counters.out_tokens,
            "cache_read_tokens": counters.cache_read_tokens,
            "cache_create_tokens": counters.cache_create_tokens,
            "llm_calls": counters.llm_calls,
            "tool_calls": counters.tool_calls,
        }
        return answer, usage
