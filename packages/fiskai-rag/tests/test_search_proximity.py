"""Lexical search ranks a chunk that keeps the query's words together above one that scatters them."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_rag import Store, open_store
from fiskai_rag.search import _proximity
from fiskai_rag.search._proximity import ORDERED_WEIGHT, UNIGRAM_WEIGHT, WINDOW, WINDOW_WEIGHT, proximity, term_pairs
from fiskai_rag.search._query import fts_query
from fiskai_rag.search._topk import lexical

_FILLER = "The operator reads the notes before the change window opens and writes down what was seen."


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for n in range(6):  # pages without the query's words, so they are rare enough to carry weight
        (docs / f"other-{n}.md").write_text(f"# Other {n}\n\n{_FILLER}\n", encoding="utf-8")
    # Both pages hold "sparse" and "matrices" once. The scattered page is shorter, so plain BM25 puts it
    # first; only the other keeps the two words side by side.
    (docs / "a-scattered.md").write_text(
        f"# Notes\n\nA sparse index is kept. {_FILLER}\nThe matrices are stored apart.\n", encoding="utf-8"
    )
    (docs / "b-together.md").write_text(
        f"# Notes\n\nThe sparse matrices are stored apart. {_FILLER} It is kept in two files.\n", encoding="utf-8"
    )
    return docs


def test_adjacent_query_words_outrank_scattered_ones(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        hits = store.search("sparse matrices", top_k=2).hits
        db = store._require_db()
        match = fts_query("sparse matrices")
        plain = lexical(db, match)
        by_id = {hit.chunk_id: hit.path for hit in hits}

    assert by_id[plain[0][0]] == "docs/a-scattered.md"  # the precondition: BM25 alone prefers it
    assert [hit.path for hit in hits] == ["docs/b-together.md", "docs/a-scattered.md"]


def test_a_one_word_query_keeps_the_bm25_order(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        db = store._require_db()
        ranked = lexical(db, fts_query("sparse"))
        rescored = proximity(db, fts_query("sparse"), ranked)

    assert rescored == [(chunk_id, -score) for chunk_id, score in ranked]


def test_pairs_are_adjacent_distinct_terms_in_query_order() -> None:
    assert term_pairs('"disk" OR "index" OR "disk" OR "index" OR "tsi1"') == [
        ("disk", "index"),
        ("index", "disk"),
        ("index", "tsi1"),
    ]
    assert term_pairs('"cache" OR "cache"') == []
    assert term_pairs("") == []


def test_hostile_text_stays_plain_words_in_the_pair_queries(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        for hostile in ['say "sparse matrices', 'NEAR("sparse" matrices, 2)', "sparse* ^matrices", 'a"" OR "b']:
            result = store.search(hostile, top_k=3)
            assert result.status == "ok", hostile
        assert [hit.path for hit in store.search('NEAR("sparse" matrices, 2)', top_k=1).hits] == ["docs/b-together.md"]


def test_pair_scores_of_a_pool_are_the_whole_tables(tmp_path: Path) -> None:
    # The pair queries score only the re-scored pool; a chunk's pair scores must be what the same
    # queries give it over the whole table (bm25's statistics are the table's, not the pool's).
    docs = _corpus(tmp_path)
    query = "operator reads sparse matrices"
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        db = store._require_db()
        match = fts_query(query)
        ranked = lexical(db, match)
        pool = ranked[1:4]  # not the best: a pool the whole table extends on both sides
        rescored = dict(proximity(db, match, pool))

        def whole(fts: str) -> dict[int, float]:
            sql = "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?"
            return {int(rowid): -float(score) for rowid, score in db.execute(sql, (fts,))}

        pairs = term_pairs(match)
        ordered = whole(" OR ".join(f'"{a} {b}"' for a, b in pairs))
        window = whole(" OR ".join(f'NEAR("{a}" "{b}", {WINDOW - 2})' for a, b in pairs))

    assert len(pool) == 3 and len(ranked) > 4 and set(rescored) == {chunk_id for chunk_id, _ in pool}
    for chunk_id, score in pool:
        expected = (
            -UNIGRAM_WEIGHT * score
            + ORDERED_WEIGHT * ordered.get(chunk_id, 0.0)
            + WINDOW_WEIGHT / 2 * window.get(chunk_id, 0.0)
        )
        assert rescored[chunk_id] == expected
    assert any(chunk_id in ordered for chunk_id, _ in pool)  # the pool holds a chunk the pairs score


_QUESTIONS = (
    "how do I restart the broker after draining the node?",
    "backpressure alarm fires when producers wait on a full buffer",
    "upgrade one node at a time and read the release notes",
    "slowest consumer raising the buffer size delays the alarm",
    "what does the retention policy keep for old messages",
)


def _hits(store: Store, query: str) -> list[tuple[str, float, tuple[str, ...], int]]:
    return [(h.citation, h.score, h.also, h.also_total) for h in store.search(query, top_k=20).hits]


def test_pair_queries_on_a_second_connection_rank_exactly_as_on_the_pool(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # From its second search on, a store runs the pair queries of a longer question over the whole
    # table in its pair worker; the hits and their scores must be those of the pair queries run on the
    # pool afterwards, as the first search runs them.
    monkeypatch.setattr(_proximity, "WORKER_MIN_CHUNKS", 0)  # the worker serves only large stores otherwise
    monkeypatch.setattr(_proximity, "spare_core", lambda: True)  # and only while a core is free
    first = _hits(store, _QUESTIONS[0])
    assert store._sides.pairs.worker is None
    parallel = [_hits(store, q) for q in _QUESTIONS]
    assert parallel[0] == first
    worker = store._sides.pairs.worker
    assert worker is not None  # the worker path ran
    monkeypatch.setattr(_proximity, "WORKER_PAIRS", 10**9)
    assert [_hits(store, q) for q in _QUESTIONS] == parallel

    db = store._require_db()
    plain = {chunk_id: -UNIGRAM_WEIGHT * score for chunk_id, score in lexical(db, fts_query(_QUESTIONS[1]), 100)}
    hits = store.search(_QUESTIONS[1], top_k=20).hits
    assert any(hit.score != plain[hit.chunk_id] for hit in hits)  # the pairs moved a score: a real check
    store.close()
    assert not worker._thread.is_alive()


def test_a_small_store_keeps_its_pair_queries_on_its_own_connection(store: Store) -> None:
    for query in _QUESTIONS:
        assert store.search(query).status == "ok"
    assert store._sides.pairs.worker is None  # below WORKER_MIN_CHUNKS the handover costs more than it saves
