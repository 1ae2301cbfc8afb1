"""Each query word's own `bm25()` for a pool of chunks, from one FTS5 walk: the same floats.

Re-weighting a verbose question (`_burstiness.reweight`) needs, for each word it weighs up, the word's
own `bm25()` in each pooled chunk. Asked as one query per word, FTS5 walks the word's posting list
twice: once to match and once more in `bm25()`, which counts the chunks holding the word for its idf
(`xQueryPhrase`). That count is the document frequency the vocabulary already gives (`_burstiness.word_counts`,
cached per connection), so here one query walks all the words together and an auxiliary function
reads, for each pooled chunk, its size and how often each word occurs; the score is then FTS5's own
formula (`fts5Bm25Function` in `fts5_aux.c`: k1 1.2, b 0.75, every column weighing 1), computed in the
same order with the same doubles, so each float equals the one `bm25()` returns.

Only an index tokenized `porter unicode61` (the stems `word_counts` looks up) and words that are one
index term take this path (a word the tokenizer cuts in two is a phrase, whose count the vocabulary
does not hold); otherwise these functions return None and the caller asks FTS5's `bm25()`. The
equality is pinned by tests against `bm25()` (`tests/test_word_parts.py`, `test_search_proximity.py`).

Measured (the bench's 20 questions, the re-weighting step alone, p50 ms; 60 runs, all equal to the
per-word queries): generated 103k chunks 2.61 -> 1.94, influxdata-docs 0.73 -> 0.70.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence
from typing import Protocol, cast

import apsw

from fiskai_rag.store._db import Conn

from ._postings import stems

__all__ = ["window_scores", "word_scores"]

_FUNCTION = "fiskai_word_parts"
_TOKENIZER = "tokenize='porter unicode61'"
_K1 = 1.2
_B = 0.75


class _Registering(Protocol):
    def register_fts5_function(self, name: str, function: Callable[..., None]) -> None: ...


class _Found:
    """What the auxiliary function read in the last query: the table's sizes and each row's counts."""

    __slots__ = ("rows", "sizes")

    def __init__(self) -> None:
        self.sizes: tuple[int, int] = (0, 0)
        """(row count, total tokens): FTS5's own, read inside the query, so from its snapshot."""
        self.rows: list[tuple[int, int, list[int]]] = []
        """(rowid, tokens in the row, uses of each phrase)."""


_FOUND: weakref.WeakKeyDictionary[object, _Found] = weakref.WeakKeyDictionary()


def _found(db: Conn) -> _Found:
    """The connection's collector, registering the auxiliary function on first use."""
    found = _FOUND.get(db)
    if found is None:
        found = _Found()

        def collect(api: apsw.FTS5ExtensionApi, *_args: object) -> None:
            if not found.rows:
                found.sizes = (api.row_count, api.column_total_size(-1))
            locations = api.phrase_locations
            found.rows.append(
                (api.rowid, api.column_size(-1), [sum(map(len, locations(i))) for i in range(api.phrase_count)])
            )

        cast(_Registering, db).register_fts5_function(_FUNCTION, collect)
        _FOUND[db] = found
    return found


def _single_terms(db: Conn, words: Sequence[str]) -> bool:
    """Whether the index stems as the vocabulary counts are looked up and each word is one of its terms."""
    rows = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchall()
    if not rows or _TOKENIZER not in str(rows[0][0]):
        return False
    return stems(db, words) is not None


def _parts(
    db: Conn, match: str, frequencies: Sequence[int], pool: Sequence[int]
) -> tuple[list[float], float, list[tuple[int, int, list[int]]]]:
    """Each phrase's idf, the mean chunk size and, for each pooled chunk `match` finds, its counts."""
    found = _found(db)
    found.rows = []
    marks = ",".join("?" * len(pool))
    # `+rowid` keeps the pool out of FTS5's plan, as in `_burstiness` and `_proximity`.
    sql = f"SELECT {_FUNCTION}(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? AND +rowid IN ({marks})"
    db.execute(sql, (match, *pool)).fetchall()
    rows, found.rows = found.rows, []
    if not rows:
        return [], 0.0, []  # the sizes are read with the first row: nothing to score
    n_row, n_token = found.sizes
    n_row = max(n_row, 1)
    idf: list[float] = []
    for hits in frequencies:
        value = math.log((n_row - hits + 0.5) / (hits + 0.5))
        idf.append(value if value > 0.0 else 1e-6)
    return idf, float(n_token) / float(n_row), rows


def _part(idf: float, used: int, tokens: float, avgdl: float) -> float:
    freq = float(used)
    return idf * ((freq * (_K1 + 1.0)) / (freq + _K1 * (1 - _B + _B * tokens / avgdl)))


def word_scores(
    db: Conn, words: Sequence[str], frequencies: Sequence[int], pool: Sequence[int]
) -> list[tuple[int, list[float]]] | None:
    """For each pooled chunk holding one of `words`: each word's `bm25()` alone (0.0 where it is absent).

    Args:
        db: The index, tokenized `porter unicode61` (as `_topk` checks), inside the caller's transaction.
        words: Distinct query words.
        frequencies: Each word's document frequency (`_burstiness.word_counts`, read in this transaction).
        pool: Chunk ids.

    Returns:
        (chunk id, [score of each word, in `words` order]) in FTS5's scan order; None when a word is not
        one index term.
    """
    if not words or not pool:
        return []
    if not _single_terms(db, words):
        return None
    idf, avgdl, rows = _parts(db, " OR ".join(f'"{word}"' for word in words), frequencies, pool)
    out: list[tuple[int, list[float]]] = []
    for rowid, size, uses in rows:
        tokens = float(size)
        out.append(
            (
                int(rowid),
                [-_part(idf[i], used, tokens, avgdl) if used else 0.0 for i, used in enumerate(uses)],
            )
        )
    return out


def window_scores(
    db: Conn, query: str, words: Sequence[str], frequencies: Sequence[int], pool: Sequence[int]
) -> dict[int, float] | None:
    """`-bm25()` of a query of `NEAR` groups of single words, for the pooled chunks it matches.

    FTS5 scores a `NEAR` group as its words, each with the word's own idf (`xQueryPhrase` counts the
    chunks holding the word alone) and the uses the group keeps; here the uses are read in one walk and
    the idf from the vocabulary's counts, summed over the phrases in query order as `bm25()` does.

    Args:
        db: The index, inside the caller's transaction.
        query: `NEAR("a" "b", n) OR ...` (`_proximity.pair_queries`).
        words: The word of each of its phrases, in order (`a`, `b`, `b`, `c`, ...).
        frequencies: Each phrase's word's document frequency.
        pool: Chunk ids.

    Returns:
        Chunk id to `-bm25()` (higher is better); None when a word is not one index term.
    """
    if not pool:
        return {}
    if not _single_terms(db, words):
        return None
    idf, avgdl, rows = _parts(db, query, frequencies, pool)
    out: dict[int, float] = {}
    for rowid, size, uses in rows:
        if len(uses) != len(idf):
            return None  # not the phrases the caller named
        tokens = float(size)
        score = 0.0
        for index, used in enumerate(uses):
            if used:
                score += _part(idf[index], used, tokens, avgdl)
        out[int(rowid)] = score  # bm25() is -score; negation is exact, so this is -bm25() to the bit
    return out
