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
from typing import Literal, Protocol, runtime_checkable

__all__ = [
    "KnowledgeEnumeration",
    "KnowledgeEnumerator",
    "KnowledgeHit",
    "KnowledgeIndex",
    "KnowledgeMatch",
    "KnowledgePack",
    "KnowledgeReader",
    "KnowledgeResult",
    "KnowledgeSection",
    "KnowledgeSearcher",
]


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

    @property
    def degraded(self) -> str | None:
        """Why the index's vectors were skipped for this query (its embedder failed), if they were."""
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
        limit: int | None = None,
    ) -> KnowledgePack:
        """Select the best excerpts for `query` within `budget` tokens, skipping `exclude` citations.

        `limit` caps the excerpts (the model's `top_k`); None for as many as the budget holds.
        """
        ...


class KnowledgeHit(Protocol):
    """One ranked section, as the Go agent's `knowledge_search` returns it."""

    @property
    def citation(self) -> str:
        """`<path>#<ordinal>`."""
        ...

    @property
    def heading_path(self) -> str:
        """`Design > Backpressure`; empty before the first heading."""
        ...

    @property
    def content(self) -> str:
        """The section's text."""
        ...


class KnowledgeResult(Protocol):
    """A ranked search: hits best first, a soft status, the tier line and why the vectors were skipped."""

    @property
    def hits(self) -> Sequence[KnowledgeHit]: ...

    @property
    def status(self) -> str:
        """`ok`, `index_not_built` or `index_empty`."""
        ...

    @property
    def tier(self) -> str: ...

    @property
    def degraded(self) -> str | None: ...


@runtime_checkable
class KnowledgeIndex(KnowledgeSearcher, Protocol):
    """A searcher that also returns plain ranked hits: `harness.knowledge.result_format: json` needs it."""

    def search(self, query: str, *, top_k: int | None = None) -> KnowledgeResult:
        """The best `top_k` sections for `query`, best first."""
        ...


class KnowledgeMatch(Protocol):
    """One document a match query selected."""

    @property
    def path(self) -> str:
        """Its citation path (`docs/design.md`)."""
        ...

    @property
    def title(self) -> str: ...

    @property
    def sections(self) -> int:
        """Its sections whose body matches."""
        ...

    @property
    def first(self) -> int:
        """The ordinal of its first matching section."""
        ...

    @property
    def heading(self) -> str:
        """That section's heading breadcrumb."""
        ...


class KnowledgeEnumeration(Protocol):
    """The complete set of documents a match query selects (at most `limit` listed)."""

    @property
    def status(self) -> str:
        """`ok`, `index_not_built`, `corpus_empty` or `query_empty`."""
        ...

    @property
    def documents(self) -> Sequence[KnowledgeMatch]: ...

    @property
    def matched(self) -> int: ...

    @property
    def indexed_documents(self) -> int: ...

    @property
    def truncated(self) -> bool: ...

    @property
    def limit(self) -> int: ...

    @property
    def min_body_matches(self) -> int: ...


@runtime_checkable
class KnowledgeEnumerator(Protocol):
    """An index that can list every document a match query selects: `knowledge_enumerate` needs it."""

    def enumerate(self, query: str, *, limit: int | None = None, min_body_matches: int = 0) -> KnowledgeEnumeration:
        """Every matching document (`word`, `"phrase"`, `-word`, `body:`, `heading:`), up to `limit` listed."""
        ...


class KnowledgeSection(Protocol):
    """One indexed section (chunk) of a document."""

    @property
    def path(self) -> str:
        """The document's citation path."""
        ...

    @property
    def ordinal(self) -> int:
        """Its 0-based position in the document."""
        ...

    @property
    def heading_path(self) -> str: ...

    @property
    def content(self) -> str: ...


@runtime_checkable
class KnowledgeReader(Protocol):
    """An index that resolves a citation to its section: `knowledge_read` and `expand_to_section` need it."""

    def show(self, citation: str) -> KnowledgeSection:
        """The section `path#ordinal` names; raises when there is none."""
        ...
