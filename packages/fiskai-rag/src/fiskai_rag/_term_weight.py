"""Query words weighted by how often the corpus names them in a heading: topic words over asking words.

BM25 weighs a query word by its rarity alone. In a question written in the asker's words that favours
the wrong ones: `put`, `kept`, `finds`, `able` are rare in documentation (it says `specifies`, `stores`)
and outrank the words that name the topic (`plugins`, `chronograf`, `retention`). The corpus says which
words name topics: the ones its authors put in headings. Each word's weight is

    HEADING_BASE + (chunks with the word in their heading breadcrumb) / (chunks with the word)

(0.5 to 1.5), computed from the index at query time, so it follows the operator's own documents and
needs no word list. The best `RESCORE_POOL` BM25 chunks are re-scored as the weighted sum of each word's
own `bm25()` (FTS5's score of an OR query is the sum of its words' scores, so weights of 1 give the
same ranking); term proximity (`_proximity`) then works on this score.

Measured (issue 16, lexical tier, with `_page_name`; nDCG@10 CISI / CACM / MED / influxdata tuning;
tuning answer in the top 5 hits of 44, keyword / identifier / paraphrase / conversational; pack @1500):

| weight | CISI | CACM | MED | tuning | top 5 | pack |
| --- | ---: | ---: | ---: | ---: | --- | ---: |
| none (1) | 0.405 | 0.542 | 0.695 | 0.587 | 30 (8/11/5/6) | 32 |
| **0.5 + share (kept)** | 0.405 | 0.545 | 0.697 | 0.611 | 30 (8/11/5/6) | 34 |
| 1 + share | 0.406 | 0.542 | 0.695 | 0.604 | 30 (9/11/4/6) | 32 |
| 0.25 + share | 0.390 | 0.545 | 0.693 | 0.633 | 29 (8/11/5/5) | 33 |
| 0.1 + share | 0.384 | 0.531 | 0.681 | 0.626 | 28 (8/11/4/5) | 29 |
| 0.5 + sqrt(share) | 0.403 | 0.528 | 0.697 | 0.608 | 30 (9/11/4/6) | 32 |
| min(1, 0.5 + share): only lowers | 0.401 | 0.547 | 0.697 | 0.609 | 29 (8/11/4/6) | 33 |

(The rows other than the kept one were measured with the parent folder in the page name, whose own
figures were 31 (9/11/5/6) and nDCG 0.593 unweighted.) 0.5 is the largest floor at which no collection
loses; a smaller one trades CISI, where titles are the only headings, for the influx questions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ._db import Conn

__all__ = ["HEADING_BASE", "heading_weighted", "term_weights"]

HEADING_BASE = 0.5
"""A word never seen in a heading keeps this weight; one always in headings gets 1.5."""

_QUOTED = re.compile(r'"([^"]+)"')


def term_weights(db: Conn, terms: Sequence[str]) -> dict[str, float]:
    """Each distinct term's weight: `HEADING_BASE` plus the share of its chunks naming it in a heading.

    A term in no chunk weighs 1 (it scores nothing either way).
    """
    weights: dict[str, float] = {}
    count = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
    for term in dict.fromkeys(terms):
        anywhere = int(db.execute(count, (f'"{term}"',)).fetchall()[0][0])
        if not anywhere:
            weights[term] = 1.0
            continue
        in_heading = int(db.execute(count, (f'heading_path : "{term}"',)).fetchall()[0][0])
        weights[term] = HEADING_BASE + in_heading / anywhere
    return weights


def heading_weighted(db: Conn, match: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Re-score a BM25 ranking with each query word's `bm25()` times its heading weight.

    Args:
        db: The index.
        match: The FTS5 query `ranked` came from (quoted terms joined with OR, see `fts_query`).
        ranked: Chunk ids with their `bm25()` (lower is better), as `lexical` returns them.

    Returns:
        The same chunks with weighted scores, lower still better, best first (ties: the smaller id). A
        query of one distinct word keeps its ranking: one weight scales every score alike.
    """
    uses = Counter(_QUOTED.findall(match))
    if len(uses) < 2 or not ranked:
        return list(ranked)
    weights = term_weights(db, list(uses))
    pool = [chunk_id for chunk_id, _ in ranked]
    # `+rowid` keeps the IN list out of FTS5's plan, as in `_proximity._feature`: each word's posting
    # list is walked once and only the pool's rows are scored, with the whole table's statistics.
    marks = ",".join("?" * len(pool))
    sql = f"SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? AND +rowid IN ({marks})"
    scores = dict.fromkeys(pool, 0.0)
    for term, times in uses.items():
        factor = times * weights[term]
        for rowid, score in db.execute(sql, (f'"{term}"', *pool)):
            scores[int(rowid)] += factor * float(score)
    return sorted(scores.items(), key=lambda item: (item[1], item[0]))
