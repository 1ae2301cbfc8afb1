"""Search: FTS5 BM25 always, vec0 KNN when the vector tier is on, fused by Reciprocal Rank Fusion.

RRF fuses by rank, so the incomparable scales of BM25 and vector distance never need normalising
against each other. The FTS5 query is built from the user's text by `_query.fts_query` (re-exported
here), which never lets user text reach FTS5 as syntax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._db import Conn
from ._query import fts_query
from ._sql import ChunkRow, Columns, chunk_rows

__all__ = [
    "MAX_HITS_PER_DOCUMENT",
    "MAX_TOP_K",
    "RRF_K",
    "SEARCH_FANOUT",
    "Hit",
    "fts_query",
    "hydrate",
    "lexical",
    "per_document",
    "rrf",
    "vector",
]

RRF_K = 60
SEARCH_FANOUT = 50
MAX_HITS_PER_DOCUMENT = 2
"""A document contributes at most this many hits, so one long page cannot fill the top five. Measured
(issue 16): influxdata tuning questions with an answer in the top 5 hits 23 -> 25 of 44 (identifier and
keyword +1 each), held-out 22 -> 23; CISI, CACM and MED nDCG@10 unchanged. A cap of 1 lost identifier
questions on the tuning half (0.73 -> 0.55) while gaining conversational ones (0.36 -> 0.45)."""
MAX_TOP_K = 20


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
    """Higher is better: the RRF score in hybrid search; in lexical search BM25 (negated, as FTS5's is lower
    for better) combined with the query's word-pair proximity (see `_proximity`)."""
    chunk_id: int
    file: str
    """Where the document is: its resolved absolute path."""

    @classmethod
    def of(cls, row: ChunkRow, score: float) -> Hit:
        """A hit for a chunk row."""
        return cls(row.citation, row.cite, row.ordinal, row.heading_path, row.content, score, row.chunk_id, row.file)


def lexical(db: Conn, query: str, limit: int = SEARCH_FANOUT) -> list[tuple[int, float]]:
    """Chunk ids and BM25 scores (lower is better) for an FTS5 query, best first."""
    return [
        (int(rowid), float(score))
        for rowid, score in db.execute(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?",
            (query, limit),
        )
    ]


def vector(db: Conn, blob: bytes, limit: int = SEARCH_FANOUT) -> list[tuple[int, float]]:
    """Chunk ids and distances (lower is better) of the nearest vectors, nearest first."""
    return [
        (int(chunk_id), float(distance))
        for chunk_id, distance in db.execute(
            "SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (blob, limit),
        )
    ]


def rrf(*rankings: Sequence[int]) -> list[tuple[int, float]]:
    """Reciprocal Rank Fusion: each list adds `1 / (RRF_K + rank + 1)`; ties go to the smaller id."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def per_document(
    db: Conn, ranked: Sequence[tuple[int, float]], cap: int = MAX_HITS_PER_DOCUMENT
) -> list[tuple[int, float]]:
    """`ranked` with each document's chunks after its first `cap` dropped (order kept)."""
    if not ranked:
        return []
    ids = [chunk_id for chunk_id, _ in ranked]
    marks = ",".join("?" * len(ids))
    owner = {int(c): int(d) for c, d in db.execute(f"SELECT id, document_id FROM chunks WHERE id IN ({marks})", ids)}
    taken: dict[int, int] = {}
    kept: list[tuple[int, float]] = []
    for chunk_id, score in ranked:
        document = owner.get(chunk_id)
        if document is None:
            continue  # removed by a writer since the ranking was read; hydrate would skip it too
        if taken.get(document, 0) < cap:
            taken[document] = taken.get(document, 0) + 1
            kept.append((chunk_id, score))
    return kept


def hydrate(db: Conn, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
    """Load the chunks of a ranking in one query, keeping its order and skipping vanished rows."""
    rows = chunk_rows(db, Columns.of(db), [chunk_id for chunk_id, _ in ranked])
    return [Hit.of(rows[chunk_id], score) for chunk_id, score in ranked if chunk_id in rows]
