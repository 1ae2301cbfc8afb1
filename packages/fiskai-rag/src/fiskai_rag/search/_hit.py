"""What a search returns: `Hit`s best first inside a `SearchResult` with a soft status, and `hydrate`.

Named `Hit` (not `Chunk`): a hit is a chunk as one search ranked it, with its score and the copies of
its section elsewhere (`also`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from fiskai_rag.errors import NOT_BUILT_TEXT
from fiskai_rag.store._db import Conn
from fiskai_rag.store._sql import ChunkRow, Columns, chunk_rows

__all__ = [
    "DEFAULT_TOP_K",
    "DEGRADED_NOTE",
    "EMPTY_NOTE",
    "MAX_TOP_K",
    "MODEL_DEGRADED",
    "MODEL_DEGRADED_NOTE",
    "Hit",
    "SearchResult",
    "Status",
    "hydrate",
]

DEFAULT_TOP_K = 5
MAX_TOP_K = 20
EMPTY_NOTE = "the knowledge index is empty or the query had no searchable terms"
DEGRADED_NOTE = "the embeddings server was unreachable, so this query used the lexical tier only"
MODEL_DEGRADED_NOTE = "the embedding model could not be loaded, so this query used the lexical tier only"
MODEL_DEGRADED = "hybrid -> DEGRADED to lexical (embedding model unavailable"
"""How the tier line of a search starts when the in-process model could not be loaded."""

Status = Literal["ok", "index_not_built", "index_empty"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result, resolvable back to its full text with `Store.show(citation)`."""

    citation: str
    """`<path>#<ordinal>` (see `Citation`): the document's citation path and the chunk's 0-based position."""
    path: str
    """The citation path: the indexed folder's name and the file's path inside it, `docs/design.md`."""
    ordinal: int
    heading_path: str
    """The heading breadcrumb, `Design > Backpressure`; empty before the first heading."""
    content: str
    """The chunk text (breadcrumb folded in)."""
    score: float
    """Higher is better: in hybrid search the RRF score (`_fusion.fuse`); in lexical search BM25 (negated,
    as FTS5's is lower for better) combined with the query's word-pair proximity (see `_proximity`)."""
    chunk_id: int
    file: str
    """Where the document is: its resolved absolute path."""
    also: tuple[str, ...] = ()
    """Citations of near-identical copies of this chunk elsewhere (see `_distinct`), at most `MAX_ALSO`."""
    also_total: int = 0
    """How many copies there are in all (`also` names the first few by path)."""

    @classmethod
    def of(cls, row: ChunkRow, score: float) -> Hit:
        """A hit for a chunk row."""
        return cls(row.citation, row.cite, row.ordinal, row.heading_path, row.content, score, row.chunk_id, row.file)


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits best first, with a soft status instead of an exception for a missing or empty index."""

    hits: list[Hit]
    status: Status
    tier: str
    """`lexical (FTS5) - ...`, `hybrid (FTS5 + vectors, RRF) - ...`, or `hybrid -> DEGRADED ...`."""
    degraded: str | None = None
    """Why the vector tier was skipped for this query (the embeddings server failed), if it was."""

    @property
    def note(self) -> str | None:
        """One sentence for a model or an operator explaining a non-ok status or a degraded search."""
        if self.status == "index_not_built":
            return NOT_BUILT_TEXT
        if self.status == "index_empty":
            return EMPTY_NOTE
        if not self.degraded:
            return None
        return MODEL_DEGRADED_NOTE if self.tier.startswith(MODEL_DEGRADED) else DEGRADED_NOTE


def hydrate(db: Conn, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
    """Load the chunks of a ranking in one query, keeping its order and skipping vanished rows."""
    rows = chunk_rows(db, Columns.of(db), [chunk_id for chunk_id, _ in ranked])
    return [Hit.of(rows[chunk_id], score) for chunk_id, score in ranked if chunk_id in rows]
