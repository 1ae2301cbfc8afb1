"""The pruned BM25 query returns exactly the plain query's best chunks, scores and order."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import cast

import apsw
import pytest

from fiskai_rag import open_store
from fiskai_rag.search._burstiness import word_counts
from fiskai_rag.search._query import fts_query, match_terms
from fiskai_rag.search._topk import (
    MAX_PHRASES,
    PRUNE_MIN_CHUNKS,
    _bounds,
    _reaching,
    _row_count,
    lexical,
    pruned_top,
    seeded_top,
)
from fiskai_rag.store._db import Conn


def test_the_threshold_query_covers_every_way_to_reach_the_floor() -> None:
    assert _reaching({"a": 5.0, "b": 3.0, "c": 1.0}, 4.0) == ('("a" OR ("b" AND "c"))', 3)
    assert _reaching({"a": 5.0, "b": 3.0}, 9.0) is None  # no chunk reaches it
    assert _reaching({"a": 5.0, "b": 3.0}, 0.0) is None  # every chunk does


def test_the_threshold_query_stops_at_its_cap_instead_of_growing_with_every_way_to_reach_the_floor() -> None:
    # 22 words of like bounds, a floor of half their sum: about a million word uses written out in full.
    bounds = {f"w{i:02d}": 1.0 + i / 1000 for i in range(22)}
    assert _reaching(bounds, 11.0) is None
    fewer = {f"w{i:02d}": 1.0 + i / 1000 for i in range(6)}
    found = _reaching(fewer, 3.0)
    assert found is not None and found[1] <= MAX_PHRASES


def test_every_threshold_query_it_writes_parses_in_fts5() -> None:
    # A floor that only a chunk holding nearly every word reaches nests one AND per word; FTS5's parser
    # stack overflowed at about 33 and failed the whole search.
    db = cast(Conn, apsw.Connection(":memory:"))
    db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(content)")
    written = 0
    for words in range(2, 41):
        found = _reaching({f"w{i:02d}": 1.0 for i in range(words)}, words - 0.5)
        if found is not None:
            written += 1
            db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (found[0],)).fetchall()
    assert written >= 20  # the short chains are still written
    assert _reaching({f"w{i:02d}": 1.0 for i in range(40)}, 39.5) is None


def test_the_pruned_query_returns_the_plain_querys_rows(
    tmp_path: Path, pack_corpus: Path, pack_words: list[str]
) -> None:
    corpus = pack_corpus
    words = [word for word in pack_words if len(word) >= 4]
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


def test_the_seeded_query_returns_the_plain_querys_rows(
    tmp_path: Path, pack_corpus: Path, pack_words: list[str]
) -> None:
    corpus = pack_corpus
    words = [word for word in pack_words if len(word) >= 4]
    rng = random.Random(5)  # longer queries than above: the seed takes the rarest words, the rest stay out
    queries = [" ".join(rng.choices(words, k=rng.randint(3, 10))) for _ in range(150)]
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(corpus)])
        db = store._require_db()
        seeded = 0
        with db:
            rows = _row_count(db)
            for query in queries:
                match = fts_query(query)
                bounds = _bounds(db, match_terms(match), rows)
                for limit in (1, 2, 3, 5):
                    got = seeded_top(db, match, limit, bounds)
                    if got is not None:
                        seeded += 1
                        assert got == lexical(db, match, limit), (query, limit)
    assert seeded > 100  # the seeded path ran, not only its refusals


def _questions(db: Conn, count: int) -> list[str]:
    """Questions of 6 to 10 consecutive words from the store's own chunks, as bench/knowledge.py builds them."""
    total = int(db.execute("SELECT max(rowid) FROM chunks_fts").fetchall()[0][0])
    rng = random.Random(11)
    questions: list[str] = []
    while len(questions) < count:
        rows = db.execute("SELECT content FROM chunks_fts WHERE rowid = ?", (rng.randint(1, total),)).fetchall()
        words = re.findall(r"[A-Za-z]{4,}", str(rows[0][0])) if rows else []
        if len(words) >= 12:
            start = rng.randrange(len(words) - 10)
            questions.append("how do I " + " ".join(words[start : start + rng.randint(6, 10)]).lower() + "?")
    return questions


def test_a_large_real_store_searches_the_same_pruned_as_plain(
    shared_fixtures: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # influxdata-docs (about 39k chunks) is above PRUNE_MIN_CHUNKS: its searches take the seeded and the
    # common-word pruning. Each must give the plain query's rows, and whole searches the same hits.
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(shared_fixtures / "corpus" / "influxdata-docs")])
    with open_store(tmp_path / "store", read_only=True) as reader:
        db = reader._require_db()
        with db:
            questions = _questions(db, 40)
            rows = _row_count(db)
            assert rows >= PRUNE_MIN_CHUNKS
            seeded = pruned = 0
            for question in questions:
                match = fts_query(question)
                bounds = _bounds(db, match_terms(match), rows)
                for limit in (100, 20, 5):
                    plain = lexical(db, match, limit)
                    got = seeded_top(db, match, limit, bounds)
                    seeded += got is not None
                    assert got is None or got == plain, (question, limit)
                    got = pruned_top(db, match, limit)
                    pruned += got is not None
                    assert got is None or got == plain, (question, limit)
        assert seeded > 60 and pruned > 60
        fast = [[(h.citation, h.score, h.also) for h in reader.search(q, top_k=10).hits] for q in questions]
        monkeypatch.setattr(
            "fiskai_rag.search._stages.PRUNE_MIN_CHUNKS", rows + 1
        )  # the plain BM25 query for every search
        slow = [[(h.citation, h.score, h.also) for h in reader.search(q, top_k=10).hits] for q in questions]
    assert fast == slow
    assert all(fast)


def test_document_frequencies_stay_exact_after_a_reindex_deletes_chunks(
    tmp_path: Path, pack_corpus: Path, pack_words: list[str]
) -> None:
    # The bound reads document frequencies from fts5vocab (`word_counts`); FTS5's bm25() counts matching
    # rows. Deleted chunks (an edited file re-indexed) must count in neither.
    corpus = pack_corpus
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(corpus)])
        runbook = corpus / "ops" / "runbook.md"
        runbook.write_text("# Operations runbook\n\nOnly the broker restart remains.\n", encoding="utf-8")
        (corpus / "design" / "retention.md").unlink()
        store.index([str(corpus)], reconcile=True)
    with open_store(tmp_path / "store", read_only=True) as reader:
        db = reader._require_db()
        words = [word for word in pack_words if len(word) >= 4]
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
