"""Search as an ordered list of named ranking stages, each of which can be read, timed or switched off.

A ranking is a list of (chunk id, score), best first. `run_search` starts the query's vector and its
KNN before any stage (outside the read transaction, so a slow embeddings server holds nothing; an
in-process contextual model's run beside the stages in a worker thread when a core is spare), then
hands the ranking through `STAGES` in this order inside one read transaction:

1. `candidates`: the best `RESCORE_POOL` (100) chunks by BM25, lower is better: from the posting lists
   a reader that searches again holds in memory (`_postings`), a pruned FTS5 query on a large store
   (`_topk`), or FTS5's own query.
2. `bursty`: a verbose question's bursty words weigh more than its generic ones (`_burstiness`).
3. `proximity`: the question's adjacent word pairs, as phrases and within 8 words (`_proximity`); the
   scores become higher-is-better here.
4. `versions`: a question naming a version (`influxdb 3`, `v2`) prefers that version's tree (`_version`).
5. `sections`: a verbose question naming a documentation tree (`chronograf`) prefers it (`_section`).
6. `vectors`: the query's nearest vectors fused in (`_fusion`, `_knn`); only with an embedder.
7. `distinct`: near-identical copies of a better-ranked section fold into it (`_distinct`).
8. `per-document`: at most two hits a document (`_distinct.per_document`).

Then the first `top_k` are read (`_hit.hydrate`), each with the other places its section is copied to.

Switched off (`open_store(..., without_stages=["proximity"])`, `fiskai knowledge --without-stage
proximity`), a stage passes the ranking through unchanged; `proximity` still turns BM25's
lower-is-better scores into higher-is-better ones. Without `candidates`, only the vectors rank (a
lexical store finds nothing). `run_search(..., timings=...)` adds each stage's seconds to a dict. With
every stage on, the hits are those of the single search method this list replaced, score for score
(`tests/test_search_golden.py` pins them on the shared collections).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from fiskai_rag.errors import EmbedderError, EmbeddingDimensionError, RagError
from fiskai_rag.store._db import Conn
from fiskai_rag.store._worker import Worker, spare_core

from ._burstiness import reweight
from ._distinct import Folded, distinct, per_document, with_copies
from ._fusion import fuse, names_only, static_model
from ._hit import Hit, hydrate
from ._knn import Background, VectorSide, query_vector
from ._postings import HeldPostings, Postings
from ._proximity import RESCORE_POOL, PairScores, PairSide, proximity
from ._section import prefer_sections
from ._topk import PRUNE_MIN_CHUNKS, lexical, pruned_top

if TYPE_CHECKING:
    from pathlib import Path

    from typing_extensions import override

    from fiskai_rag.embed import Embedder
else:  # typing_extensions costs import time on the search path; the decorator only matters to pyright

    def override(func: Any) -> Any:
        return func


__all__ = ["SEARCH_STAGES", "STAGES", "SearchRun", "Sides", "Stage", "check_stages", "run_search"]

_R = TypeVar("_R")
Ranking = list[tuple[int, float]]
Neighbours = list[tuple[int, float]]


class Sides:
    """What a store keeps between searches: helpers that pay only in a process that searches again.

    Each loads or starts in the background and never changes a result: held posting lists (`_postings`),
    the pair queries' worker thread (`_proximity.PairSide`) and the vectors in memory (`_knn.VectorSide`).
    """

    __slots__ = ("pairs", "postings", "searched", "vectors")

    def __init__(self, db_path: Path) -> None:
        self.postings = HeldPostings(db_path)
        self.pairs = PairSide(db_path)
        self.vectors = VectorSide(db_path)
        self.searched = False
        """Whether a search has run: the pair worker serves only a store that searches again."""

    def close(self) -> None:
        """Stop the worker and drop what is held; loaders still running drop their results."""
        self.pairs.close()
        self.postings.close()
        self.vectors.close()


class SearchRun:
    """One search as the stages see it: the query, the store's sides, and what a stage leaves for a later one."""

    __slots__ = (
        "db",
        "degraded",
        "dimension",
        "embedder",
        "folded",
        "held",
        "k",
        "knn",
        "match",
        "pairs",
        "pairs_beside",
        "query",
        "sides",
        "size",
    )

    def __init__(
        self, db: Conn, query: str, match: str, k: int, sides: Sides, embedder: Embedder | None, dimension: int
    ) -> None:
        self.db = db
        self.query = query
        """The text as asked (the version and section stages read words the FTS5 query drops)."""
        self.match = match
        """The FTS5 query (`_query.fts_query`): quoted terms joined with OR."""
        self.k = k
        self.sides = sides
        self.embedder = embedder
        """None when the store has no vectors to search."""
        self.dimension = dimension
        self.size = 0
        """The store's largest chunk id: about its number of chunks."""
        self.held: Postings | None = None
        """The posting lists in memory, when the store holds them (`candidates` looks)."""
        self.pairs_beside = False
        """Whether `candidates` may start the pair queries beside its BM25 query (`proximity` is on)."""
        self.pairs: Worker[PairScores | None] | None = None
        self.knn: Neighbours | Background[Neighbours] | Worker[Neighbours | None] | None = None
        self.degraded: str | None = None
        """Why the vectors were skipped (the embedder failed), if they were."""
        self.folded: Folded | None = None
        """What `distinct` folded, for the hits' other locations."""

    def take_pairs(self) -> Worker[PairScores | None] | None:
        """The pair queries' worker, if started; each start is collected once."""
        pairs, self.pairs = self.pairs, None
        return pairs


class Stage:
    """One named step: `rank` takes the ranking so far and returns the next one."""

    name = ""

    def before(self, run: SearchRun) -> None:
        """Work done before the read transaction opens (only `vectors` has any)."""

    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        raise NotImplementedError

    def skip(self, run: SearchRun, ranked: Ranking) -> Ranking:
        """The ranking when the stage is switched off: unchanged."""
        return ranked


class Candidates(Stage):
    name = "candidates"

    @override
    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        db = run.db
        (size,) = db.execute("SELECT max(id) FROM chunks").fetchall()[0]
        run.size = int(size or 0)
        # Held postings give the same rows in a tenth of the time; the pair queries then follow on the pool.
        run.held = run.sides.postings.current(db, run.size)
        top = run.held.top_of(db, run.match, RESCORE_POOL) if run.held is not None else None
        if top is None and run.pairs_beside and run.sides.searched:
            run.pairs = run.sides.pairs.start(run.match, run.size)
        if top is None:
            large = size is not None and run.size >= PRUNE_MIN_CHUNKS
            top = (pruned_top(db, run.match, RESCORE_POOL) if large else None) or lexical(db, run.match, RESCORE_POOL)
        return top


class Bursty(Stage):
    name = "bursty"

    @override
    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        return reweight(run.db, run.match, ranked, run.held)


class Proximity(Stage):
    name = "proximity"

    @override
    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        pairs = run.take_pairs()
        return proximity(run.db, run.match, ranked, pairs.result() if pairs is not None else None)

    @override
    def skip(self, run: SearchRun, ranked: Ranking) -> Ranking:
        return [(chunk_id, -score) for chunk_id, score in ranked]  # BM25 is lower-is-better


class Versions(Stage):
    name = "versions"

    @override
    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        if not any(c.isdigit() for c in run.query):
            return ranked  # only a question with a digit can name a version: others never import the step
        from ._version import prefer_versions

        return prefer_versions(run.db, run.query, ranked)


class Sections(Stage):
    name = "sections"

    @override
    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        return prefer_sections(run.db, run.query, ranked)


class Vectors(Stage):
    name = "vectors"

    @override
    def before(self, run: SearchRun) -> None:
        embedder = run.embedder
        # A query of bare names (`--port`) gives a contextual model nothing to read (see `names_only`).
        if embedder is None or (not static_model(embedder) and names_only(run.query)):
            return
        if in_process_contextual(embedder):
            # The query's forward pass (about 2 ms int8, 5 ms float, more under load) and its KNN run
            # beside the lexical stages when a core is spare: onnxruntime and SQLite release the GIL, so
            # a hybrid search costs about its slower side rather than the sum. With no core spare a
            # second thread only waits to be scheduled, so both run here, the KNN too (a thread of its
            # own for it cost more than sqlite-vec's KNN of a small store). Only in-process: a slow
            # embeddings server must not hold the read transaction open, so its vector comes first.
            if spare_core():
                run.knn = run.sides.vectors.beside(functools.partial(_nearest, run, embedder))
                return
            try:
                run.knn = _nearest(run, embedder)
            except EmbeddingDimensionError:
                raise
            except EmbedderError as err:
                run.degraded = str(err)
            return
        try:
            blob = query_vector(embedder, run.dimension, run.query)
        except EmbeddingDimensionError:
            raise
        except EmbedderError as err:
            run.degraded = str(err)
            return
        if blob is not None:  # zeros: see `_nearest`
            run.knn = run.sides.vectors.nearest(blob, run.dimension)

    @override
    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        knn, run.knn = run.knn, None  # collected once: the worker then takes the next search's call
        if knn is None or run.embedder is None:
            return ranked
        try:
            found = knn if isinstance(knn, list) else knn.result()
        except EmbeddingDimensionError:
            raise
        except EmbedderError as err:  # the model failed in the helper thread: lexical, as before it
            run.degraded = str(err)
            return ranked
        if found is None:
            return ranked
        return fuse(ranked, found, static=static_model(run.embedder))


def _nearest(run: SearchRun, embedder: Embedder) -> Neighbours | None:
    """The query's nearest chunks, the KNN in the calling thread; None for a query vector of zeros.

    A query vector of zeros (no token the model knows) ranks every chunk the same: its KNN order would
    be noise, so the search stays lexical.
    """
    blob = query_vector(embedder, run.dimension, run.query)
    if blob is None:
        return None
    return run.sides.vectors.nearest_here(blob, run.dimension)


def in_process_contextual(embedder: object) -> bool:
    """Whether `embedder` runs a contextual model in this process (its query vector costs milliseconds)."""
    return getattr(embedder, "contextual", False) is True and callable(getattr(embedder, "load", None))


class Distinct(Stage):
    name = "distinct"

    @override
    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        # Copies of a better-ranked section go before the per-document cap counts them.
        run.folded = distinct(run.db, ranked, run.k)
        return run.folded.ranked


class PerDocument(Stage):
    name = "per-document"

    @override
    def rank(self, run: SearchRun, ranked: Ranking) -> Ranking:
        return per_document(run.db, ranked, owners=run.folded.owners if run.folded is not None else None)


STAGES: tuple[Stage, ...] = (
    Candidates(),
    Bursty(),
    Proximity(),
    Versions(),
    Sections(),
    Vectors(),
    Distinct(),
    PerDocument(),
)
SEARCH_STAGES = tuple(stage.name for stage in STAGES)
"""The stages' names in the order they run."""


def check_stages(names: Collection[str]) -> frozenset[str]:
    """`names` as a set of stage names to switch off.

    Raises:
        RagError: A name is not a stage's.
    """
    unknown = sorted(set(names) - set(SEARCH_STAGES))
    if unknown:
        raise RagError(f"unknown search stage {', '.join(unknown)}: the stages are {', '.join(SEARCH_STAGES)}")
    return frozenset(names)


def run_search(
    run: SearchRun, *, without: frozenset[str] = frozenset(), timings: dict[str, float] | None = None
) -> list[Hit]:
    """Run every stage of `STAGES` but those in `without`; the best `run.k` hits.

    Args:
        run: The search; `run.degraded` says afterwards whether the vectors were skipped.
        without: Stage names to switch off (`check_stages`).
        timings: Each stage's seconds (and `hits`, reading them) are added here when given.
    """
    run.pairs_beside = "proximity" not in without
    stages = [(stage, stage.name not in without) for stage in STAGES]
    if timings is not None:
        for name in (*SEARCH_STAGES, "hits"):
            timings.setdefault(name, 0.0)  # in the order the stages run
    for stage, on in stages:
        if on:
            _timed(timings, stage.name, stage.before, run)
    db = run.db
    with db:
        ranked: Ranking = []
        try:
            for stage, on in stages:
                ranked = _timed(timings, stage.name, stage.rank if on else stage.skip, run, ranked)
        except BaseException:
            pairs = run.take_pairs()
            if pairs is not None:  # collected, so the worker is free; this error is the one to report
                with contextlib.suppress(Exception):
                    pairs.result()
            knn, run.knn = run.knn, None
            if knn is not None and not isinstance(knn, list):  # the query vector's worker, likewise
                with contextlib.suppress(Exception):
                    knn.result()
            raise
        hits = _timed(timings, "hits", _hits, run, ranked)
    run.sides.searched = True
    return hits


def _hits(run: SearchRun, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
    # Rows a writer removed between the two sides' snapshots are skipped here.
    hits = hydrate(run.db, ranked[: run.k])
    return with_copies(run.db, hits, run.folded) if run.folded is not None else hits


def _timed(timings: dict[str, float] | None, name: str, call: Callable[..., _R], *args: object) -> _R:
    if timings is None:
        return call(*args)
    start = time.perf_counter()
    try:
        return call(*args)
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start
