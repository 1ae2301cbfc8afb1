"""Term proximity: re-score the best BM25 chunks by how closely they keep the query's adjacent words.

A bag-of-words BM25 ranks a chunk that mentions "sparse" in one paragraph and "matrices" in another
as high as one about sparse matrices. This is the sequential dependence model (Metzler and Croft, "A
Markov random field model for term dependencies", SIGIR 2005) with BM25 as each feature's scorer: a
chunk's score is

    0.85 * BM25(query words) + 0.10 * BM25(adjacent query word pairs as phrases)
                             + 0.05 * BM25(adjacent query word pairs within a window of 8 words)

The weights and the window are the model's published defaults, not fitted here. All three features are
FTS5's own `bm25()`: the pair phrase `"a b"` gets the phrase's own document frequency, and
`NEAR("a" "b", 6)` (at most 6 words between them, so both within 8) counts only the occurrences that
keep the window. FTS5 scores a NEAR group as its two words, each with its own idf, so the window feature
is halved to count a pair once (the mean of its two words).

Cost: the pair queries walk the pairs' posting lists over the whole table whatever the pool (an `IN`
list of candidate ids handed to FTS5 makes it re-run the query per id, measured 100x slower), and
`bm25()` walks each phrase once more for its document frequency: about 2.3 ms of CPU of a question's
8.3 on influxdata-docs, where the BM25 query itself takes 5.3 (it scores every matching chunk, 11k for
a median question). Since they need no pool, a large store with a core to spare runs them for the
whole table on a second connection while its own runs the BM25 query (`PairSide`); otherwise they run
on the pool after it, where SQLite drops the other rows before `bm25()` reads their sizes. Either way
a chunk's scores are the same, since bm25's statistics are the whole table's.

Looked at for less CPU with the same scores (influxdata-docs questions): one FTS5 query for the
phrases and windows together walks as long as the two (1.23 against 0.54 + 0.65 ms); dropping the
pairs no pooled chunk holds would drop none of the bench's (112 of 112 pairs have a pooled chunk;
CISI 161 of 227). The BM25 query itself got cheaper instead (`_topk`). Later (issue 16, fourth
session): on a pool, the window feature is read from one walk with each word's count from the
vocabulary (`_word_parts.window_scores`, the same floats), since its idf walks are the words' own;
the phrases' counts are not in the vocabulary, so the ordered feature keeps `bm25()`. Pooled pair
queries of the bench's questions, generated 103k chunks: 6.8 -> 4.9 ms.

Measured (issue 16, nDCG@10 on the same stores; influxdata tuning: nDCG, answer in the top 5 hits):

| variant | CISI | CACM | MED | influx nDCG | influx top 5 (conv/ident/kw/para) |
| --- | ---: | ---: | ---: | ---: | --- |
| BM25 alone (before) | 0.398 | 0.507 | 0.686 | 0.553 | 25/44 (4/9/8/4) |
| this (window feature counted once per pair) | 0.405 | 0.522 | 0.686 | 0.578 | 25/44 (5/8/9/3) |
| window feature as FTS5 scores it (twice) | 0.403 | 0.524 | 0.686 | 0.574 | 24/44 (5/8/9/2) |
| ordered pairs only (0.9 / 0.1) | 0.404 | 0.521 | 0.685 | 0.572 | 24/44 (5/8/8/3) |

On main with the query, pack and chunking work merged: CISI 0.397 -> 0.404, CACM 0.527 -> 0.542, MED
0.684 -> 0.686, influx nDCG 0.555 -> 0.579, top 5 26/44 -> 26/44 (identifier -1, keyword +1), packs
at 1500 tokens unchanged. The README's "Ranking: term proximity" lists the changes tried and not kept.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from fiskai_rag.store._db import Conn, open_reader
from fiskai_rag.store._worker import Worker, spare_core

from ._burstiness import word_counts
from ._query import match_terms
from ._word_parts import window_scores

__all__ = [
    "ORDERED_WEIGHT",
    "RESCORE_POOL",
    "UNIGRAM_WEIGHT",
    "WINDOW",
    "WINDOW_WEIGHT",
    "WORKER_MIN_CHUNKS",
    "WORKER_PAIRS",
    "PairScores",
    "PairSide",
    "pair_queries",
    "pair_scores",
    "proximity",
    "term_pairs",
]

UNIGRAM_WEIGHT = 0.85
ORDERED_WEIGHT = 0.10
WINDOW_WEIGHT = 0.05
WINDOW = 8
"""The unordered window, in words, as the model's `#uw8`."""
WORKER_PAIRS = 2
"""A query with this many adjacent word pairs or more runs its pair queries in the pair worker (`PairSide`)."""
WORKER_MIN_CHUNKS = 20_000
"""A store of fewer chunks (by its largest chunk id) runs the pair queries on the pool, after the BM25 query.

In-process search of whole questions, interleaved with the same code running them on the pool
(2-core machine, load 1.5-1.9 from other jobs): influxdata-docs (38.6k chunks) 9.18 -> 8.66 ms; the
generated 1k-file corpus (10k chunks) 3.12 -> 3.06 ms; CISI (1.7k) 2.50 -> 2.82 ms; MED 1.93 -> 2.00
ms. The BM25 query of a small store is too short to hide the pair queries behind, and the handover
and the two threads' competition for the cores cost more than the overlap saves."""
RESCORE_POOL = 100
"""How many of the best BM25 chunks are re-scored. In the experiment harness, re-scoring every matching
chunk gave the same nDCG@10 and top 5 answer figures as re-scoring the best 100, on all four sets."""


def term_pairs(match: str) -> list[tuple[str, str]]:
    """The distinct pairs of adjacent terms in an FTS5 query of quoted terms, in query order.

    The query is `fts_query`'s output (`"a" OR "b" OR "c"`); words it dropped (function words) do not
    break a pair, so "size of the cache" pairs `size` with `cache`, which the window feature matches.
    """
    terms = match_terms(match)
    pairs: list[tuple[str, str]] = []
    for pair in zip(terms, terms[1:], strict=False):
        if pair[0] != pair[1] and pair not in pairs:
            pairs.append(pair)
    return pairs


class PairScores(NamedTuple):
    """The two pair features of the chunks the pair queries match, each `-bm25()` (higher is better).

    A named tuple, not a dataclass: built at import, a dataclass costs 0.5 ms of every CLI start-up.
    """

    ordered: dict[int, float]
    """Adjacent query word pairs as phrases."""
    window: dict[int, float]
    """The same pairs within the window (FTS5 counts each NEAR group's two words: halved when combined)."""


def pair_queries(pairs: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The phrase and window FTS5 queries of `term_pairs`."""
    return (
        " OR ".join(f'"{a} {b}"' for a, b in pairs),
        " OR ".join(f'NEAR("{a}" "{b}", {WINDOW - 2})' for a, b in pairs),
    )


def pair_scores(db: Conn, queries: tuple[str, str], pool: Sequence[int] | None = None) -> PairScores:
    """Both pair features, for the chunks of `pool` or (None) for every chunk the pair queries match.

    A chunk's scores are the same either way: bm25's statistics are the whole table's. Search runs
    the whole-table form on a second connection while its own connection runs the BM25 query, so the
    pair queries, which need no pool, cost no time after it (see `Store.search`).
    """
    window = _window(db, queries[1], pool) if pool is not None else None
    return PairScores(_feature(db, queries[0], pool), window if window is not None else _feature(db, queries[1], pool))


def _window(db: Conn, query: str, pool: Sequence[int]) -> dict[int, float] | None:
    # The window query's idf walk is its words' own, whose counts the vocabulary holds: one walk of the
    # query then gives the same floats (`_word_parts`). Pooled questions on the generated 103k-chunk
    # store: 3.5 -> 1.8 ms (influxdata-docs 1.2 -> 0.7). None when a word is not one index term.
    words = match_terms(query)
    counts = word_counts(db, list(dict.fromkeys(words)))
    return window_scores(db, query, words, [counts[word][0] for word in words], pool)


def _feature(db: Conn, query: str, pool: Sequence[int] | None) -> dict[int, float]:
    if pool is None:
        sql = "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?"
        return {int(rowid): -float(score) for rowid, score in db.execute(sql, (query,))}
    # `+rowid` keeps the IN list out of FTS5's plan (a constraint it is handed re-runs the query per id,
    # measured 100x slower): FTS5 still walks every match once, but SQLite drops the rows outside the
    # pool before `bm25()` reads their sizes. The scores are the same (bm25's statistics are the whole
    # table's); the pair queries of a question on influxdata-docs 2.7 -> 2.1 ms each.
    if not pool:
        return {}
    marks = ",".join("?" * len(pool))
    sql = f"SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? AND +rowid IN ({marks})"
    return {int(rowid): -float(score) for rowid, score in db.execute(sql, (query, *pool))}


def proximity(
    db: Conn, match: str, ranked: Sequence[tuple[int, float]], scores: PairScores | None = None
) -> list[tuple[int, float]]:
    """Re-score a BM25 ranking with the query's word pairs.

    Args:
        db: The index.
        match: The FTS5 query `ranked` came from (quoted terms joined with OR).
        ranked: Chunk ids with their `bm25()` (lower is better), as `lexical` returns them.
        scores: `pair_scores` of `match`'s `pair_queries` already read (for the whole table or a pool
            holding `ranked`); without them the pair queries run here, on `ranked`'s chunks only.

    Returns:
        Chunk ids with their combined score (higher is better), best first; ties go to the smaller id.
        A one-word query keeps the BM25 order, its scores negated.
    """
    if scores is None:
        pairs = term_pairs(match)
        if not pairs:
            return [(chunk_id, -score) for chunk_id, score in ranked]
        scores = pair_scores(db, pair_queries(pairs), [chunk_id for chunk_id, _ in ranked])
    ordered, window = scores.ordered, scores.window
    scored = [
        (
            chunk_id,
            -UNIGRAM_WEIGHT * score
            + ORDERED_WEIGHT * ordered.get(chunk_id, 0.0)
            + WINDOW_WEIGHT / 2 * window.get(chunk_id, 0.0),
        )
        for chunk_id, score in ranked
    ]
    return sorted(scored, key=lambda item: (-item[1], item[0]))


class PairSide:
    """The pair queries of a search over the whole table, on a second connection in a worker thread.

    They need no pool (see `pair_scores`), so they run while the search's own connection runs the BM25
    query: apsw releases the GIL inside SQLite. They stay on the pool (`start` returns None) for a
    single pair (on a loaded machine waking the worker costs a two-word query more than its pair
    queries do), for a small store (`WORKER_MIN_CHUNKS`) and when no core is spare (`spare_core`): over
    the whole table they cost about 1.2 ms more CPU than on the pool, which only a second core hides.

    A writer may commit between this connection's snapshot and the search's: a chunk it removed is
    skipped when the hits are read, and a chunk it added has no pair score in that one search.
    """

    def __init__(self, db_path: Path) -> None:
        self._db_path = db_path
        self._db: Conn | None = None
        self.worker: Worker[PairScores | None] | None = None
        """The worker thread, once a search has used it."""

    def start(self, match: str, size: int) -> Worker[PairScores | None] | None:
        """Start the pair queries of `match`; None when they are better run on the pool afterwards.

        `size` is the store's largest chunk id (about its number of chunks; see `WORKER_MIN_CHUNKS`).

        The worker's result is None when the store has no second connection to give (its file was just
        replaced by an empty one): the pair queries then run on the pool too.
        """
        pairs = term_pairs(match)
        if size < WORKER_MIN_CHUNKS or len(pairs) < WORKER_PAIRS or not spare_core():
            return None
        worker = self.worker
        if worker is None:
            worker = self.worker = Worker(name="fiskai-rag-pairs")
        worker.submit(functools.partial(self._scores, pair_queries(pairs)))
        return worker

    def _scores(self, queries: tuple[str, str]) -> PairScores | None:
        if self._db is None:
            self._db = open_reader(self._db_path)
            if self._db is None:
                return None
        db = self._db
        with db:  # one snapshot for both queries
            return pair_scores(db, queries)

    def close(self) -> None:
        """End the worker thread and close the connection; the next `start` opens them again."""
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop()
        db, self._db = self._db, None
        if db is not None:
            db.close()
