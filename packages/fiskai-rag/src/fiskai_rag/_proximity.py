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
is halved to count a pair once (the mean of its two words). The two pair queries run over the whole
table (an `IN` list of candidate ids makes FTS5 re-run the query per id, measured 100x slower) and their
scores are read for the candidates only.

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

import re
from collections.abc import Sequence

from ._db import Conn

__all__ = ["ORDERED_WEIGHT", "RESCORE_POOL", "UNIGRAM_WEIGHT", "WINDOW", "WINDOW_WEIGHT", "proximity", "term_pairs"]

UNIGRAM_WEIGHT = 0.85
ORDERED_WEIGHT = 0.10
WINDOW_WEIGHT = 0.05
WINDOW = 8
"""The unordered window, in words, as the model's `#uw8`."""
RESCORE_POOL = 100
"""How many of the best BM25 chunks are re-scored. In the experiment harness, re-scoring every matching
chunk gave the same nDCG@10 and top 5 answer figures as re-scoring the best 100, on all four sets."""

_QUOTED = re.compile(r'"([^"]+)"')


def term_pairs(match: str) -> list[tuple[str, str]]:
    """The distinct pairs of adjacent terms in an FTS5 query of quoted terms, in query order.

    The query is `fts_query`'s output (`"a" OR "b" OR "c"`); words it dropped (function words) do not
    break a pair, so "size of the cache" pairs `size` with `cache`, which the window feature matches.
    """
    terms = _QUOTED.findall(match)
    pairs: list[tuple[str, str]] = []
    for pair in zip(terms, terms[1:], strict=False):
        if pair[0] != pair[1] and pair not in pairs:
            pairs.append(pair)
    return pairs


def _feature(db: Conn, query: str, pool: set[int]) -> dict[int, float]:
    return {
        int(rowid): -float(score)
        for rowid, score in db.execute(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?", (query,)
        )
        if int(rowid) in pool
    }


def proximity(db: Conn, match: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Re-score a BM25 ranking with the query's word pairs.

    Args:
        db: The index.
        match: The FTS5 query `ranked` came from (quoted terms joined with OR).
        ranked: Chunk ids with their `bm25()` (lower is better), as `lexical` returns them.

    Returns:
        Chunk ids with their combined score (higher is better), best first; ties go to the smaller id.
        A one-word query keeps the BM25 order, its scores negated.
    """
    pairs = term_pairs(match)
    if not pairs:
        return [(chunk_id, -score) for chunk_id, score in ranked]
    pool = {chunk_id for chunk_id, _ in ranked}
    ordered = _feature(db, " OR ".join(f'"{a} {b}"' for a, b in pairs), pool)
    window = _feature(db, " OR ".join(f'NEAR("{a}" "{b}", {WINDOW - 2})' for a, b in pairs), pool)
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
