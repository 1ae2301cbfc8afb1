"""Pooled judging of a question set: what several systems return, judged blind, added to its answers.

A question set with one answer string per question misses every hit that states the fact in other words,
so its "answer in the top 5" understates what a reader gets. This pools the top hits of several
systems for every question (plain FTS5 BM25 over the store's chunks, fiskai lexical search and, given
an embedder, fiskai hybrid search), identical texts once, shuffled, with no system named, for readers
to judge; `merge` then keeps a passage that every reader judged answering, adds its quote to the
question's `answers`, and lists as `expected` every document with a chunk holding any answer.

Run (the influxdata halves, as in issue 16's seventh session):
    uv run python bench/knowledge_pool.py pool packages/fiskai-rag/evals/influxdata-{tuning,heldout}.yaml \
        --store STORE --bm25-db RAW.db [--hybrid-store STORE2 --embeddings-url URL --embeddings-model NAME] -o pool.json
    (each reader writes [{"pid", "answers": bool, "quote": str | null}] for every passage of pool.json)
    uv run python bench/knowledge_pool.py merge pool.json A.json B.json --store STORE \
        --suite packages/fiskai-rag/evals/influxdata-tuning.yaml -o influxdata-tuning-pooled.yaml --header H.txt
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path
from typing import Any

import apsw
import yaml

from fiskai_rag import open_store
from fiskai_rag.embed import OpenAICompatibleEmbedder
from fiskai_rag.search._query import fts_query

TOP = 5


def _read_json(path: str) -> Any:
    """A JSON file, gzip-compressed when its name ends in `.gz` (as the judgments are kept in the repo)."""
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _pool(args: argparse.Namespace) -> int:
    lexical = open_store(args.store, read_only=True)
    hybrid = None
    if args.hybrid_store:
        embedder = OpenAICompatibleEmbedder(base_url=args.embeddings_url, model=args.embeddings_model, timeout=300)
        hybrid = open_store(args.hybrid_store, read_only=True, embedder=embedder)
    # Plain BM25, one FTS5 query and no re-ranking: over bench/knowledge_ops.py raw-insert's table (the
    # product's chunker, text without the breadcrumb; the recorded pool used it), or the store's chunks.
    if args.bm25_db:
        bm25: Any = apsw.Connection(args.bm25_db, flags=apsw.SQLITE_OPEN_READONLY)
        bm25_sql = "SELECT citation, heading_path, content FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?"
    else:
        bm25 = lexical._require_db()
        bm25_sql = (
            "SELECT d.cite, f.heading_path, f.content FROM chunks_fts f JOIN chunks c ON c.id = f.rowid "
            "JOIN documents d ON d.id = c.document_id WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?"
        )
    rng = random.Random(7)
    out: list[dict[str, Any]] = []
    for suite in args.suites:
        for question in yaml.safe_load(Path(suite).read_text(encoding="utf-8"))["queries"]:
            passages: dict[str, dict[str, str]] = {}

            def add(path: str, heading: str, text: str, passages: dict[str, dict[str, str]] = passages) -> None:
                passages.setdefault(text.strip(), {"path": path, "heading": heading, "text": text})

            for hit in lexical.search(question["query"], top_k=TOP).hits:
                add(hit.path, hit.heading_path, hit.content)
            if hybrid is not None:
                found = hybrid.search(question["query"], top_k=TOP)
                if "hybrid" not in found.tier:
                    sys.exit(f"hybrid search degraded: {found.tier}")
                for hit in found.hits:
                    add(hit.path, hit.heading_path, hit.content)
            for cite, heading, content in bm25.execute(bm25_sql, (fts_query(question["query"]), TOP)):
                add(str(cite).split("#")[0], str(heading), str(content))
            shuffled = list(passages.values())
            rng.shuffle(shuffled)
            for index, passage in enumerate(shuffled):
                passage["pid"] = f"{question['id']}-p{index}"
            out.append(
                {
                    "id": question["id"],
                    "question": question["query"],
                    "reference_answers": question["answers"],
                    "passages": shuffled,
                }
            )
    Path(args.output).write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"{len(out)} questions, {sum(len(q['passages']) for q in out)} passages -> {args.output}")
    return 0


def _merge(args: argparse.Namespace) -> int:
    pool = {q["id"]: q for q in _read_json(args.pool)}
    passages = {p["pid"]: (q["id"], p) for q in pool.values() for p in q["passages"]}
    readers = [{v["pid"]: v for v in _read_json(path)} for path in args.verdicts]
    for reader, path in zip(readers, args.verdicts, strict=True):
        if set(reader) != set(passages):
            sys.exit(f"{path}: does not judge every passage of {args.pool}")
        for pid, verdict in reader.items():
            if verdict["answers"] and verdict["quote"] not in passages[pid][1]["text"]:
                sys.exit(f"{path}: the quote of {pid} is not in its passage")
    agree = sum(len({r[pid]["answers"] for r in readers}) == 1 for pid in passages)
    print(f"readers agree on {agree} of {len(passages)} passages")
    added: dict[str, list[str]] = {}
    for pid, (qid, passage) in passages.items():
        if all(r[pid]["answers"] for r in readers) and not any(
            a in passage["text"] for a in pool[qid]["reference_answers"]
        ):
            added.setdefault(qid, []).append(max((r[pid]["quote"] for r in readers), key=len))
    store = open_store(args.store, read_only=True)
    db: Any = store._require_db()
    sql = "SELECT d.cite, f.content FROM chunks_fts f JOIN chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id"
    chunks = [(str(cite), str(content).casefold()) for cite, content in db.execute(sql)]
    source = yaml.safe_load(Path(args.suite).read_text(encoding="utf-8"))
    queries: list[dict[str, Any]] = []
    for question in source["queries"]:
        answers = list(question["answers"])
        answers += [quote for quote in dict.fromkeys(added.get(question["id"], [])) if quote not in answers]
        folded = [answer.casefold() for answer in answers]
        expected = sorted({cite for cite, text in chunks if any(answer in text for answer in folded)})
        queries.append({**question, "answers": answers, "expected": expected})
    header = Path(args.header).read_text(encoding="utf-8") if args.header else ""
    body = yaml.safe_dump(
        {"corpus": source["corpus"], "queries": queries}, sort_keys=False, allow_unicode=True, width=1000
    )
    Path(args.output).write_text(header + body, encoding="utf-8")
    gained = sum(len(q["answers"]) > len(s["answers"]) for q, s in zip(queries, source["queries"], strict=True))
    print(f"{gained} of {len(queries)} questions gained answers -> {args.output}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="step", required=True)
    pool = sub.add_parser("pool", help="pool the systems' top hits for blind judging")
    pool.add_argument("suites", nargs="+")
    pool.add_argument("--store", required=True, help="a lexical store of the suites' corpus")
    pool.add_argument("--bm25-db", help="a raw FTS5 table from bench/knowledge_ops.py raw-insert for plain BM25")
    pool.add_argument("--hybrid-store", help="a store with vectors, searched with the embedder below")
    pool.add_argument("--embeddings-url")
    pool.add_argument("--embeddings-model")
    pool.add_argument("-o", "--output", required=True)
    merge = sub.add_parser("merge", help="add what every reader judged answering to a suite")
    merge.add_argument("pool")
    merge.add_argument("verdicts", nargs="+", help="each reader's verdicts (JSON)")
    merge.add_argument("--store", required=True, help="the store whose chunks decide `expected`")
    merge.add_argument("--suite", required=True)
    merge.add_argument("--header", help="a file of comment lines to put first")
    merge.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    return _pool(args) if args.step == "pool" else _merge(args)


if __name__ == "__main__":
    raise SystemExit(main())
