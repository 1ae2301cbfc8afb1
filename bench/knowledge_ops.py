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
_MAX_FILE_BYTES = 512 * 1024
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
        from fiskai_rag.index._chunk import chunk_markdown
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
        from fiskai_rag.search._query import fts_query as product
    except ImportError:
        terms = dict.fromkeys(t.lower() for t in _TERM.findall(text) if len(t) >= 2)
        return " OR ".join(f'"{t}"' for t in list(terms)[:40])
    return product(text)


def raw_insert(args: dict[str, Any]) -> dict[str, Any]:
    """Chunk the corpus (untimed), then time a plain apsw FTS5 insert of every chunk into a fresh file."""
    chunk = _chunker()
    rows: list[tuple[str, str, str]] = []
    for path in _files(args["corpus"]):
        data = path.read_bytes()
        if len(data) > _MAX_FILE_BYTES:
            continue  # the index skips these too, so the floor inserts the same chunks
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
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


def _time_pair(
    queries: list[str], ours: Callable[[str], object], floor: Callable[[str], object], rounds: int
) -> dict[str, dict[str, float]]:
    """Time both callables on every query, alternating, so load changes on a shared machine hit both."""
    for query in queries[:5]:
        ours(query)  # warm the page cache and SQLite's statement cache
        floor(query)
    samples: dict[str, list[float]] = {"ours": [], "floor": []}
    for _ in range(rounds):
        for query in queries:
            for name, run in (("ours", ours), ("floor", floor)):
                start = time.perf_counter()
                run(query)
                samples[name].append((time.perf_counter() - start) * 1000)
    return {name: _percentiles(values) for name, values in samples.items()}


def _raw_fts(db_path: str) -> Callable[[str], object]:
    db: Any = apsw.Connection(db_path, flags=apsw.SQLITE_OPEN_READONLY)
    sql = "SELECT citation, heading_path, content FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 10"
    return lambda query: db.execute(sql, (fts_query(query),)).fetchall()


def search(args: dict[str, Any]) -> dict[str, Any]:
    """In-process `Store.search(top_k=10)` against a raw FTS5 bm25 query (top 10 rows with their text).

    The peak RSS is read after the store has run every query (and loaded what a long-lived reader holds)
    and before the floor's table is opened.
    """
    try:
        store = _open_store(args["store"], read_only=True)
    except LookupError as missing:
        return {"missing": str(missing)}
    with store:
        queries = args["keywords"] + args["questions"]
        hits = [len(store.search(query, top_k=10).hits) for query in queries]
        # A long-lived reader (MCP server, agent) holds the posting lists once it has searched twice on
        # an unchanged index (fiskai_rag.search._postings): p50 is that state. Checkouts before it have none.
        sides = getattr(store, "_sides", None)  # where a store keeps them since search became a stage list
        held = getattr(sides, "postings", None) if sides is not None else getattr(store, "_postings", None)
        if held is not None:
            held.wait(120)
        rss = _rss_mb()
        floor = _raw_fts(args["db"])
        out = {
            kind: _time_pair(args[kind], lambda q: store.search(q, top_k=10).hits, floor, args["rounds"])
            for kind in ("keywords", "questions")
        }
    return {**out, "mean_hits": statistics.mean(hits), "rss_mb": rss}


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
        from fiskai_rag.store._vec import load_vec, vec_available

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
    db: Any = apsw.Connection(str(Path(args["store"]) / "knowledge.db"), flags=apsw.SQLITE_OPEN_READONLY)
    load_vec(db)
    sql = "SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = 10 ORDER BY distance"

    def knn(query: str) -> list[Any]:
        # Embedding the query is part of both sides: a KNN needs a query vector either way.
        return db.execute(sql, (_unit_blob(embedder.embed([query])[0]),)).fetchall()

    with _open_store(args["store"], read_only=True, embedder=embedder) as reader:
        timed = _time_pair(queries, lambda q: reader.search(q, top_k=10).hits, knn, args["rounds"])
    return {**timed, "chunks": stats.chunks, "index_seconds": index_seconds}


def semantic(args: dict[str, Any]) -> dict[str, Any]:
    """Cold index with the in-process static model, then hybrid vs lexical in-process search on that store."""
    try:
        from fiskai_rag import StaticEmbedder
        from fiskai_rag.store._vec import vec_available
    except ImportError as missing:
        return {"missing": str(missing)}
    if not vec_available():
        return {"missing": "sqlite-vec (fiskai-rag[semantic])"}
    start = time.perf_counter()
    embedder = StaticEmbedder(args["model"])
    with _open_store(args["store"], read_only=False, embedder=embedder) as store:
        stats = store.index([args["corpus"]])
    index_seconds = time.perf_counter() - start
    index_rss = _rss_mb()
    queries = args["keywords"] + args["questions"]
    with (
        _open_store(args["store"], read_only=True, embedder=StaticEmbedder(args["model"])) as hybrid_reader,
        _open_store(args["store"], read_only=True) as lexical_reader,
    ):
        # A one-shot process (the CLI) answers its single search through sqlite-vec; a long-lived one
        # loads every vector into memory after its second search (fiskai_rag.search._knn): p50 is that state.
        start = time.perf_counter()
        hybrid_reader.search(queries[0], top_k=10)
        first_ms = (time.perf_counter() - start) * 1000
        timed = _time_pair(
            queries,
            lambda q: hybrid_reader.search(q, top_k=10).hits,
            lambda q: lexical_reader.search(q, top_k=10).hits,
            args["rounds"],
        )
        # The query's forward pass alone (the part a hybrid search adds beside its lexical stages), of the
        # store's model and of any other named in `query_models`, alternating query by query.
        names = list(dict.fromkeys([args["model"], *args.get("query_models", [])]))
        encoders = {name: StaticEmbedder(name) for name in names}
        embed_ms: dict[str, list[float]] = {name: [] for name in names}
        for encoder in encoders.values():
            encoder.embed(queries[:2])
        for _ in range(args["rounds"]):
            for query in queries:
                for name, encoder in encoders.items():
                    start = time.perf_counter()
                    encoder.embed([query])
                    embed_ms[name].append((time.perf_counter() - start) * 1000)
    return {
        **timed,
        "embed_p50_ms": statistics.median(embed_ms[args["model"]]),
        "embed_p50_ms_by": {name: statistics.median(values) for name, values in embed_ms.items()},
        "spare_core": _spare_core(),
        "first_ms": first_ms,
        "chunks": stats.chunks,
        "index_seconds": index_seconds,
        "index_rss_mb": index_rss,
    }


def _spare_core() -> bool | None:
    """Whether a search here would run a contextual query vector beside its lexical stages (None: no such step)."""
    try:
        from fiskai_rag.store._worker import spare_core
    except ImportError:
        return None
    return spare_core()


def _corpus_chunks(corpus: str, count: int) -> list[str]:
    """The first `count` chunks of the corpus in path order, as the index embeds them.

    A chunk's content already opens with its heading path (the breadcrumb line), and that is what the
    index embeds (`document_input`, no document prefix for these models); until the thirteenth session
    this put the heading path in twice: 203 tokens a chunk on average against 196 (57 of the 96 are cut
    at 256 either way).
    """
    chunker = _chunker()
    texts: list[str] = []
    for path in _files(corpus):
        for _heading, content in chunker(path.read_text(encoding="utf-8", errors="replace")):
            texts.append(content)
        if len(texts) >= count:
            break
    return texts[:count]


def encoders(args: dict[str, Any]) -> dict[str, Any]:
    """Chunks a second of the former numpy encoder, onnxruntime float and int8, alternating, on the same chunks.

    All three load the same model directory; int8 is the shipped `load_bert_model(directory, int8=True)`
    (the `all-MiniLM-L6-v2-int8` default). Each round encodes every chunk once with each encoder, so load
    on a shared machine hits all alike. Also the cosines between their vectors for every chunk.
    """
    try:
        from fiskai_rag.embed._bert_model import load_bert_model
    except ImportError as missing:
        return {"missing": str(missing)}
    from numpy_bert import load_bert_model as load_numpy_bert

    texts = _corpus_chunks(args["corpus"], args["chunks"])
    directory = Path(args["model"])
    loads: dict[str, float] = {}
    start = time.perf_counter()
    new = load_bert_model(directory)  # builds the ONNX graph on a first run
    loads["float"] = time.perf_counter() - start
    start = time.perf_counter()
    int8 = load_bert_model(directory, int8=True)
    loads["int8"] = time.perf_counter() - start
    old = load_numpy_bert(directory)
    tokens = sum(len(ids) for ids in new.token_ids(texts))
    encoders: dict[str, Any] = {"old": old, "new": new, "int8": int8}
    for model in encoders.values():
        model.encode(texts[:8])  # warm: the runtime's first pass allocates its buffers
    rates: dict[str, list[float]] = {name: [] for name in encoders}
    vectors: dict[str, list[list[float]]] = {}
    for _ in range(args["rounds"]):
        for name, model in encoders.items():
            start = time.perf_counter()
            vectors[name] = model.encode(texts)
            rates[name].append(len(texts) / (time.perf_counter() - start))

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

    cosines = [cosine(a, b) for a, b in zip(vectors["old"], vectors["new"], strict=True)]
    int8_cosines = [cosine(a, b) for a, b in zip(vectors["new"], vectors["int8"], strict=True)]
    return {
        "chunks": len(texts),
        "tokens": tokens,
        "ceiling_per_s": _int8_ceiling(tokens // len(texts), new.workers),
        "old_per_s": statistics.median(rates["old"]),
        "new_per_s": statistics.median(rates["new"]),
        "int8_per_s": statistics.median(rates["int8"]),
        # Each round's rates side by side: the numpy encoder's BLAS threads gain far more than the others
        # when the machine frees a core, so the ratio of one round says more than the medians' ratio.
        "rounds": [[rates[name][n] for name in ("old", "new", "int8")] for n in range(args["rounds"])],
        "min_cosine": min(cosines),
        "int8_min_cosine": min(int8_cosines),
        "int8_mean_cosine": statistics.fmean(int8_cosines),
        "first_load_s": loads["float"],
        "int8_first_load_s": loads["int8"],
    }


def _int8_ceiling(tokens: int, cores: int) -> float:
    """Chunks a second if the linear layers were all a chunk cost, at the int8 kernel's own best rate here.

    One chunk of `tokens` tokens through all-MiniLM-L6-v2's six layers is 6 x tokens x (4 x 384^2 +
    2 x 384 x 1536) multiply-adds in `DynamicQuantizeMatMul`; its rate is timed alone on one thread for
    the layers' three shapes, then counted for every core. Attention scores, softmax, GELU and layer
    norms cost more on top, so the whole encoder stays below this.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from fiskai_rag.embed._bert_model import import_onnxruntime

    runtime: Any = import_onnxruntime()
    seconds = 0.0
    for inner, outer, count in ((384, 384, 4), (384, 1536, 1), (1536, 384, 1)):
        weight = np.random.default_rng(0).integers(-127, 127, (inner, outer)).astype(np.int8)
        graph = helper.make_graph(
            [helper.make_node("DynamicQuantizeMatMul", ["x", "w", "s", "z"], ["y"], domain="com.microsoft")],
            "linear",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [tokens, inner])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [tokens, outer])],
            [
                numpy_helper.from_array(weight, "w"),
                numpy_helper.from_array(np.full(outer, 0.01, np.float32), "s"),
                numpy_helper.from_array(np.zeros(outer, np.int8), "z"),
            ],
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
        )
        model.ir_version = 8
        options = runtime.SessionOptions()
        options.intra_op_num_threads = 1
        session = runtime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        x = np.random.default_rng(1).standard_normal((tokens, inner)).astype(np.float32)
        runs: list[float] = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(40):
                session.run(None, {"x": x})
            runs.append((time.perf_counter() - start) / 40)
        seconds += 6 * count * min(runs)  # the best of five: a ceiling, not a typical pass
    return cores / seconds


OPS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "encoders": encoders,
    "raw-insert": raw_insert,
    "index": index,
    "search": search,
    "hybrid": hybrid,
    "semantic": semantic,
}

if __name__ == "__main__":
    op, payload = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps(OPS[op](payload)))
