"""Lexical search ranks a chunk that keeps the query's words together above one that scatters them."""

from __future__ import annotations

from pathlib import Path

from fiskai_rag import open_store
from fiskai_rag._proximity import proximity, term_pairs
from fiskai_rag._search import fts_query, lexical

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
