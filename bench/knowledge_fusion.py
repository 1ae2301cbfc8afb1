"""nDCG@10 of each way of fusing the vectors, on the shared IR collections, in one run over one index each.

Run: uv run python bench/knowledge_fusion.py --model DIR_OR_NAME [--stores /tmp/fusion] [cisi cacm med]

Each collection is indexed once with the in-process model (kept under --stores, so a second run only
searches), then every query is searched with each fusion in turn over that same index:

- `lexical`: no vectors (the baseline every other row is held to);
- `rrf`: what search does (`fiskai_rag.search._fusion.fuse`: RRF, K=60, 50 candidates a side, as the seed
  says; a static model's vectors weigh `STATIC_VECTOR_WEIGHT`);
- `rrf w=1`: RRF with the vectors at full weight whatever the model (differs from `rrf` for a static one);
- `blend`: the score blend search used before issue 31 (each list min-max scaled, summed), kept here only
  as the measured "before".

The table shows nDCG@10 and MRR@10 and each row's nDCG ratio to `lexical` from the same run. Searching
is deterministic, so one round is the figure; no timing is taken.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fiskai_rag import StaticEmbedder, open_store
from fiskai_rag.eval import evaluate, load_trec_suite
from fiskai_rag.search import _fusion, _stages

SHARED = Path(os.environ.get("FISKAI_SHARED_DIR", Path(__file__).resolve().parent.parent.parent / "shared"))
Fuse = Callable[..., list[tuple[int, float]]]


def _blend(
    lexical: Sequence[tuple[int, float]], vectors: Sequence[tuple[int, float]], **_: object
) -> list[tuple[int, float]]:
    """The pre-issue-31 score blend: each side min-max scaled to 0..1 and summed (cosine from L2 distance)."""

    def scaled(values: dict[int, float]) -> dict[int, float]:
        if not values:
            return {}
        low, high = min(values.values()), max(values.values())
        span = high - low
        return {key: (value - low) / span if span > 0 else 1.0 for key, value in values.items()}

    words = scaled(dict(lexical[: _fusion.SEARCH_FANOUT]))
    meaning = scaled({chunk_id: 1.0 - distance * distance / 2.0 for chunk_id, distance in vectors})
    fused = {chunk_id: words.get(chunk_id, 0.0) + meaning.get(chunk_id, 0.0) for chunk_id in words.keys() | meaning}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def _rrf_full(
    lexical: Sequence[tuple[int, float]], vectors: Sequence[tuple[int, float]], **_: object
) -> list[tuple[int, float]]:
    return _fusion.fuse(lexical, vectors, static=False)


FUSIONS: dict[str, Fuse | None] = {"lexical": None, "rrf": _fusion.fuse, "rrf w=1": _rrf_full, "blend": _blend}


def _figures(
    store_dir: Path, collection: Path, embedder: StaticEmbedder | None, fuse: Fuse | None
) -> tuple[float, float]:
    suite = load_trec_suite(collection)
    stage_globals: dict[str, Any] = _stages.__dict__
    kept = stage_globals["fuse"]
    if fuse is not None:
        stage_globals["fuse"] = fuse  # the one call site of the fusion: the stage reads the module global
    try:
        with open_store(store_dir, read_only=True, embedder=embedder) as store:
            report = evaluate(suite, lambda text: [hit.citation for hit in store.search(text, top_k=20).hits])
    finally:
        stage_globals["fuse"] = kept
    return report.ndcg, report.mrr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("collections", nargs="*", default=["cisi", "cacm", "med"])
    parser.add_argument("--model", required=True, help="an in-process model: a known name or a directory")
    parser.add_argument("--stores", type=Path, default=Path("/tmp/fiskai-fusion-bench"), help="kept indexes")
    args = parser.parse_args()
    rows: list[tuple[str, str, float, float, float]] = []
    for name in args.collections:
        collection = SHARED / "fixtures" / "ir" / name
        if not collection.is_dir():
            raise SystemExit(f"{collection} is missing: set FISKAI_SHARED_DIR to the shared folder")
        store_dir = args.stores / name
        embedder = StaticEmbedder(args.model)
        with open_store(store_dir, read_only=False, embedder=embedder) as writer:
            writer.index([str(collection / "corpus")])  # incremental: a kept store only checks its files
        lexical = 0.0
        for label, fuse in FUSIONS.items():
            ndcg, mrr = _figures(store_dir, collection, None if fuse is None else embedder, fuse)
            lexical = ndcg if fuse is None else lexical
            rows.append((name, label, ndcg, mrr, ndcg / lexical if lexical else 0.0))
    print(f"model: {args.model}")
    print(f"{'collection':<10} {'fusion':<8} {'nDCG@10':>8} {'MRR@10':>8} {'vs lexical':>10}")
    for name, label, ndcg, mrr, ratio in rows:
        print(f"{name:<10} {label:<8} {ndcg:>8.4f} {mrr:>8.4f} {ratio:>10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
