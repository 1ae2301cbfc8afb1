"""Search: FTS5 BM25 always, vec0 KNN when the vector tier is on, fused by Reciprocal Rank Fusion.

RRF fuses by rank, so the incomparable scales of BM25 and vector distance never need normalising
against each other. User text never reaches FTS5 as syntax: it is cut into letter/digit terms and each
term is quoted, so quotes, `NEAR`, `column:` filters and operators are plain words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ._db import Conn
from ._sql import ChunkRow, Columns, chunk_rows

__all__ = [
    "MAX_HITS_PER_DOCUMENT",
    "MAX_TOP_K",
    "PACK_NEIGHBOURS",
    "RRF_K",
    "STATIC_VECTOR_WEIGHT",
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
STATIC_VECTOR_WEIGHT = 0.1
"""RRF weight of the vector list when the vectors come from an in-process static model (the lexical list
weighs 1). The nearest chunk then adds 0.1/61, about the gap between lexical ranks 1 and 8, so the vectors
break near-ties of the lexical ranking and lift a chunk a few places, but never override it: a static
model alone ranks far below BM25 (nDCG@10 on CISI/CACM/MED, vector list alone: 0.247/0.301/0.466 for a
model distilled here from multilingual-e5-small, 0.188/0.146/0.327 for the toy tokenlearn model, against
lexical 0.398/0.507/0.686). Measured (issue 16), hybrid nDCG@10 CISI/CACM/MED by weight:
distilled e5: 1.0 -> 0.351/0.451/0.635, 0.5 -> 0.373/0.473/0.648, 0.2 -> 0.402/0.522/0.685,
0.15 -> 0.407/0.522/0.687, 0.1 -> 0.408/0.515/0.688, 0.05 -> 0.403/0.517/0.687;
toy tokenlearn: 1.0 -> 0.303/0.383/0.585, 0.15 -> 0.387/0.510/0.691, 0.1 -> 0.394/0.516/0.696,
0.05 -> 0.395/0.512/0.695. 0.1 is the largest weight at which neither model loses more than noise
(0.005) on any collection."""
PACK_NEIGHBOURS = 20
"""How many nearest chunks by vector a context pack considers beside its lexical candidates."""
_MAX_TERMS = 40
_TERM = re.compile(r"[^\W_]+")

# Function words carry almost no BM25 weight but make FTS5 walk long posting lists; dropping them when
# the query has other terms keeps whole-question search fast and its ranking cleaner.
_STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her
    here hers him his how i if in into is it its itself just me more most my no nor not of off on once only or
    other our out over own same she should so some such than that the their theirs them then there these they
    this those through to too under until up very was we were what when where which while who whom why will
    with would you your yours""".split()
)


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
    """Higher is better: the RRF score in hybrid search, negated BM25 in lexical search."""
    chunk_id: int
    file: str
    """Where the document is: its resolved absolute path."""

    @classmethod
    def of(cls, row: ChunkRow, score: float) -> Hit:
        """A hit for a chunk row."""
        return cls(row.citation, row.cite, row.ordinal, row.heading_path, row.content, score, row.chunk_id, row.file)


def fts_query(text: str) -> str:
    """Turn free text into a safe FTS5 query: quoted terms of 2+ characters joined with OR.

    Function words are dropped when other terms remain. A repeated word is kept once per use: FTS5's
    bm25() sums over the query's phrases, so repetition weights the words a question dwells on (on the
    CISI collection this lifts nDCG@10 from 0.355 with de-duplicated terms to 0.398).

    Returns:
        The query, or `""` when the text has no searchable term.
    """
    terms = [term.lower() for term in _TERM.findall(text) if len(term) >= 2]
    content = [term for term in terms if term not in _STOPWORDS]
    return " OR ".join(f'"{term}"' for term in (content or terms)[:_MAX_TERMS])


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


def rrf(*rankings: Sequence[int], weights: Sequence[float] = ()) -> list[tuple[int, float]]:
    """Reciprocal Rank Fusion: list i adds `weights[i] / (RRF_K + rank + 1)`; ties go to the smaller id.

    A list without a weight counts 1.
    """
    scores: dict[int, float] = {}
    for index, ranking in enumerate(rankings):
        weight = weights[index] if index < len(weights) else 1.0
        for rank, chunk_id in enumerate(ranking):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (RRF_K + rank + 1)
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
