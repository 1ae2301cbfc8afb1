"""The measured operations of bench/knowledge.py, each run in a fresh child process.

Run by bench/knowledge.py as `python bench/knowledge_ops.py OP JSON`; prints one JSON object. A child of
its own per operation gives each figure a clean interpreter and its own peak RSS (`ru_maxrss` of the
child itself), so indexing memory is never mixed with the floor's or the search's.

Every operation that needs a piece of fiskai_rag that does not exist yet prints
`{"missing": "<what>"}` instead of failing, so the bench reports what it could not measure.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import statistics
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import apsw

_EXTENSIONS = (".md", ".markdown", ".txt", ".text")
_TERM = re.compile(r"[^\W_]+")


def _rss_mb() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _files(corpus: str) -> Iterator[Path]:
    for root, dirs, names in os.walk(corpus):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "memory")
        for name in sorted(names):
            if name.lower().endswith(_EXTENSIONS):
                yield Path(root) / name


def _chunker() -> Callable[[str], list[tuple[str, str]]]:
    try:
        from fiskai_rag import chunk_markdown
    except ImportError:

        def fallback(text: str) -> list[tuple[str, str]]:
            # Paragraphs packed to about 1200 bytes: the same volume of text when the real chunker is absent.
            out: list[tuple[str, str]] = []
            buffer = ""
            for para in text.split("\n\n"):
                if buffer and len(buffer) + len(para) > 1200:
                    out.append(("", buffer))
                    buffer = ""
                buffer = f"{buffer}\n\n{para}" if buffer else para
            if buffer.strip():
                out.append(("", buffer))
            return out

        return fallback

    return lambda text: [(chunk.heading_path, chunk.content) for chunk in chunk_markdown(text).chunks]


def fts_query(text: str) -> str:
    """The same FTS5 query the index would run, so floor and product search the same terms."""
    try:
        from fiskai_rag import fts_query as product
    except ImportError:
        terms = dict.fromkeys(t.lower() for t in _TERM.findall(text) if len(t) >= 2)
        return " OR ".join(f'"{t}"' for t in list(terms)[:40])
    return product(text)


def raw_insert(args: dict[str, Any]) -> dict[str, Any]:
    """Chunk the corpus (untimed), then time a plain apsw FTS5 insert of every chunk into a fresh file."""
    chunk = _chunker()
    rows: list[tuple[str, str, str]] = []
    for path in _files(args["corpus"]):
        text = path.read_text(encoding="utf-8", errors="replace")
        rows.extend((f"{path}#{n}", heading, content) for n, (heading, content) in enumerate(chunk(text)))
    db_path = Path(args["db"])
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    start = time.perf_counter()
    db: Any = apsw.Connection(str(db_path))  # Any: apsw's stubs leave its value type partly unknown
    db.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
    db.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(citation UNINDEXED, content, heading_path, tokenize='porter unicode61')"
    )
    with db:
        db.executemany("INSERT INTO fts(citation, heading_path, content) VALUES (?, ?, ?)", rows)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return {"seconds": time.perf_counter() - start, "chunks": len(rows), "rss_mb": _rss_mb()}


def _open_store(store: str, *, read_only: bool, embedder: object = None) -> Any:
    import fiskai_rag

    opener = getattr(fiskai_rag, "open_store", None)
    if opener is None:
        raise LookupError("fiskai_rag.open_store")
    return cast("Callable[..., Any]", opener)(store, read_only=read_only, embedder=embedder)


def index(args: dict[str, Any]) -> dict[str, Any]:
    """Time one `Store.index` run over the corpus (cold, no-change or edited: the caller arranges it)."""
    start = time.perf_counter()
    try:
        store = _open_store(args["store"], read_only=False)
    except LookupError as missing:
        return {"missing": str(missing)}
    with store:
        stats = store.index([args["corpus"]])
    return {
        "seconds": time.perf_counter() - start,
        "files": stats.files,
        "chunks": stats.chunks,
        "added": stats.added,
        "updated": stats.updated,
        "rss_mb": _rss_mb(),
    }


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered),
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
    }


def _time_each(queries: list[str], run: Callable[[str], object], rounds: int) -> dict[str, float]:
    for query in queries[:5]:
        run(query)  # warm the page cache and SQLite's statement cache
    samples: list[float] = []
    for _ in range(rounds):
        for query in queries:
            start = time.perf_counter()
            run(query)
            samples.append((time.perf_counter() - start) * 1000)
    return _percentiles(samples)


def search(args: dict[str, Any]) -> dict[str, Any]:
    """In-process `Store.search(top_k=10)` latency for keyword and question queries."""
    try:
        store = _open_store(args["store"], read_only=True)
    except LookupError as missing:
        return {"missing": str(missing)}
    with store:
        hits = len(store.search(args["keywords"][0], top_k=10).hits)
        out = {
            kind: _time_each(args[kind], lambda q: store.search(q, top_k=10).hits, args["rounds"])
            for kind in ("keywords", "questions")
        }
    return {**out, "hits": hits, "rss_mb": _rss_mb()}


def raw_search(args: dict[str, Any]) -> dict[str, Any]:
    """The floor: a raw FTS5 bm25 query over the raw table, top 10 rows with their text."""
    db: Any = apsw.Connection(args["db"], flags=apsw.SQLITE_OPEN_READONLY)
    sql = "SELECT citation, heading_path, content FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 10"

    def run(query: str) -> list[Any]:
        return db.execute(sql, (fts_query(query),)).fetchall()

    out = {kind: _time_each(args[kind], run, args["rounds"]) for kind in ("keywords", "questions")}
    return {**out, "rss_mb": _rss_mb()}


class HashEmbedder:
    """A deterministic bag-of-words embedder (crc32 of each term into `dimension` buckets), no server.

    The vector tier's cost is in SQLite (vec0 insert and KNN) and in fusion; this keeps the embedder's
    own cost near zero so the figure is about the index, not a model.
    """

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    @property
    def model(self) -> str:
        return f"bench-hash-{self.dimension}"

    @property
    def query_prefix(self) -> str:
        return ""

    @property
    def document_prefix(self) -> str:
        return ""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for text in texts:
            vector = [0.0] * self.dimension
            for term in _TERM.findall(text.lower())[:256]:
                vector[zlib.crc32(term.encode()) % self.dimension] += 1.0
            vector[0] += 1e-3  # never the zero vector
            out.append(vector)
        return out


def _unit_blob(vector: list[float]) -> bytes:
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return struct.pack(f"{len(vector)}f", *(v / norm for v in vector))


def hybrid(args: dict[str, Any]) -> dict[str, Any]:
    """Index with vectors, then time hybrid search against a raw vec0 KNN over the same vectors."""
    embedder = HashEmbedder(args["dims"])
    try:
        from fiskai_rag._vec import load_vec, vec_available

        if not vec_available():
            return {"missing": "sqlite-vec (fiskai-rag[vector])"}
        store = _open_store(args["store"], read_only=False, embedder=embedder)
    except (ImportError, LookupError) as missing:
        return {"missing": str(missing)}
    start = time.perf_counter()
    with store:
        stats = store.index([args["corpus"]])
    index_seconds = time.perf_counter() - start
    queries = args["keywords"] + args["questions"]
    with _open_store(args["store"], read_only=True, embedder=embedder) as reader:
        ours = _time_each(queries, lambda q: reader.search(q, top_k=10).hits, args["rounds"])
    db: Any = apsw.Connection(str(Path(args["store"]) / "knowledge.db"), flags=apsw.SQLITE_OPEN_READONLY)
    load_vec(db)
    sql = "SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = 10 ORDER BY distance"

    def knn(query: str) -> list[Any]:
        return db.execute(sql, (_unit_blob(embedder.embed([query])[0]),)).fetchall()

    floor = _time_each(queries, knn, args["rounds"])
    return {"ours": ours, "floor": floor, "chunks": stats.chunks, "index_seconds": index_seconds}


OPS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "raw-insert": raw_insert,
    "index": index,
    "search": search,
    "raw-search": raw_search,
    "hybrid": hybrid,
}

if __name__ == "__main__":
    op, payload = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps(OPS[op](payload)))
