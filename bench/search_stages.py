"""What each ranking stage of a search costs: `Store.search(..., timings=...)` over seeded queries.

Run: uv run python bench/search_stages.py [--corpus influxdata-docs] [--rounds 5] [--without]

Indexes the corpus (a shared one by name, or a folder) into a scratch store, builds keyword pairs and
whole questions from words its chunks really contain (seeded, as bench/knowledge.py does), lets the
reader reach the state a long-lived one searches in (held posting lists), then runs every query
`--rounds` times and prints each stage's median milliseconds per search (`fiskai_rag.search._stages`,
in the order the stages run; `hits` reads the chunks). `--without` also times whole searches with each
stage switched off in turn, interleaved with all stages on: what a stage costs end to end, beside it.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import apsw

from fiskai_rag import SEARCH_STAGES, Store, open_store

SHARED = Path(os.environ.get("FISKAI_SHARED_DIR", Path(__file__).resolve().parent.parent.parent / "shared"))
_WORD = re.compile(r"[A-Za-z]{3,}")


def _queries(db_path: Path, count: int) -> dict[str, list[str]]:
    db: Any = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    total = int(db.execute("SELECT max(rowid) FROM chunks_fts").fetchall()[0][0])
    rng = random.Random(11)
    kinds: dict[str, list[str]] = {"keywords": [], "questions": []}
    while len(kinds["questions"]) < count:
        rows = db.execute("SELECT content FROM chunks_fts WHERE rowid = ?", (rng.randint(1, total),)).fetchall()
        words = _WORD.findall(rows[0][0]) if rows else []
        if len(words) < 12:
            continue
        kinds["keywords"].append(" ".join(rng.sample(words, 2)).lower())
        start = rng.randrange(len(words) - 10)
        kinds["questions"].append("how do I " + " ".join(words[start : start + rng.randint(6, 10)]).lower() + "?")
    db.close()
    return kinds


def _warm(store: Store, queries: list[str]) -> None:
    for query in queries[:3]:
        store.search(query, top_k=10)
    store._sides.postings.wait(120)  # the state a long-lived reader searches in
    for query in queries:
        store.search(query, top_k=10)


def _stage_table(store: Store, kinds: dict[str, list[str]], rounds: int) -> None:
    names = [*SEARCH_STAGES, "hits"]
    samples = {kind: {name: list[float]() for name in [*names, "whole"]} for kind in kinds}
    for _ in range(rounds):
        for kind, queries in kinds.items():
            for query in queries:
                timings: dict[str, float] = {}
                start = time.perf_counter()
                store.search(query, top_k=10, timings=timings)
                samples[kind]["whole"].append((time.perf_counter() - start) * 1000)
                for name in names:
                    samples[kind][name].append(timings[name] * 1000)
    print(f"{'stage (p50 ms a search)':<26}" + "".join(f"{kind:>12}" for kind in kinds))
    for name in [*names, "whole"]:
        print(f"{name:<26}" + "".join(f"{statistics.median(samples[kind][name]):>12.3f}" for kind in kinds))


def _without_table(store_dir: Path, kinds: dict[str, list[str]], rounds: int) -> None:
    stores = {name: open_store(store_dir, read_only=True, without_stages=[name]) for name in SEARCH_STAGES}
    stores["(all on)"] = open_store(store_dir, read_only=True)
    try:
        for store in stores.values():
            _warm(store, [q for queries in kinds.values() for q in queries])
        samples = {label: {kind: list[float]() for kind in kinds} for label in stores}
        for _ in range(rounds):
            for kind, queries in kinds.items():
                for query in queries:
                    for label, store in stores.items():  # interleaved: load drift hits every row alike
                        start = time.perf_counter()
                        store.search(query, top_k=10)
                        samples[label][kind].append((time.perf_counter() - start) * 1000)
    finally:
        for store in stores.values():
            store.close()
    print(f"\n{'whole search p50 ms, without':<30}" + "".join(f"{kind:>12}" for kind in kinds))
    for label, by_kind in samples.items():
        print(f"{label:<30}" + "".join(f"{statistics.median(by_kind[kind]):>12.3f}" for kind in kinds))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="influxdata-docs", help="a corpus under the shared data, or a folder")
    parser.add_argument("--queries", type=int, default=30, help="keyword pairs and questions each (default 30)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--without", action="store_true", help="also time whole searches with each stage off")
    args = parser.parse_args()
    corpus = Path(args.corpus) if Path(args.corpus).is_dir() else SHARED / "fixtures" / "corpus" / args.corpus
    if not corpus.is_dir():
        sys.exit(f"no corpus at {corpus}: name a folder, or set FISKAI_SHARED_DIR")
    with tempfile.TemporaryDirectory(prefix="fiskai-stages-") as scratch:
        store_dir = Path(scratch) / "store"
        with open_store(store_dir, read_only=False) as writer:
            stats = writer.index([str(corpus)])
        kinds = _queries(store_dir / "knowledge.db", args.queries)
        print(f"{corpus.name}: {stats.chunks} chunks; {args.queries} queries of each kind, {args.rounds} rounds\n")
        with open_store(store_dir, read_only=True) as store:
            _warm(store, [q for queries in kinds.values() for q in queries])
            _stage_table(store, kinds, args.rounds)
        if args.without:
            _without_table(store_dir, kinds, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
