"""The knowledge seam: what the `knowledge_search` built-in needs of a knowledge index.

fiskai_core imports no knowledge implementation. `fiskai_rag.Store` satisfies `KnowledgeSearcher`
structurally; the composition root opens it read-only and injects it (or `None` when no index has been
built, which the tool answers with a soft `index_not_built` status instead of failing the run).

Contract: `context` is synchronous and may block on disk; the tool calls it from a worker thread.
It must be safe to call from several threads on one searcher (an MCP server serves concurrent calls).
A missing index is a status, not an exception; any exception it raises is reported to the model as an
error result naming `knowledge_search`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal, Protocol

__all__ = ["KnowledgePack", "KnowledgeSearcher"]


class KnowledgePack(Protocol):
    """A token-budgeted selection of cited excerpts with its receipt."""

    @property
    def text(self) -> str:
        """The delivered pack (items, receipt summary and trust notice), within the requested budget."""
        ...

    @property
    def citations(self) -> Sequence[str]:
        """The citation tokens (`relpath#ordinal`) the pack delivered."""
        ...

    @property
    def status(self) -> str:
        """`ok`, `index_not_built`, or why the pack is empty (`no_candidates`, `no_match`, `over_budget`)."""
        ...


class KnowledgeSearcher(Protocol):
    """A knowledge index that can build context packs."""

    def context(
        self,
        query: str,
        *,
        budget: int,
        fmt: Literal["text", "json", "jsonl"] = "text",
        exclude: Collection[str] = (),
    ) -> KnowledgePack:
        """Select the best excerpts for `query` within `budget` tokens, skipping `exclude` citations."""
        ...
