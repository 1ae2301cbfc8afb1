"""The pruned BM25 query returns exactly the plain query's best chunks, scores and order."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path
from typing import cast

import apsw

from fiskai_rag import open_store
from fiskai_rag._burstiness import word_counts
from fiskai_rag._db import Conn
from fiskai_rag._query import fts_query
from fiskai_rag._search import lexical
from fiskai_rag._topk import pruned_top

PACK_CORPUS = Path(__file__).parent / "data" / "pack" / "corpus"


def _words(corpus: Path) -> list[str]:
    text = " ".join(path.read_text(encoding="utf-8").lower() for path in sorted(corpus.rglob("*.md")))
    return sorted(set(re.findall(r"[a-z]{4,}", text)))


def test_the_pruned_query_returns_the_plain_querys_rows(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(PACK_CORPUS, corpus)
    words = _words(corpus)
    rng = random.Random(3)  # queries of the corpus's own words, common and rare mixed, some repeated
    queries = [" ".join(rng.choices(words, k=rng.randint(2, 7))) for _ in range(150)]
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(corpus)])
        db = store._require_db()
        pruned = 0
        for query in queries:
            match = fts_query(query)
            for limit in (1, 2, 3, 5, 8):
                with db:
                    plain, got = lexical(db, match, limit), pruned_top(db, match, limit)
                if got is not None:
                    pruned += 1
                    assert got == plain, (query, limit)
    assert pruned > 100  # the pruned path ran, not only the fallback


def test_document_frequencies_stay_exact_after_a_reindex_deletes_chunks(tmp_path: Path) -> None:
    # The bound reads document frequencies from fts5vocab (`word_counts`); FTS5's bm25() counts matching
    # rows. Deleted chunks (an edited file re-indexed) must count in neither.
    corpus = tmp_path / "corpus"
    shutil.copytree(PACK_CORPUS, corpus)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(corpus)])
        runbook = corpus / "ops" / "runbook.md"
        runbook.write_text("# Operations runbook\n\nOnly the broker restart remains.\n", encoding="utf-8")
        (corpus / "design" / "retention.md").unlink()
        store.index([str(corpus)], reconcile=True)
    with open_store(tmp_path / "store", read_only=True) as reader:
        db = reader._require_db()
        words = _words(PACK_CORPUS)
        with db:
            counts = word_counts(db, words)
            for word in words:
                count = db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{word}"',))
                assert counts[word][0] == count.fetchall()[0][0], word
        assert len(words) > 100
        assert db.execute("PRAGMA query_only").fetchall()[0][0] == 1  # the reader stays read-only


def test_an_index_tokenized_otherwise_is_not_pruned(tmp_path: Path) -> None:
    # Stems are taken with porter over unicode61; another tokenizer's terms could differ, so no bound.
    db = cast(Conn, apsw.Connection(str(tmp_path / "other.db")))
    db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(content, heading_path, tokenize='unicode61')")
    with db:
        for n in range(40):
            db.execute("INSERT INTO chunks_fts(content, heading_path) VALUES (?, '')", (f"broker restart {n}",))
    assert pruned_top(db, fts_query("broker restart"), 5) is None
