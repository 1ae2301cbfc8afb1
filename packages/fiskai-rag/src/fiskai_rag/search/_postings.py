"""Every index term's chunks and uses in memory, for a reader that searches again: `bm25()` without SQL.

FTS5 answers a BM25 query by walking each word's posting list, computing `bm25()` for every chunk the
query matches, and sorting: 5-6 ms for a question on influxdata-docs (11k matching chunks) even with
`_topk`'s pruning. A long-lived reader (an MCP server, an agent) holds the posting lists instead:
influxdata-docs' 39k chunks have 1.47 million (term, chunk, uses) entries, 9 MB in numpy at 6 bytes
each, read in about 0.5 s from the `fts5vocab` instance table, 100k uses at a time (peak RSS of the
bench's reader 57.7 MB with them, 25.9 MB without them and without numpy); a question's best 100 then
take 0.66 ms against 5.4 ms through FTS5 (p50 of 648 queries and limits, every result equal). A store
of more than `MAX_ENTRIES` keeps FTS5: the generated 10k-file bench corpus (103k chunks) has 7.5
million entries, 45 MB held (1.7 s to read).

With the pool known that early, the pair queries of `_proximity` run on it after the BM25 step rather
than over the whole table beside it: interleaved query by query on influxdata-docs (7 rounds),
keywords 1.69 -> 1.61 ms, questions 6.23 -> 5.42 ms. Whole searches against main at 669db13 (issue
16's start; `bench/knowledge_ab.py --search`, 5 rounds): keywords 3.52 -> 2.32 ms, questions 7.33 ->
6.43 ms. Before this change, in a run the same morning: 3.52 -> 3.88 and 7.31 -> 11.34 ms.

The scores are FTS5's own floats: `fts5Bm25Function` (`fts5_aux.c`, k1 1.2, b 0.75, every column
weighing 1) sums, for each phrase of the query in order, `idf * (f (k1 + 1)) / (f + k1 (1 - b + b D /
avgdl))`, with f the phrase's uses in the chunk, D the chunk's tokens (`xColumnSize(-1)`), avgdl the
table's tokens over its rows, and idf `log((N - n + 0.5) / (n + 0.5))` (1e-6 when not above 0) over
the n chunks holding the phrase. The same IEEE operations in the same order give the same doubles (a
phrase a chunk lacks adds 0.0, which changes no sum). SQLite returns equal scores in scan order,
rowid ascending; a stable sort does the same. `tests/test_postings.py` pins the equality against FTS5.

Only an index tokenized `porter unicode61` is held (the stems are looked up with its tokenizer), and a
query of phrases (a word the tokenizer cuts in two) is left to FTS5.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import apsw

from fiskai_rag.store._db import Conn, change_stamp, open_reader

from ._fts_records import averages, row_sizes
from ._knn import numpy_available
from ._query import match_terms

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["MAX_ENTRIES", "MIN_CHUNKS", "HeldPostings", "Postings", "load_postings", "stems"]

MIN_CHUNKS = 20_000
"""Smaller stores stay with FTS5: their queries take a few milliseconds (`_topk.PRUNE_MIN_CHUNKS`)."""
MAX_ENTRIES = 2_500_000
"""A store with more (term, chunk) pairs than this stays with FTS5. Held, an entry takes 6 bytes (a
32-bit chunk id, a 16-bit count): 15 MB at most, so a reader's peak RSS stays under bench/knowledge.py's
60 MB with numpy loaded (influxdata-docs: 1.47 million entries, 26 MB searching without them, 38 MB
with numpy imported). The generated 10k-file corpus (7.5 million entries) would hold 45 MB."""
_BATCH_USES = 100_000
"""Uses read per query while loading: a few MB of text and ids at a time beside the result."""
_K1 = 1.2
_B = 0.75
_TOKENIZER = "tokenize='porter unicode61'"
_VOCAB = "fiskai_postings_vocab"


class Postings:
    """The posting lists of one snapshot of `chunks_fts`, with `bm25()`'s statistics."""

    def __init__(
        self,
        terms: dict[str, int],
        bounds: npt.NDArray[Any],
        chunks: npt.NDArray[Any],
        uses: npt.NDArray[Any],
        norm: npt.NDArray[Any],
        rows: int,
    ) -> None:
        import numpy as np

        self._np = np
        self._terms = terms
        """Each term's number: its entries are `chunks[bounds[n]:bounds[n + 1]]` (and `uses`)."""
        self._bounds = bounds
        self._chunks = chunks
        """Chunk ids, ascending within each term."""
        self._uses = uses
        """The term's uses in that chunk (a count; FTS5 sums them as doubles)."""
        self._norm = norm
        """`k1 (1 - b + b D / avgdl)` by chunk id."""
        self._rows = rows

    @property
    def entries(self) -> int:
        """How many (term, chunk) pairs are held."""
        return len(self._chunks)

    def _idf(self, held: int) -> float:
        value = math.log((self._rows - held + 0.5) / (held + 0.5))
        return value if value > 0.0 else 1e-6

    def _part(self, term: str) -> tuple[npt.NDArray[Any], npt.NDArray[Any]] | None:
        """A term's chunks and its BM25 part in each (positive), or None when no chunk holds it."""
        number = self._terms.get(term)
        if number is None:
            return None
        start, end = int(self._bounds[number]), int(self._bounds[number + 1])
        chunks = self._chunks[start:end]
        uses = self._uses[start:end].astype(self._np.float64)
        idf = self._idf(end - start)
        return chunks, idf * ((uses * (_K1 + 1.0)) / (uses + self._norm[chunks]))

    def top(self, stems: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """The best `limit` chunks of the OR of these terms (in query order) with their `bm25()`, best first."""
        np = self._np
        score = np.zeros(len(self._norm))
        for stem in stems:
            part = self._part(stem)
            if part is not None:
                score[part[0]] += part[1]  # a term's chunks are distinct: no index repeats
        matched = np.flatnonzero(score)  # every part is above 0, so these are the chunks the OR matches
        best = score[matched]
        if len(best) > limit:
            # Keep the chunks at or above the limit-th score (ties included), then order those alone.
            floor = np.partition(best, len(best) - limit)[len(best) - limit]
            keep = best >= floor
            matched, best = matched[keep], best[keep]
        order = np.argsort(-best, kind="stable")[:limit]  # equal scores by chunk id, as SQLite scans
        return [(int(chunk), -float(value)) for chunk, value in zip(matched[order], best[order], strict=True)]

    def top_of(self, db: Conn, match: str, limit: int) -> list[tuple[int, float]] | None:
        """`top` of an `fts_query` output; None when a word is not one index term (a phrase: FTS5's)."""
        words = stems(db, match_terms(match))
        return self.top(words, limit) if words is not None else None

    def parts(self, stems: Sequence[str], pool: Sequence[int]) -> list[tuple[int, list[float]]]:
        """`_word_parts.word_scores` from memory: each pooled chunk holding a term, with each term's `bm25()`."""
        np = self._np
        wanted = np.array(sorted(set(pool)), dtype=np.int64)
        table = np.zeros((len(wanted), len(stems)))
        for column, stem in enumerate(stems):
            part = self._part(stem)
            if part is None:
                continue
            chunks, values = part
            at = np.searchsorted(chunks, wanted)
            inside = at < len(chunks)
            held = np.zeros(len(wanted), dtype=bool)
            held[inside] = chunks[at[inside]] == wanted[inside]
            table[held, column] = -values[at[held]]
        rows = np.flatnonzero(table.any(axis=1))
        return [(int(wanted[row]), [float(value) for value in table[row]]) for row in rows]


def stems(db: Conn, words: Sequence[str]) -> list[str] | None:
    """Each word's index term by the index's tokenizer; None when one is not exactly one term."""
    tokenizer = cast("apsw.Connection", db).fts5_tokenizer("porter", ["unicode61"])
    out: list[str] = []
    for word in words:
        tokens = cast(
            "list[str]",
            list(
                tokenizer(word.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False, include_colocated=False)
            ),
        )
        if len(tokens) != 1:
            return None
        out.append(str(tokens[0]))
    return out


def _entries(np: Any, used: npt.NDArray[Any], counts: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """The (chunk, uses) entries of consecutive terms' uses: one chunk id per use, by term then chunk."""
    # A new entry starts where the chunk id changes or a term's uses begin.
    starts = np.zeros(len(used), dtype=bool)
    starts[0] = True
    starts[np.cumsum(counts)[:-1]] = True
    starts[1:] |= used[1:] != used[:-1]
    first = np.flatnonzero(starts)
    return used[first], np.diff(np.append(first, len(used)))


def load_postings(db: Conn) -> Postings | None:
    """Read every posting list of `chunks_fts` in one read transaction.

    None for an index tokenized otherwise, one larger than `MAX_ENTRIES` (or of more than twice as many
    tokens), or when FTS5's tables disagree
    (the queries then stay with FTS5). `db` must be a connection of its own (a temporary `fts5vocab`
    table is created on it).
    """
    import numpy as np

    rows = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchall()
    if not rows or _TOKENIZER not in str(rows[0][0]):
        return None
    query_only = int(db.execute("PRAGMA query_only").fetchall()[0][0])
    db.execute("PRAGMA query_only=0")  # the temp schema only: the file stays opened read-only
    try:
        for kind in ("row", "instance"):
            db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_VOCAB}_{kind} USING fts5vocab(main, chunks_fts, {kind})"
            )
    finally:
        db.execute(f"PRAGMA query_only={query_only}")
    with db:  # one snapshot for the lists, the sizes and the statistics
        n_row, n_token = averages(db)
        if n_token > 2 * MAX_ENTRIES:
            # Counting the entries walks the whole index (0.96 s for the generated 103k-chunk store). A
            # chunk's distinct words are 0.47-0.79 of its tokens on both bench corpora, so a store of
            # more than twice the budget in tokens is refused from its averages record alone.
            return None
        # The vocabulary as three strings (a term holds no space: unicode61 splits there), not 27k tuples.
        names, held_text, used_text = db.execute(
            f"SELECT group_concat(term, ' '), group_concat(doc), group_concat(cnt) FROM temp.{_VOCAB}_row"
        ).fetchall()[0]
        if not names or n_row <= 0:
            return None
        held = np.fromstring(str(held_text), dtype=np.int64, sep=",")
        per_term = np.fromstring(str(used_text), dtype=np.int64, sep=",")
        ordered = str(names).split(" ")
        terms = {term: number for number, term in enumerate(ordered)}
        entries = int(held.sum())
        largest = int(db.execute("SELECT max(rowid) FROM chunks_fts").fetchall()[0][0] or 0)
        if not len(ordered) == len(terms) == len(held) == len(per_term) or entries > MAX_ENTRIES or largest >= 2**31:
            return None
        # Filled in place: no second copy of the lists at the peak of the read.
        chunks = np.empty(entries, dtype=np.int32)
        uses = np.empty(entries, dtype=np.uint16)
        bounds = np.concatenate(([0], np.cumsum(held)))
        ends = np.cumsum(per_term)
        # The instance table runs by term, then chunk, then position: one chunk id per use. Read as one
        # string per batch of terms: 0.4 s for influxdata-docs' 3.2 million uses (row by row, 1 s more),
        # and a batch bounds the memory the reading takes beside the result.
        sql = f"SELECT group_concat(doc) FROM temp.{_VOCAB}_instance WHERE term >= ? AND term <= ?"
        first = 0
        while first < len(ordered):
            done = int(ends[first - 1]) if first else 0
            last = max(first, int(np.searchsorted(ends, done + _BATCH_USES, side="right")) - 1)
            (joined,) = db.execute(sql, (ordered[first], ordered[last])).fetchall()[0]
            used = np.fromstring(str(joined or ""), dtype=np.int64, sep=",")
            if len(used) != int(ends[last]) - done:
                return None  # the two tables disagree: leave the queries to FTS5
            batch_chunks, batch_uses = _entries(np, used, per_term[first : last + 1])
            start, end = int(bounds[first]), int(bounds[last + 1])
            if len(batch_chunks) != end - start or int(batch_uses.max()) >= 2**16:
                return None
            chunks[start:end] = batch_chunks
            uses[start:end] = batch_uses
            first = last + 1
        del ordered
        tokens = np.zeros(largest + 1)
        for rowid, size in row_sizes(db):
            tokens[rowid] = float(size)
    avgdl = float(n_token) / float(n_row)
    norm = _K1 * (1 - _B + _B * tokens / avgdl)
    return Postings(terms, bounds, chunks, uses, norm, n_row)


class HeldPostings:
    """A store's postings in memory, loaded in a helper thread once two searches saw the index unchanged.

    A one-shot CLI search never loads them (its one search is cheaper through FTS5 than the load), and a
    reader does not reload after every commit of an index run in progress. Any failure to load (memory,
    damage, another tokenizer) leaves the queries to FTS5 for good.
    """

    def __init__(self, db_path: Path) -> None:
        self._db_path = db_path
        self._held: tuple[Postings, tuple[int, int]] | None = None
        self._seen: tuple[int, int] | None = None
        self._loader: threading.Thread | None = None
        self._refused = False
        self._closed = False

    def current(self, db: Conn, chunks: int) -> Postings | None:
        """The postings of the snapshot `db` reads, if held; may start loading them for later searches.

        Args:
            db: The store's search connection, inside the search's read transaction.
            chunks: About the store's size (its largest chunk id).
        """
        if self._refused or chunks < MIN_CHUNKS:
            return None
        stamp = change_stamp(db)
        held = self._held
        if held is not None and held[1] != stamp:
            self._held = held = None  # the index changed since they were read
        if held is None and stamp == self._seen and (self._loader is None or not self._loader.is_alive()):
            if numpy_available():
                self._loader = threading.Thread(
                    target=self._load, args=(stamp,), name="fiskai-rag-postings", daemon=True
                )
                self._loader.start()
            else:
                self._refused = True
        self._seen = stamp
        return held[0] if held is not None else None

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a load in progress (benchmarks measure the loaded state)."""
        loader = self._loader
        if loader is not None:
            loader.join(timeout)

    def close(self) -> None:
        """Drop the postings; a load in progress drops its result."""
        self._closed = True
        self._held = None

    def _load(self, stamp: tuple[int, int]) -> None:
        try:
            db = open_reader(self._db_path)
            if db is None:
                return
            try:
                postings = load_postings(db)
            finally:
                db.close()
        except Exception:  # noqa: BLE001  # any failure leaves the queries to FTS5
            self._refused = True
            return
        if postings is None:
            self._refused = True
        elif not self._closed:
            # Read at a snapshot no older than `stamp`: if a commit slipped in between, the search
            # connection's stamp has moved on and the next search drops these.
            self._held = (postings, stamp)
