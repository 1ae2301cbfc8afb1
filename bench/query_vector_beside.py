"""Where a hybrid search computes an in-process contextual model's query vector and KNN, A/B in one run.

Run: uv run python bench/query_vector_beside.py [ROUNDS]   # after `bench/knowledge.py --semantic`

On the store `bench/knowledge.py --semantic` leaves (60 influxdata-docs files indexed with the default
all-MiniLM-L6-v2-int8), each query is searched once per variant in turn, so load on a shared machine
hits all alike:

- worker: the query vector and its KNN in the store's worker thread beside the lexical stages (what a
  search does when `spare_core()` says a core is free);
- thread: the same in a new thread per search (the reverted 42c9adb);
- here: both in the search's own thread (what a search does with no core spare);
- before: the query vector in the search's thread before the stages, the KNN in a new thread (main
  before issue 35's change, and still an embeddings server's path when a core is spare).

Prints each variant's p50/p95 beside lexical, its per-stage medians, and whether every variant gave
the same hits score for score.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gen_corpus import DATA
from knowledge import DEFAULT_CONTEXTUAL, _queries

from fiskai_rag import StaticEmbedder, open_store
from fiskai_rag.search import _knn, _stages


def _thread_beside(self: _knn.VectorSide, call: Callable[[], Any]) -> Any:
    return _knn.Background(call, name="fiskai-rag-query-vector")


def _always(_: object = None) -> bool:
    return True


def _never(_: object = None) -> bool:
    return False


# (in_process_contextual, spare_core, VectorSide.beside) for each variant.
_VARIANTS: dict[str, tuple[Any, Any, Any]] = {
    "worker": (_stages.in_process_contextual, _always, _knn.VectorSide.beside),
    "thread": (_stages.in_process_contextual, _always, _thread_beside),
    "here": (_stages.in_process_contextual, _never, _knn.VectorSide.beside),
    "before": (_never, _always, _knn.VectorSide.beside),
}


def _use(variant: tuple[Any, Any, Any]) -> None:
    # Through setattr: the modules' names are theirs, not exported; this bench swaps them on purpose.
    setattr(_stages, "in_process_contextual", variant[0])  # noqa: B010
    setattr(_stages, "spare_core", variant[1])  # noqa: B010
    setattr(_knn, "spare_core", variant[1])  # noqa: B010
    _knn.VectorSide.beside = variant[2]


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    work = DATA / "run-semantic"
    store = work / "state" / "knowledge" / "default"
    if not (store / "knowledge.db").is_file():
        print(f"no store at {store}: run `uv run python bench/knowledge.py --semantic` first")
        return 2
    keywords, questions = _queries(Path(work / "raw.db"), 20)
    queries = keywords + questions
    original = (_stages.in_process_contextual, getattr(_stages, "spare_core"), _knn.VectorSide.beside)  # noqa: B009
    samples: dict[str, list[float]] = {name: [] for name in (*_VARIANTS, "lexical")}
    stages: dict[str, dict[str, list[float]]] = {name: {} for name in _VARIANTS}
    same = True
    with (
        open_store(store, read_only=True, embedder=StaticEmbedder(DEFAULT_CONTEXTUAL)) as hybrid,
        open_store(store, read_only=True) as lexical,
    ):
        for query in queries[:5]:  # warm: the model's sessions, SQLite's caches, the held postings
            hybrid.search(query, top_k=10)
            lexical.search(query, top_k=10)
        try:
            for _ in range(rounds):
                for query in queries:
                    first: list[tuple[str, float]] | None = None
                    for name, variant in _VARIANTS.items():
                        _use(variant)
                        timings: dict[str, float] = {}
                        start = time.perf_counter()
                        hits = hybrid.search(query, top_k=10, timings=timings).hits
                        samples[name].append((time.perf_counter() - start) * 1000)
                        for stage, seconds in timings.items():
                            stages[name].setdefault(stage, []).append(seconds * 1000)
                        found = [(hit.citation, hit.score) for hit in hits]
                        first = found if first is None else first
                        same &= found == first
                    start = time.perf_counter()
                    lexical.search(query, top_k=10)
                    samples["lexical"].append((time.perf_counter() - start) * 1000)
        finally:
            _use(original)
    base = statistics.median(samples["lexical"])
    for name, values in samples.items():
        ordered = sorted(values)
        p50 = statistics.median(ordered)
        p95 = ordered[round(0.95 * (len(ordered) - 1))]
        print(f"{name:<8} p50 {p50:6.2f} ms ({p50 / base:.2f}x lexical)  p95 {p95:6.2f} ms")
    for name, timed in stages.items():
        print(f"{name:<8} " + " ".join(f"{stage}={statistics.median(v):.2f}" for stage, v in timed.items()))
    print(f"identical hits in every variant: {same}; {len(queries)} queries x {rounds} rounds; ", end="")
    print(f"load {os.getloadavg()[0]:.1f}; cores {os.cpu_count()}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
