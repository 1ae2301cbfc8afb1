"""How long `Store.enumerate` (knowledge_enumerate, `fiskai knowledge match`) takes on a real corpus.

Run: uv run python bench/knowledge_enumerate.py [CORPUS] [STORE_DIR]
Default corpus: ../shared/fixtures/corpus/influxdata-docs (about 5000 pages), indexed lexically into a
temporary store on the first run (reused when STORE_DIR is given). Prints each query's match count and
the median of five calls; a common word ("the") is the worst case, matching most of the corpus.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from fiskai_rag import open_store

_ROOT = Path(__file__).resolve().parents[1]
_QUERIES = (
    "retention",
    "retention policy",
    '"retention policy"',
    "telegraf -influxql",
    "heading:flux body:join",
    "the",
)


def main() -> int:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else _ROOT.parent / "shared/fixtures/corpus/influxdata-docs"
    if not corpus.is_dir():
        print(f"no corpus at {corpus}: pass one, or put ../shared beside the checkout", file=sys.stderr)
        return 2
    store_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="enumerate-bench-"))
    with open_store(store_dir, read_only=False) as writer:
        if not writer.stats().documents:
            started = time.perf_counter()
            writer.index([str(corpus)])
            print(f"indexed {corpus.name} in {time.perf_counter() - started:.1f} s")
    with open_store(store_dir, read_only=True) as reader:
        for query in _QUERIES:
            result = reader.enumerate(query)  # warm
            times: list[float] = []
            for _ in range(5):
                started = time.perf_counter()
                reader.enumerate(query)
                times.append(time.perf_counter() - started)
            print(
                f"{query!r:28} matched {result.matched:5} of {result.indexed_documents} "
                f"(listed {len(result.documents):3})  median {statistics.median(times) * 1000:7.1f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
