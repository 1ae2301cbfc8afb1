"""The best chunks of a BM25 query without scoring the chunks that cannot be among them: the same rows.

FTS5 computes `bm25()` for every chunk a query matches before SQLite keeps the best: 11k chunks for a
median question on influxdata-docs, where walking the posting lists takes 0.7 ms and scoring 4.6 ms.
Most of those chunks hold one common word of the query and nothing else of it. BM25 gives a word at
most `idf * (k1 + 1)` per use in the query, however often a chunk repeats it (`tf (k1 + 1) / (tf +
K)`, K > 0), so a chunk holding only a word whose bound is below the 100th best score cannot be among
the best 100. So the query runs over the chunks that hold a rarer word or two of the common ones
(FTS5 finds them in one walk), `bm25()` scores those with the whole query, exactly as before, and the
result is kept only when its last score beats every left-out word's bound; otherwise the smaller set
of common words the last score allows is tried once, then the whole query. Ties keep their order:
with a `LIMIT`, SQLite sorts equal scores in scan order, and every row left out scores below the last.

A word is common when at least `COMMON_SHARE` of the chunks hold it (at most `MAX_COMMON` words, the
most frequent). Its document frequency comes from the `fts5vocab` table `_burstiness` reads (and
caches per connection), under its stem by the index's own tokenizer; only an index tokenized `porter
unicode61` is pruned, so a stem names the index's term, and only a word that is one term.

Measured on influxdata-docs (bench queries, in-process, interleaved query by query with main at
f1b52c8, which has burstiness but not this, load 1.4): whole searches 2.54 -> 1.98 ms for keyword
pairs, 9.47 -> 8.18 ms for questions; before the merge, against 0f7249c, 2.46 -> 2.10 and 8.88 -> 8.06.
The BM25 query alone, summed over the 20 questions, 111 -> 104 ms, over the 20 keyword pairs 35.5 ->
25.3 ms. Smaller stores keep the plain query (`PRUNE_MIN_CHUNKS`): pruned, CISI questions took 2.84 ->
3.26 ms and the generated 1k-file corpus's (10k chunks) 3.64 -> 3.97 ms: the lookups and the second
walk cost more than the scoring they save, and the bound holds less often. Checked against the plain
query on CISI, CACM, MED, influxdata-docs and the generated corpus, every query at limits 100, 20 and
5: 726 pruned results, all equal.

A question of many words over a large store leaves most chunks in that set: at 103k chunks (bench
corpus of 10k generated files) the common words are many and the rarer ones are not rare, so a median
question scored 14k chunks of the 45k it matches and the query took 15.5 ms (plain: 19). Where the
time went (p50): walking the query 2.4 ms, the idf walk inside `bm25()` 1.8, the set's own walk 2.4,
testing each matched chunk against the set 3.6, scoring 5. The 100th best score was 8 to 15 while the
words' bounds were 2 to 21: a chunk must hold several words to reach it, and only 1.2k to 6.3k chunks
can. `seeded_top` finds a floor for it first: the rarest words' own `bm25()` (a part of every chunk's
score) over the chunks that hold them, a few hundred, is a lower bound of the 100th best whole score;
then only the chunks whose words' bounds add up to that floor are scored, a set FTS5 finds with one
query of ORs of ANDs (`_reaching`). A median question then scored 6.6k chunks and its BM25 query took
about 12.5 ms, the seed query 0.8 of it. Checked against the plain query the same way: every seeded
result equal (generated 60, influxdata-docs 60, CISI 35, CACM 37, MED 25 results at limits 100, 20
and 5, the gate lifted); `tests/test_search_topk.py` pins it on influxdata-docs, for the query and for
whole searches.

Tried, not kept: a higher floor from more of the question's words (generated 103k chunks, 20 bench
questions, limit 100). Any words' `bm25()` of real chunks is a valid floor, so the seed's chunks were
scored by the whole question (`(seed words) AND (other words)`, 390 rows at the median): the floor
rose from 0.80 to 0.98 of the 100th best score (medians), the scored set from 6.6k to 3.7k chunks, but that
query cost 2.3 ms (0.8 without `bm25()`: the rest is its idf walk over the common words' postings) for
1.6 ms saved, as the higher floor's threshold query has more word uses to walk; whole searches,
interleaved with main (5 rounds, load 0.8), p50 18.50 -> 18.91 ms. Scoring them by the seed and only
the rarer other words (up to 0.4 postings per chunk) in place of the seed query: the BM25 query's p50
14.3 -> 13.0 ms (9 rounds, load 1.6), yet 10 of the 20 questions were 0.3 to 1.5 ms slower and two 4
and 9 ms faster, so whole searches' p50 went 22.7 -> 23.1 ms (influxdata-docs 7.74 -> 7.80). Run only
when the seed's floor leaves a tenth of the store surely in the set (words whose bound alone reaches
it), it changed one question of 20 (40.6 -> 30.2 ms), the p50 not at all. Scoring only the seed's best
100 chunks, by a Python FTS5 function given the idf (no idf walk), cost 4 ms and did not raise the
floor: the chunks that gain are further down the seed, holding the other words.

Also tried: MATCHing one expression that uses each word once, in the question's order (`"a" OR ("b"
AND "c") OR ...`, covering the chunks that reach the floor), in place of the whole query and the `IN`
test: summed over the 20 questions 241 -> 226 ms though it matched 2 to 4 times the chunks, the test
of each matched chunk being the dearer part. But its scores differ: `bm25()` counts a word only where
its node stands on the row, and an AND inside an OR skips a held word whose partner is missing. Only an
AND of ORs keeps every score, and that covers the chunks that reach the floor only when the words'
bounds add up to less than twice it, which the questions' words never did.
The same restriction as a join on the materialized set (SQLite probes it through a Bloom filter), all
20 results equal: 243.9 -> 260.6 ms summed, p50 10.70 -> 11.36 ms.
"""

from __future__ import annotations

import math
from typing import cast

import apsw

from fiskai_rag.store._db import Conn

from ._burstiness import word_counts
from ._fts_records import averages
from ._fusion import SEARCH_FANOUT
from ._query import match_terms

__all__ = [
    "COMMON_SHARE",
    "MAX_COMMON",
    "MAX_PHRASES",
    "PRUNE_MIN_CHUNKS",
    "SEED_MIN_POSTINGS",
    "SEED_MIN_WORDS",
    "SEED_ROWS",
    "lexical",
    "pruned_top",
    "seeded_top",
]

PRUNE_MIN_CHUNKS = 20_000
"""Smaller stores (by their largest chunk id) run the plain BM25 query."""
COMMON_SHARE = 0.05
"""A query word held by at least this share of the chunks is common: a chunk holding it alone is left
unscored when the bound allows."""

MAX_COMMON = 3
"""Each pair of common words is one more AND in the walk: with 2 / 3 / 4 words the 20 questions' BM25
queries took 108.5 / 104.1 / 104.7 ms (plain: 111); keyword pairs 25.3 either way."""
SEED_ROWS = 5
"""The seed query (`seeded_top`) takes the rarest words until they hold this many chunks per chunk asked
for. Measured at 100 chunks asked for (generated 10k files, 103k chunks / influxdata-docs, the BM25
query alone, p50 ms): 250 held 12.7 / 3.9 (none fell back); 500, 12.5 / 4.0 (3 of 60 fell back);
1,000, 13.4 / 4.4 (6 of 60). A seed of about 1% or 2% of the chunks measured the same at 100k chunks but
held fewer than 100 chunks for 12 of influxdata-docs' 60 questions, which then paid for both queries."""
SEED_MIN_WORDS = 3
"""A query of fewer distinct words keeps the common-word pruning: for two words the threshold query
leaves almost every chunk that holds either, and the seed query was extra (the 20 keyword pairs'
BM25 query at 103k chunks, p50 2.2 -> 3.3 ms with it, influxdata-docs 0.94 -> 1.14 ms)."""
SEED_MIN_POSTINGS = 0.5
"""The seed query runs when the query's words hold, together, at least this many chunks per chunk of the
store (and one of them is common): below it the plain query or the common-word pruning scores too few
chunks for the seed query and the threshold walk to pay. The BM25 query of each of the bench's 20
questions, seeded against the common-word pruning alone (ms, best of 3): from 0.5 up, 12 of 13
questions of the generated 103k-chunk store and 6 of 7 of influxdata-docs' were faster (27.5 -> 14.1 at
best, 13.5 -> 14.6 at worst); below it, 9 of 13 of influxdata-docs' and 5 of 7 of the generated
store's were slower (3.3 -> 5.2 at worst). Summed over the 20 questions, with this gate: 318 -> 262 ms
(generated), 99 -> 88 ms (influxdata-docs)."""
MAX_PHRASES = 64
"""The threshold query is written out as ORs of ANDs; with more word uses than this it would walk the
same long posting lists too often, so `seeded_top` leaves the query to the common-word pruning."""
_K1 = 1.2
"""FTS5's bm25() k1."""
_MARGIN = 1 + 1e-9
"""The bound is raised by this factor so float rounding in the idf cannot make it too low."""
_TOKENIZER = "tokenize='porter unicode61'"
_SEED = "SELECT bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?"
_RESTRICTED = (
    "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1 "
    "AND +rowid IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?2) ORDER BY bm25(chunks_fts) LIMIT ?3"
)


def lexical(db: Conn, query: str, limit: int = SEARCH_FANOUT) -> list[tuple[int, float]]:
    """Chunk ids and BM25 scores (lower is better) for an FTS5 query, best first: FTS5's own query."""
    return [
        (int(rowid), float(score))
        for rowid, score in db.execute(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?",
            (query, limit),
        )
    ]


def _prunable(db: Conn) -> bool:
    """Whether the index is tokenized as the stems are taken here (and in `_burstiness.word_counts`)."""
    rows = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchall()
    return bool(rows) and _TOKENIZER in str(rows[0][0])


def _row_count(db: Conn) -> int:
    return averages(db)[0]  # bm25()'s own row count


def _bounds(db: Conn, terms: list[str], rows: int) -> dict[str, tuple[int, float]]:
    """Each distinct term's document frequency and the most it can add to a chunk's score (inf: unknown)."""
    tokenizer = cast("apsw.Connection", db).fts5_tokenizer("porter", ["unicode61"])
    single: list[str] = []
    out: dict[str, tuple[int, float]] = {}
    for term in dict.fromkeys(terms):
        tokens = list(
            tokenizer(term.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False, include_colocated=False)
        )
        if len(tokens) == 1:
            single.append(term)
        else:
            out[term] = (0, math.inf)  # not a single index term: always kept
    for term, (df, _) in word_counts(db, single).items():  # the vocabulary burstiness reads, cached
        idf = max(math.log((rows - df + 0.5) / (df + 0.5)), 1e-6)
        out[term] = (df, idf * (_K1 + 1.0) * terms.count(term) * _MARGIN)
    return out


def _restricted(db: Conn, match: str, keep: list[str], common: list[str], limit: int) -> list[tuple[int, float]]:
    pairs = [f'("{a}" AND "{b}")' for i, a in enumerate(common) for b in common[i + 1 :]]
    holding = " OR ".join([f'"{term}"' for term in keep] + pairs)
    return [(int(rowid), float(score)) for rowid, score in db.execute(_RESTRICTED, (match, holding, limit))]


class _TooLong(Exception):
    pass


_MAX_NESTING = 24
"""Parentheses the threshold query may nest. FTS5's parser has a fixed stack: an AND chain failed at a
depth of 33 ("fts5: parser stack overflow"), which 40 mid-frequency words on the 103k-chunk bench store
reached and which failed the whole search."""


def _nesting(query: str) -> int:
    depth = deepest = 0
    for char in query:
        if char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth -= 1
    return deepest


def _reaching(bounds: dict[str, float], floor: float) -> tuple[str, int] | None:
    """An FTS5 query of the chunks whose words' bounds add up to at least `floor`, and its word uses.

    None when every chunk reaches it or none does, or when it would use more than `MAX_PHRASES` words or
    nest deeper than `_MAX_NESTING`.
    Words by falling bound: a chunk reaches the floor with the first word and what the rest must add, or
    without it from the rest alone. The query grows with the ways to reach the floor (24 words of like
    bounds and a floor of half their sum: 5.2 million uses, 2 s to build), so it stops at the cap; every
    word a branch visits past the `rest` check is used, so the cap bounds the work too.
    """
    words = sorted(bounds, key=lambda word: (-bounds[word], word))
    rest = [0.0] * (len(words) + 1)
    for index in range(len(words) - 1, -1, -1):
        rest[index] = rest[index + 1] + bounds[words[index]]
    uses = 0

    def reach(index: int, need: float) -> str | bool:
        nonlocal uses
        if need <= 0:
            return True
        if rest[index] < need:
            return False
        without = reach(index + 1, need)
        if without is True:
            return True
        word = words[index]
        holding = reach(index + 1, need - bounds[word])
        parts: list[str] = []
        if holding is not False:
            uses += 1
            if uses > MAX_PHRASES:
                raise _TooLong
            parts.append(f'"{word}"' if holding is True else f'("{word}" AND {holding})')
        if without is not False:
            parts.append(without)
        if not parts:
            return False
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    try:
        query = reach(0, floor)
    except _TooLong:
        return None
    if isinstance(query, bool) or _nesting(query) > _MAX_NESTING:
        return None
    return query, uses


def seeded_top(
    db: Conn, match: str, limit: int, bounds: dict[str, tuple[int, float]]
) -> list[tuple[int, float]] | None:
    """What `lexical(db, match, limit)` returns, scoring only the chunks whose words can reach a floor.

    The floor comes from the rarest words alone: their own `bm25()` (FTS5 sums each word's part, and
    every part is at least 0) is a part of a chunk's score, so the `limit`-th best of it is at most the
    `limit`-th best whole score. A chunk whose words' bounds add up to less than the floor scores less,
    so only the chunks that reach it are scored with the whole query. None when the seed holds fewer
    than `limit` chunks, the words are all in the seed, or the threshold query would be too long.
    """
    if len(bounds) < SEED_MIN_WORDS or any(math.isinf(bound) for _, bound in bounds.values()):
        return None
    seed: set[str] = set()
    held = 0
    for term in sorted(bounds, key=lambda t: (bounds[t][0], t)):
        if held >= SEED_ROWS * limit:
            break
        seed.add(term)
        held += bounds[term][0]
    if len(seed) == len(bounds):
        return None
    # The seed's words in the query's order and number, so each part is the one the whole query adds.
    terms = match_terms(match)
    parts = db.execute(_SEED, (" OR ".join(f'"{t}"' for t in terms if t in seed), limit)).fetchall()
    if len(parts) < limit:
        return None
    floor = -float(parts[-1][0]) * (1 - 1e-9)  # bounds carry `_MARGIN` already; this covers the floor's rounding
    reaching = _reaching({term: bound for term, (_, bound) in bounds.items()}, floor)
    if reaching is None:
        return None
    ranked = [(int(rowid), float(score)) for rowid, score in db.execute(_RESTRICTED, (match, reaching[0], limit))]
    # At least `limit` chunks score the floor or more, and all of them reach it: fewer means a bound failed.
    return ranked if len(ranked) == limit else None


def pruned_top(db: Conn, match: str, limit: int) -> list[tuple[int, float]] | None:
    """What `lexical(db, match, limit)` returns, or None when the pruned query cannot be shown to give it.

    Args:
        db: The index (at least `PRUNE_MIN_CHUNKS` chunks for this to pay).
        match: `fts_query`'s output: quoted terms joined with OR.
        limit: How many of the best chunks.
    """
    terms = match_terms(match)
    if len(set(terms)) < 2 or not _prunable(db):
        return None
    rows = _row_count(db)
    if rows <= 0:
        return None
    bounds = _bounds(db, terms, rows)
    frequent = sorted(
        (term for term, (df, _) in bounds.items() if df >= COMMON_SHARE * rows), key=lambda t: -bounds[t][0]
    )
    postings = sum(df for df, _ in bounds.values())
    seeded = seeded_top(db, match, limit, bounds) if frequent and postings >= SEED_MIN_POSTINGS * rows else None
    if seeded is not None:
        return seeded
    common = frequent[:MAX_COMMON]
    for _attempt in range(2):
        keep = [term for term in bounds if term not in common]
        if not common or (len(common) == 1 and not keep):
            return None
        ranked = _restricted(db, match, keep, common, limit)
        if len(ranked) < limit:
            return None  # fewer chunks than asked for: the left-out ones may be needed
        last = -ranked[-1][1]
        if last > max(bounds[term][1] for term in common):
            return ranked
        # The last score reached here is a floor for any larger set's: keep only the words below it.
        smaller = [term for term in common if bounds[term][1] < last]
        if len(smaller) == len(common):
            return None
        common = smaller
    return None
