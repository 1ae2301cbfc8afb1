"""Verbose questions: weigh each query word by how bursty it is, so the topic outweighs the generic words.

A long question mixes the word it is about with generic ones: "methods for experimental production of
and known causes of hydrocephalus in animals and humans". BM25 weighs each by its rarity alone, and in
a collection of specialised text the rarities are close (MED: `hydrocephalus` idf 3.5, `known` 3.3,
`experimental` 3.1), so a chunk that mentions three generic words once each outranks one about
hydrocephalus. What tells them apart is burstiness (Church and Gale, "Poisson mixtures", 1995): a
content word comes back within the text that is about it, a generic word occurs once in passing. The
average number of uses of a word in a chunk that has it, cf/df, measures that (`hydrocephalus` 2.1,
`known` 1.1); weighting query words by it follows Kwok's query-term weighting from collection usage
statistics, average within-document frequency (SIGIR 1996).

A word seen in one or two chunks (a name, an acronym) has no evidence of burstiness either way (its
cf/df is 1 by construction), so each word's cf/df is shrunk by `PSEUDO_CHUNKS` pseudo-chunks towards
the mean cf/df of the question's words found in the index: (cf + 3 x prior) / (df + 3). A word without evidence then
counts as the question's average word. (Shrinking towards the whole collection's mean cf/df measured
about the same, CACM MRR@10 0.780 against 0.771, but reading that mean walks the whole vocabulary:
40 ms on influxdata-docs for every new connection, so every CLI search would pay it.)

No word loses weight: a word weighs max(its cf/df, the question's mean) / the question's mean, so the
words burstier than the question's average gain and the others keep their BM25 weight. Letting the
weights fall below 1 as well (normalised to a mean of 1) gained as much nDCG but cost CACM's questions
built on one rare name or acronym ("TSS", "TCOLL", "expert systems") their first hit: CACM MRR@10
0.784 -> 0.744.

Only questions of `VERBOSE_TERMS` or more distinct content words are re-weighted: in a short question
every word was chosen (`influx backup --compression`, `enable TSI index`), and re-weighting those lost
an identifier question and 0.017 nDCG on the influxdata tuning set.

Only the best `RESCORE_POOL` BM25 chunks are re-scored (re-scoring every matching chunk gave the same
figures). Each word's score is FTS5's own `bm25()` of the word alone, so with every weight 1 the sum is
the question's plain `bm25()`; the proximity features (`_proximity`) are added after, unchanged. The
words' scores are read from one walk of them all (`_word_parts`, the same floats as `bm25()`).

Measured (issue 16, nDCG@10 and MRR@10, lexical tier; influxdata tuning: nDCG, questions with an answer
in the top 5 hits / in the pack at 1500 tokens, of 44; plain BM25 CISI 0.369, CACM 0.476, MED 0.693).
Measured on main at 0f7249c; with untitled pages named (754b631) the influx tuning set reads 0.593, 31,
32 before and 0.589, 30, 32 with this step (one conversational answer at rank 5 moves to 6). The
README's "Ranking: bursty words in verbose questions" lists every variant tried.

| variant | CISI | CACM | MED | MRR CISI / CACM / MED | influx | top 5 | pack |
| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |
| before | 0.405 | 0.542 | 0.695 | 0.666 / 0.784 / 0.918 | 0.583 | 28 | 30 |
| cf/df, every question, mean 1 | 0.421 | 0.538 | 0.740 | 0.661 / 0.734 / 0.908 | 0.577 | 27 | 30 |
| cf/df shrunk to the collection's mean (1), 4+ words, mean 1 | 0.419 | 0.544 | 0.734 | 0.661 / 0.744 / 0.908 | 0.593 | 28 | 30 |
| the same (3), no word below 1 | 0.414 | 0.554 | 0.733 | 0.671 / 0.780 / 0.928 | 0.579 | 28 | 31 |
| this: shrunk to the question's mean (3), 4+ words, no word below 1 | 0.415 | 0.551 | 0.731 | 0.677 / 0.771 / 0.911 | 0.579 | 28 | 31 |
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Protocol, cast

from fiskai_rag.store._db import Conn, change_stamp

from ._postings import Postings, stems
from ._query import match_terms
from ._word_parts import word_scores

__all__ = ["PSEUDO_CHUNKS", "VERBOSE_TERMS", "reweight", "term_weights", "word_counts"]

VERBOSE_TERMS = 4
"""Distinct content words (after function words and request scaffolding are dropped) from which a
question counts as verbose, about the five or more words by which verbose queries are usually told from
keyword queries. With every question re-weighted (or from 3 words), influx tuning nDCG 0.579 -> 0.562
and an identifier question lost. nDCG@10 CISI / CACM / MED / influx from 4 words: 0.415 / 0.551 / 0.731
/ 0.579; from 5: 0.409 / 0.548 / 0.730 / 0.579; from 6: 0.407 / 0.550 / 0.730 / 0.582."""
PSEUDO_CHUNKS = 3.0
"""Pseudo-chunks at the question's mean cf/df added to each word's counts: a word's own cf/df counts once
it has been seen in a few chunks. nDCG@10 CISI / CACM / MED / influx with 1: 0.410 / 0.548 / 0.726 /
0.579 (CACM MRR 0.758); 3: 0.415 / 0.551 / 0.731 / 0.579 (0.771); 5: 0.410 / 0.550 / 0.731 / 0.579
(0.770). 3 and 5 hold every set; 1 leaves too much weight to a rare word's cf/df of 1."""

_VOCAB = "fiskai_vocab"
_TOKENIZE_DOCUMENT = 4  # apsw.FTS5_TOKENIZE_DOCUMENT: stem a word as the indexer did


class _Tokenizing(Protocol):
    def fts5_tokenizer(self, name: str, args: list[str] | None = None) -> Callable[..., list[tuple[int, int, str]]]: ...


_CACHED_WORDS = 4096
"""Words whose counts a connection keeps (cleared when full): questions share many words."""


class _Seen:
    """The word counts one connection has read, valid while the index is unchanged.

    A plain class, not a dataclass: a dataclass costs about 0.45 ms of every CLI start-up to build.
    """

    __slots__ = ("counts", "version")

    def __init__(self, version: tuple[int, int]) -> None:
        self.version = version
        """(data_version, total_changes): another connection's commit changes the first, this one's the second."""
        self.counts: dict[str, tuple[int, int]] = {}


_SEEN: weakref.WeakKeyDictionary[object, _Seen] = weakref.WeakKeyDictionary()


def _ensure_vocab(db: Conn) -> None:
    """A temporary fts5vocab table over `chunks_fts` (no storage: it reads the full-text index itself).

    A reader runs with `query_only` on; the temporary table lives in the connection's own temp schema,
    and the file stays opened read-only, so lifting `query_only` for this statement writes nothing to it.
    """
    if db.execute("SELECT 1 FROM temp.sqlite_master WHERE name = ?", (_VOCAB,)).fetchall():
        return
    query_only = int(db.execute("PRAGMA query_only").fetchall()[0][0])
    db.execute("PRAGMA query_only=0")
    try:
        db.execute(f"CREATE VIRTUAL TABLE temp.{_VOCAB} USING fts5vocab(main, chunks_fts, row)")
    finally:
        db.execute(f"PRAGMA query_only={query_only}")


def _known(db: Conn) -> dict[str, tuple[int, int]]:
    _ensure_vocab(db)
    version = change_stamp(db)
    seen = _SEEN.get(db)
    if seen is None or seen.version != version:
        seen = _SEEN[db] = _Seen(version)
    return seen.counts


def word_counts(db: Conn, terms: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Each word's (df, cf): chunks that have it and its uses in all, looked up under the indexer's stem."""
    known = _known(db)
    missing = [term for term in terms if term not in known]
    if missing:
        if len(known) + len(missing) > _CACHED_WORDS:
            known.clear()
        tokenize = cast(_Tokenizing, db).fts5_tokenizer("porter", ["unicode61"])
        for term in missing:
            tokens = tokenize(term.encode(), _TOKENIZE_DOCUMENT, None)
            sql = f"SELECT doc, cnt FROM temp.{_VOCAB} WHERE term = ?"
            rows = db.execute(sql, (tokens[0][2],)).fetchall() if tokens else []
            known[term] = (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)
    return {term: known[term] for term in terms}


def term_weights(db: Conn, terms: Sequence[str]) -> dict[str, float]:
    """Each distinct word's total weight in a query of these word uses: at least 1 per use."""
    counts = word_counts(db, list(dict.fromkeys(terms)))
    observed = [cf / df for df, cf in counts.values() if df]
    prior = sum(observed) / len(observed) if observed else 1.0
    burst = {t: (cf + PSEUDO_CHUNKS * prior) / (df + PSEUDO_CHUNKS) for t, (df, cf) in counts.items()}
    typical = sum(burst[t] for t in terms) / len(terms)
    weights: dict[str, float] = {}
    for term in terms:
        weights[term] = weights.get(term, 0.0) + max(burst[term], typical) / typical
    return weights


def reweight(
    db: Conn, match: str, ranked: Sequence[tuple[int, float]], held: Postings | None = None
) -> list[tuple[int, float]]:
    """Re-score a BM25 ranking of a verbose question with burstiness-weighted query words.

    Args:
        db: The index.
        match: The FTS5 query `ranked` came from (quoted terms joined with OR).
        ranked: Chunk ids with their `bm25()` (lower is better), as `_search.lexical` returns them.
        held: The index's postings in memory, when the store holds them (the same floats, no query).

    Returns:
        The same chunks with the weighted sum of their words' `bm25()` (lower is better), best first,
        ties to the smaller id; `ranked` unchanged for a question of fewer than `VERBOSE_TERMS` words.
    """
    terms = match_terms(match)
    if len(set(terms)) < VERBOSE_TERMS or not ranked:
        return list(ranked)
    # No weight is below a word's use count, so the weighted sum is the plain bm25() already in `ranked`
    # plus each gaining word's extra weight times its own bm25(): only the gaining words are queried.
    uses = Counter(terms)
    extra = {term: weight - uses[term] for term, weight in term_weights(db, terms).items() if weight > uses[term]}
    scores = dict(ranked)
    pool = list(scores)
    gaining = list(extra)
    held_stems = stems(db, gaining) if held is not None else None
    if held is not None and held_stems is not None:
        found: list[tuple[int, list[float]]] | None = held.parts(held_stems, pool)
    else:
        found = word_scores(db, gaining, [df for df, _ in word_counts(db, gaining).values()], pool)
    if found is not None:  # every word's bm25() from one walk (`_word_parts`): the same floats
        weights = list(extra.values())
        for rowid, parts in found:
            for weight, score in zip(weights, parts, strict=True):
                if score:
                    scores[rowid] += weight * score
        return sorted(scores.items(), key=lambda item: (item[1], item[0]))
    # `+rowid` keeps the id list out of FTS5's plan (handed to FTS5 it re-runs the query per id); SQLite
    # drops the rows outside the pool before bm25() is computed, as in `_proximity`.
    sql = f"SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? AND +rowid IN ({','.join('?' * len(pool))})"
    for term, weight in extra.items():
        for rowid, score in db.execute(sql, (f'"{term}"', *pool)):
            scores[int(rowid)] += weight * float(score)
    return sorted(scores.items(), key=lambda item: (item[1], item[0]))
