"""Each word's bm25() read from one walk equals the float FTS5's own bm25() gives for the word alone."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import cast

import apsw
import pytest

from fiskai_rag import Store, open_store
from fiskai_rag.search._burstiness import reweight, word_counts
from fiskai_rag.search._query import fts_query
from fiskai_rag.search._topk import lexical
from fiskai_rag.search._word_parts import window_scores, word_scores
from fiskai_rag.store._db import Conn


def test_each_words_score_equals_its_own_bm25_query(tmp_path: Path, pack_corpus: Path, pack_words: list[str]) -> None:
    corpus = pack_corpus
    words = pack_words
    rng = random.Random(7)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(corpus)])
        db = store._require_db()
        ids = [int(row[0]) for row in db.execute("SELECT id FROM chunks ORDER BY id")]
        compared = 0
        with db:
            for _ in range(60):
                chosen = list(dict.fromkeys(rng.choices(words, k=rng.randint(1, 6))))
                pool = rng.sample(ids, rng.randint(1, len(ids)))
                frequencies = [df for df, _ in word_counts(db, chosen).values()]
                found = word_scores(db, chosen, frequencies, pool)
                assert found is not None
                expected: dict[int, list[float]] = {}
                for index, word in enumerate(chosen):
                    marks = ",".join("?" * len(pool))
                    sql = f"SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? AND +rowid IN ({marks})"
                    for rowid, score in db.execute(sql, (f'"{word}"', *pool)):
                        expected.setdefault(int(rowid), [0.0] * len(chosen))[index] = float(score)
                assert dict(found) == expected, chosen
                compared += sum(1 for _, parts in found for part in parts if part)
        assert compared > 200


def test_a_word_the_tokenizer_cuts_in_two_is_left_to_fts5(pack_writer: Store) -> None:
    db = pack_writer._require_db()
    with db:
        assert word_scores(db, ["broker", "max-age"], [1, 1], [1, 2]) is None


def _word_by_word(*_args: object) -> None:
    """`word_scores` declining, so `reweight` asks FTS5's bm25() one word at a time."""


def test_reweighting_from_one_walk_equals_reweighting_word_by_word(
    shared_fixtures: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(shared_fixtures / "ir" / "cisi" / "corpus")])
    with open_store(tmp_path / "store", read_only=True) as reader:
        db = reader._require_db()
        rng = random.Random(13)
        texts = [str(row[0]) for row in db.execute("SELECT content FROM chunks_fts ORDER BY rowid LIMIT 400")]
        queries: list[str] = []
        for text in texts[::10]:
            words = re.findall(r"[A-Za-z]{4,}", text)
            if len(words) >= 12:
                start = rng.randrange(len(words) - 10)
                queries.append(" ".join(words[start : start + rng.randint(5, 10)]))
        with db:
            pools = {query: lexical(db, fts_query(query), 100) for query in queries}
            fast = {query: reweight(db, fts_query(query), pool) for query, pool in pools.items()}
            monkeypatch.setattr("fiskai_rag.search._burstiness.word_scores", _word_by_word)
            slow = {query: reweight(db, fts_query(query), pool) for query, pool in pools.items()}
    assert len(queries) >= 30
    assert fast == slow
    assert sum(fast[query] != pools[query] for query in queries) >= 20  # the questions were re-weighted


def test_a_pool_without_the_words_scores_nothing(pack_writer: Store) -> None:
    db = pack_writer._require_db()
    with db:
        words = ["broker", "restart"]
        frequencies = [df for df, _ in word_counts(db, words).values()]
        holding = {
            int(row[0]) for row in db.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'broker OR restart'")
        }
        others = [int(row[0]) for row in db.execute("SELECT id FROM chunks") if int(row[0]) not in holding]
        assert holding and others
        assert word_scores(db, words, frequencies, others) == []
        near = 'NEAR("broker" "restart", 6)'
        assert window_scores(db, near, words, frequencies, others) == {}
        assert window_scores(db, near, words, frequencies, sorted(holding)) != {}


def test_an_index_tokenized_otherwise_is_left_to_fts5(tmp_path: Path) -> None:
    # The vocabulary's counts are looked up under porter stems: another tokenizer's terms could differ.
    db = cast(Conn, apsw.Connection(str(tmp_path / "other.db")))
    db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(content, heading_path, tokenize='unicode61')")
    with db:
        for n in range(10):
            db.execute("INSERT INTO chunks_fts(content, heading_path) VALUES (?, '')", (f"broker restarts {n}",))
        assert word_scores(db, ["broker", "restarts"], [10, 10], [1, 2]) is None
        assert window_scores(db, 'NEAR("broker" "restarts", 6)', ["broker", "restarts"], [10, 10], [1, 2]) is None
