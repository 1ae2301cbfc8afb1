"""Where the answer of each missed question ranks, stage by stage: the miss analysis of issue 16.

For every question of a suite with `answers` whose answer is not in the top `--top` search hits, it finds
the chunks whose text carries an answer and prints the best one's rank after each of search's stages
(`fiskai_rag.search._stages`): plain BM25 over every match (the `candidates` stage keeps the best
`RESCORE_POOL`), after bursty words are weighed up and after proximity re-scoring (both of the best
`RESCORE_POOL`), after the named version step, after the named documentation tree step (`_section`),
with an embedding model (`--model` or `--embeddings-url`, for a store indexed with it) the query's
nearest vectors alone (100 deep) and the fused ranking (`_fusion.fuse`), after copies are folded
(`_distinct`), after the per-document cap; then the query's content
words the answer chunk shares and lacks (the porter-free check is a prefix match of 5 letters, so it is a
guide, not FTS5's verdict), the same-section chunks of its page with their ranks, and the hits that were
returned instead. A miss with no shared content word is a vocabulary gap; one that ranks 6-50 was
outranked; one whose top hits answer in other words is a judging gap (read the hits).

Run against a store built from the suite's corpus (`fiskai knowledge eval SUITE --store DIR` builds one):

  uv run fiskai knowledge eval packages/fiskai-rag/evals/influxdata-tuning.yaml --store /tmp/influx
  uv run python bench/knowledge_misses.py packages/fiskai-rag/evals/influxdata-tuning.yaml /tmp/influx
  uv run python bench/knowledge_misses.py SUITE /tmp/influx-minilm --model all-MiniLM-L6-v2

Never run it on the held-out half (`influxdata-heldout.yaml`): its failures must stay unread.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Collection, Sequence
from pathlib import Path

import yaml

from fiskai_rag import Embedder, OpenAICompatibleEmbedder, StaticEmbedder, open_store
from fiskai_rag.search._burstiness import reweight
from fiskai_rag.search._distinct import distinct, per_document
from fiskai_rag.search._fusion import fuse, names_only
from fiskai_rag.search._knn import query_vector
from fiskai_rag.search._proximity import RESCORE_POOL, proximity
from fiskai_rag.search._query import fts_query, query_terms
from fiskai_rag.search._section import prefer_sections
from fiskai_rag.search._topk import lexical
from fiskai_rag.search._version import prefer_versions
from fiskai_rag.store._db import Conn

_WORD = re.compile(r"[^\W_]+")
_PREFIX = 5


def _rank(ranked: Sequence[tuple[int, float]], wanted: Collection[int]) -> int | None:
    return next((n for n, (chunk_id, _) in enumerate(ranked, start=1) if chunk_id in wanted), None)


def _carriers(db: Conn, answers: Sequence[str]) -> set[int]:
    found: set[int] = set()
    for answer in answers:
        sql = "SELECT rowid FROM chunks_fts WHERE instr(lower(content), lower(?)) > 0"
        found.update(int(row[0]) for row in db.execute(sql, (answer,)))
    return found


def _shared(terms: Collection[str], content: str) -> list[str]:
    words = {word.lower() for word in _WORD.findall(content)}
    return sorted(t for t in terms if t in words or any(w[:_PREFIX] == t[:_PREFIX] for w in words if len(t) >= _PREFIX))


def _chunk(db: Conn, chunk_id: int) -> tuple[str, int, str, str, int]:
    sql = (
        "SELECT d.cite, c.ordinal, f.heading_path, f.content, c.document_id FROM chunks c "
        "JOIN documents d ON d.id = c.document_id JOIN chunks_fts f ON f.rowid = c.id WHERE c.id = ?"
    )
    cite, ordinal, heading, content, document = db.execute(sql, (chunk_id,)).fetchall()[0]
    return str(cite), int(ordinal), str(heading), str(content), int(document)


_VECTOR_DEPTH = 100


def _report(store_dir: Path, suite: Path, top: int, show: int, embedder: Embedder | None) -> None:
    data = yaml.safe_load(suite.read_text(encoding="utf-8"))
    static = isinstance(embedder, StaticEmbedder) and not embedder.contextual
    with open_store(store_dir, read_only=True, embedder=embedder) as store:
        db = store._require_db()
        for question in data["queries"]:
            text, answers = str(question["query"]), [str(a) for a in question.get("answers") or ()]
            if not answers:
                continue
            hits = store.search(text, top_k=top).hits
            if any(a.casefold() in hit.content.casefold() for hit in hits for a in answers):
                continue
            carriers = _carriers(db, answers)
            match = fts_query(text)
            plain = lexical(db, match, 1_000_000)
            weighted = reweight(db, match, plain[:RESCORE_POOL])
            rescored = proximity(db, match, weighted)
            versioned = prefer_versions(db, text, rescored)
            sectioned = prefer_sections(db, text, versioned)
            fused = sectioned
            stages = (("bm25", plain), ("bursty", weighted), ("proximity", rescored), ("version", versioned))
            stages += (("section", sectioned),)
            manifest = store.manifest()
            wanted = embedder is not None and manifest is not None and (static or not names_only(text))
            blob = query_vector(embedder, manifest.dimension, text) if wanted and embedder and manifest else None
            if blob is not None:
                from fiskai_rag.search._knn import vec0_nearest
                from fiskai_rag.store._vec import load_vec

                load_vec(db)
                vectors = vec0_nearest(db, blob, _VECTOR_DEPTH)
                fused = fuse(sectioned, vectors, static=static)
                stages += (("vectors", vectors), ("fused", fused))
            folded = distinct(db, fused, 20).ranked
            capped = per_document(db, folded)
            stages += (("folded", folded), ("capped", capped))
            print(f"== {question['id']} [{question.get('kind', '')}] {text!r}")
            print("   ranks: " + "  ".join(f"{name} {_rank(ranked, carriers) or '-'}" for name, ranked in stages))
            terms = set(query_terms(text))
            for chunk_id in sorted(carriers, key=lambda c: _rank(plain, {c}) or 10**9)[:show]:
                cite, ordinal, heading, content, document = _chunk(db, chunk_id)
                shared = _shared(terms, content)
                print(f"   answer {cite}#{ordinal} (bm25 rank {_rank(plain, {chunk_id}) or '-'}) | {heading[:90]}")
                print(f"     shares {shared} lacks {sorted(terms - set(shared))}")
                section = "SELECT c.id FROM chunks c JOIN chunks_fts f ON f.rowid = c.id WHERE c.document_id = ? AND f.heading_path = ?"
                near = [int(r[0]) for r in db.execute(section, (document, heading)) if int(r[0]) != chunk_id]
                if near:
                    print(
                        "     same section: "
                        + ", ".join(f"#{_chunk(db, c)[1]} rank {_rank(rescored, {c}) or '-'}" for c in near)
                    )
            for n, hit in enumerate(hits, start=1):
                print(f"   hit {n}: {hit.citation} | {hit.heading_path[:90]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", type=Path, help="a question set with `answers` (YAML)")
    parser.add_argument("store", type=Path, help="a store built from the suite's corpus")
    parser.add_argument("--top", type=int, default=5, help="how many hits count (default 5)")
    parser.add_argument("--show", type=int, default=2, help="answer chunks listed per question (default 2)")
    parser.add_argument("--model", metavar="NAME|DIR", help="the in-process model the store was indexed with")
    parser.add_argument("--embeddings-url", metavar="URL", help="the embeddings server the store was indexed with")
    parser.add_argument("--embeddings-model", metavar="NAME", default="", help="the model to ask the server for")
    args = parser.parse_args(argv)
    if "heldout" in args.suite.name:
        parser.error("the held-out half is frozen: its failures must stay unread")
    embedder: Embedder | None = None
    if args.model:
        embedder = StaticEmbedder(args.model)
    elif args.embeddings_url:
        embedder = OpenAICompatibleEmbedder(base_url=args.embeddings_url, model=args.embeddings_model, timeout=300)
    _report(args.store, args.suite, args.top, args.show, embedder)


if __name__ == "__main__":
    main()
