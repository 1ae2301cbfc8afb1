"""Speed of a budgeted context pack against a plain search on the shared real corpus (issue 6, "Speed").

Run: uv run python bench/context_pack.py              # influxdata-docs, 20 keyword pairs + 20 questions
     uv run python bench/context_pack.py --rounds 3   # fewer passes

Target: `Store.context(query, budget=N)` in <= 3x the time of `Store.search(query, top_k=10)` for the same
query. Both run in one process on one read-only store, interleaved query by query (load drift on a shared
machine hits both alike), after one warm-up pass; figures are medians over the rounds, then the median over
queries. Queries are built from words the corpus really contains (seeded), as bench/knowledge.py does.
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
from collections.abc import Callable
from pathlib import Path

from fiskai_rag import Store, open_store

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FISKAI_SHARED_DIR", ROOT.parent / "shared")) / "fixtures" / "corpus"
_WORD = re.compile(r"[A-Za-z]{4,}")


def _queries(store: Store, count: int) -> tuple[list[str], list[str]]:
    """Keyword pairs and whole questions from random chunks of the index (seeded)."""
    rng = random.Random(11)
    sources = store.sources()
    keywords: list[str] = []
    questions: list[str] = []
    while len(questions) < count:
        source = rng.choice(sources)
        if not source.chunks:
            continue  # a page of only front matter or comments has no chunk
        hit = store.show(f"{source.path}#{rng.randrange(source.chunks)}")
        words = _WORD.findall(hit.content)
        if len(words) < 12:
            continue
        keywords.append(" ".join(rng.sample(words, 2)).lower())
        start = rng.randrange(len(words) - 10)
        questions.append("how do I " + " ".join(words[start : start + rng.randint(6, 10)]).lower() + "?")
    return keywords, questions


def _median_ms(run: Callable[[], object], rounds: int) -> float:
    samples: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _compare(store: Store, queries: list[str], rounds: int, budget: int, fmt: str) -> tuple[float, float, float]:
    """Median search ms, median pack ms, and the median of per-query ratios."""
    searches: list[float] = []
    packs: list[float] = []
    ratios: list[float] = []
    for query in queries:
        store.search(query, top_k=10)
        store.context(query, budget=budget, fmt=fmt)  # pyright: ignore[reportArgumentType]
        search_ms = _median_ms(lambda q=query: store.search(q, top_k=10), rounds)
        pack_ms = _median_ms(lambda q=query: store.context(q, budget=budget, fmt=fmt), rounds)  # pyright: ignore[reportArgumentType]
        searches.append(search_ms)
        packs.append(pack_ms)
        ratios.append(pack_ms / search_ms)
    return statistics.median(searches), statistics.median(packs), statistics.median(ratios)


def main() -> int:
    """Index the corpus into a temporary store, then print the comparison table."""
    parser = argparse.ArgumentParser(description="Budgeted context packs against plain search.")
    parser.add_argument("--corpus", default=str(SHARED / "influxdata-docs"))
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    corpus = Path(args.corpus)
    if not corpus.is_dir():
        sys.stderr.write(f"corpus not found: {corpus}\n")
        return 2
    with tempfile.TemporaryDirectory(prefix="fiskai-context-bench-") as tmp:
        with open_store(tmp, read_only=False) as writer:
            stats = writer.index([str(corpus)])
        with open_store(tmp, read_only=True) as store:
            keywords, questions = _queries(store, 20)
            sys.stdout.write(
                f"{corpus.name}: {stats.files} files, {stats.chunks} chunks; {args.rounds} rounds per query, "
                "medians (ms)\n\n"
            )
            sys.stdout.write(f"{'queries':<10} {'budget':>6} {'format':<6} {'search':>8} {'pack':>8} {'ratio':>6}\n")
            worst = 0.0
            for label, queries in (("keywords", keywords), ("questions", questions)):
                for budget, fmt in ((1024, "text"), (4096, "text"), (4096, "json")):
                    search_ms, pack_ms, ratio = _compare(store, queries, args.rounds, budget, fmt)
                    worst = max(worst, pack_ms / search_ms)
                    sys.stdout.write(
                        f"{label:<10} {budget:>6} {fmt:<6} {search_ms:>8.2f} {pack_ms:>8.2f} {pack_ms / search_ms:>5.2f}x"
                        f"  (per-query ratio median {ratio:.2f}x)\n"
                    )
            sys.stdout.write(f"\nworst ratio of medians: {worst:.2f}x (target <= 3x)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
