"""The fiskai_rag exception tree.

A missing index is not an error on the search path (search returns the soft `index_not_built` status);
everything below is a failure the caller must act on, and every message names the fix.

    RagError
    +-- IndexNotBuiltError        `show` or `remove` on a store that has no index file yet
    +-- IndexLockedError          another process holds the single-writer lock (`.pid` names it)
    +-- StoreCorruptError         the index file is not a usable SQLite database
    +-- ManifestMismatchError     the index was built with another embedding model, dimension or format
    +-- CitationError             a citation is malformed or no longer resolves to a chunk
    +-- VectorExtensionError      the vector tier needs sqlite-vec, which is not installed or will not load
    +-- EmbedderError             the embeddings server failed, answered badly, or timed out
    |   +-- EmbeddingDimensionError   the model now emits vectors of another dimension than the index
    +-- QueryWindowError          a context query's date window is contradictory
    +-- PackBudgetError           a context budget below the smallest honest pack (`.minimum_budget`)
    +-- ReceiptNotFoundError      `since_receipt` names no saved receipt of this store and query
"""

from __future__ import annotations

__all__ = [
    "CitationError",
    "EmbedderError",
    "EmbeddingDimensionError",
    "IndexLockedError",
    "IndexNotBuiltError",
    "ManifestMismatchError",
    "PackBudgetError",
    "QueryWindowError",
    "RagError",
    "ReceiptNotFoundError",
    "StoreCorruptError",
    "VectorExtensionError",
]


class RagError(Exception):
    """Base of every error fiskai_rag raises on purpose."""


class IndexNotBuiltError(RagError):
    """The store has no index file yet; the message says how to build one."""


class IndexLockedError(RagError):
    """Another process is writing the index; only one writer may run at a time."""

    def __init__(self, message: str, *, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid
        """The process id recorded in the lock file, when it could be read."""


class StoreCorruptError(RagError):
    """The index file exists but SQLite cannot use it; the message names the reset command."""


class ManifestMismatchError(RagError):
    """The index was built with another embedding configuration or a newer format."""


class CitationError(RagError):
    """A citation token is malformed or resolves to no chunk."""


class VectorExtensionError(RagError):
    """sqlite-vec is missing or cannot be loaded into SQLite."""


class EmbedderError(RagError):
    """The embeddings server could not produce usable vectors."""


class EmbeddingDimensionError(EmbedderError):
    """The embeddings model emits a different dimension from the one the index was built at."""


class QueryWindowError(RagError):
    """A context query's date window is contradictory: two temporal expressions, or one with --since/--until."""


class PackBudgetError(RagError):
    """Even the smallest honest context pack does not fit the budget; `.minimum_budget` is the one to retry with."""

    def __init__(self, message: str, *, minimum_budget: int) -> None:
        super().__init__(message)
        self.minimum_budget = minimum_budget
        """The smallest budget at which this request delivers its receipt and trust notice."""


class ReceiptNotFoundError(RagError):
    """`since_receipt` names no saved receipt for this store (never saved, evicted, or for another query)."""
