"""Posting lists held in memory rank exactly as FTS5's `bm25()` does, and a reader drops them on change."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import apsw
import pytest
import yaml

from fiskai_rag import Store, open_store
from fiskai_rag.search._burstiness import word_counts
from fiskai_rag.search._fts_records import averages, varints
from fiskai_rag.search._postings import Postings, load_postings, stems
from fiskai_rag.search._query import fts_query, match_terms
from fiskai_rag.search._topk import lexical
from fiskai_rag.search._word_parts import word_scores
from fiskai_rag.store._db import Conn, open_reader

EVALS = Path(__file__).resolve().parents[1] / "evals"

pytest.importorskip("numpy", reason="held postings need numpy (the semantic extra)")


def _loaded(store_dir: Path) -> tuple[Conn, Postings]:
    db = open_reader(store_dir / "knowledge.db")
    assert db is not None
    loader = open_reader(store_dir / "knowledge.db")
    assert loader is not None
    postings = load_postings(loader)
    loader.close()
    assert postings is not None
    return db, postings


def _ranked_equal(db: Conn, postings: Postings, queries: list[str], limits: tuple[int, ...]) -> int:
    compared = 0
    with db:
        for query in queries:
            match = fts_query(query)
            words = stems(db, match_terms(match))
            assert words is not None, query
            for limit in limits:
                assert postings.top(words, limit) == lexical(db, match, limit), (query, limit)
                compared += 1
    return compared


def test_sqlite_varints_decode_as_fts5_writes_them() -> None:
    assert varints(bytes([0x05, 0x81, 0x00, 0x7F])) == [5, 128, 127]
    assert varints(bytes([0xFF] * 8 + [0x01])) == [(2**56 - 1) << 8 | 1]  # the ninth byte keeps all 8 bits
    assert varints(bytes([0x81])) == []  # a truncated last varint is dropped


@pytest.fixture
def pack_postings(tmp_path: Path, pack_corpus: Path) -> Iterator[tuple[Conn, Postings]]:
    """The pack corpus indexed, a reader on it, and its postings loaded."""
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(pack_corpus)])
    db, postings = _loaded(tmp_path / "store")
    yield db, postings
    db.close()


def test_held_postings_rank_every_query_as_fts5_bm25_does(
    pack_postings: tuple[Conn, Postings], pack_words: list[str]
) -> None:
    db, postings = pack_postings
    words = [word for word in pack_words if len(word) >= 4]
    rng = random.Random(7)  # common and rare words mixed, some repeated (each use is a phrase of its own)
    queries = [" ".join(rng.choices(words, k=rng.randint(1, 9))) for _ in range(150)]
    queries += ["zzqx broker", "broker broker restart", "zzqx"]  # a word no chunk holds adds nothing
    assert _ranked_equal(db, postings, queries, (1, 2, 3, 5, 8, 100)) == 6 * len(queries)


def test_equal_scores_keep_fts5s_order_at_the_limit(tmp_path: Path) -> None:
    # Byte-identical chunks score the same; SQLite returns them by rowid, so the limit cuts at the same one.
    db = cast(Conn, apsw.Connection(str(tmp_path / "ties.db")))
    db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(content, heading_path, tokenize='porter unicode61')")
    with db:
        for n in range(30):
            text = "broker restart procedure" if n % 3 else f"broker restart {n} and a longer body of words here"
            db.execute("INSERT INTO chunks_fts(content, heading_path) VALUES (?, '')", (text,))
    postings = load_postings(cast(Conn, apsw.Connection(str(tmp_path / "ties.db"))))
    assert postings is not None
    for limit in (1, 4, 7, 19, 20, 21, 50):
        match = fts_query("restart the broker")
        words = stems(db, match_terms(match))
        assert words is not None
        assert postings.top(words, limit) == lexical(db, match, limit)


def test_held_word_parts_are_the_floats_word_scores_reads(
    pack_postings: tuple[Conn, Postings], pack_words: list[str]
) -> None:
    db, postings = pack_postings
    rng = random.Random(9)
    words = [word for word in pack_words if len(word) >= 4]
    with db:
        pool = [int(rowid) for (rowid,) in db.execute("SELECT rowid FROM chunks_fts")]
        for _ in range(40):
            chosen = list(dict.fromkeys(rng.choices(words, k=rng.randint(1, 5))))
            sample = rng.sample(pool, min(len(pool), 25))
            expected = word_scores(db, chosen, [df for df, _ in word_counts(db, chosen).values()], sample)
            held = stems(db, chosen)
            assert expected is not None and held is not None
            assert sorted(postings.parts(held, sample)) == sorted(expected)


def test_a_word_the_tokenizer_cuts_in_two_is_left_to_fts5(tmp_path: Path, pack_corpus: Path) -> None:
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(pack_corpus)])
        db = writer._require_db()
        assert stems(db, ["max-age"]) is None
        assert stems(db, ["Restarting"]) == ["restart"]


def test_an_index_tokenized_otherwise_is_not_held(tmp_path: Path) -> None:
    db = cast(Conn, apsw.Connection(str(tmp_path / "other.db")))
    db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(content, heading_path, tokenize='unicode61')")
    with db:
        db.execute("INSERT INTO chunks_fts(content, heading_path) VALUES ('broker restart', '')")
    assert load_postings(db) is None


def _hits(store: Store, queries: list[str]) -> list[list[tuple[str, float, tuple[str, ...]]]]:
    return [[(h.citation, h.score, h.also) for h in store.search(q, top_k=10).hits] for q in queries]


def test_a_reader_that_keeps_searching_holds_the_postings_and_drops_them_when_the_index_changes(
    tmp_path: Path, pack_corpus: Path, pack_words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fiskai_rag.search._postings.MIN_CHUNKS", 0)  # the pack corpus is small
    queries = ["broker restart", "retention policy for old segments", "how do I rotate the signing keys"]
    queries += [" ".join(random.Random(n).choices(pack_words, k=6)) for n in range(20)]
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(pack_corpus)])
        with open_store(tmp_path / "store", read_only=True) as reader:
            held = reader._sides.postings
            first = _hits(reader, queries)  # two quiet searches and more: the load starts
            held.wait(30)
            db = reader._require_db()
            with db:
                assert held.current(db, 10**6) is not None
            assert _hits(reader, queries) == first  # the same hits, scores and copies from memory

            # A writer commits: the next search must not use the old lists, and finds the new words.
            note = pack_corpus / "ops" / "zebra.md"
            note.write_text("# Zebra crossings\n\nThe quagga migration runs nightly.\n", encoding="utf-8")
            writer.index([str(pack_corpus)])
            with db:
                assert held.current(db, 10**6) is None
            found = reader.search("quagga migration", top_k=5).hits
            assert found and found[0].path.endswith("ops/zebra.md")
            for _ in range(3):
                reader.search("quagga migration", top_k=5)  # quiet again: reloaded
            held.wait(30)
            with db:
                assert held.current(db, 10**6) is not None
            assert [h.citation for h in reader.search("quagga migration", top_k=5).hits] == [h.citation for h in found]
    with open_store(tmp_path / "store", read_only=True) as once:
        once.search(queries[0])
        assert once._sides.postings._loader is None  # a one-shot search (the CLI) never pays for the load


def test_a_large_real_store_ranks_the_same_from_memory(shared_fixtures: Path, tmp_path: Path) -> None:
    # influxdata-docs (about 39k chunks, 1.5 million postings): the store holds these for its readers.
    # Its 88 judged questions, and each one's first two words as a keyword query.
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(shared_fixtures / "corpus" / "influxdata-docs")])
    db, postings = _loaded(tmp_path / "store")
    assert postings.entries > 1_000_000
    questions = [
        str(query["query"])
        for name in ("influxdata-tuning.yaml", "influxdata-heldout.yaml")
        for query in yaml.safe_load((EVALS / name).read_text(encoding="utf-8"))["queries"]
    ]
    questions += [" ".join(question.split()[:2]) for question in questions]
    assert _ranked_equal(db, postings, questions, (100, 20, 5)) == 3 * len(questions) == 528
    db.close()


def test_a_store_with_more_postings_than_the_budget_stays_with_fts5(
    tmp_path: Path, pack_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Held, every entry costs memory a reader keeps: past MAX_ENTRIES it keeps FTS5's queries instead.
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(pack_corpus)])
    loader = open_reader(tmp_path / "store" / "knowledge.db")
    assert loader is not None
    held = load_postings(loader)
    assert held is not None
    with loader:
        tokens = averages(loader)[1]
    # One entry over the budget, counted after the walk: refused. The pack corpus has 360 entries in 497
    # tokens, so that budget still passes the check on tokens.
    assert tokens <= 2 * (held.entries - 1)
    monkeypatch.setattr("fiskai_rag.search._postings.MAX_ENTRIES", held.entries - 1)
    assert load_postings(loader) is None
    # More than twice the budget in tokens: refused from the averages record, before any walk.
    monkeypatch.setattr("fiskai_rag.search._postings.MAX_ENTRIES", tokens // 2 - 1)
    assert load_postings(loader) is None
    monkeypatch.setattr("fiskai_rag.search._postings.MIN_CHUNKS", 0)
    with open_store(tmp_path / "store", read_only=True) as reader:
        first = [h.citation for h in reader.search("broker restart", top_k=5).hits]
        reader.search("broker restart", top_k=5)
        reader._sides.postings.wait(30)
        db = reader._require_db()
        with db:
            assert reader._sides.postings.current(db, 10**6) is None
        assert [h.citation for h in reader.search("broker restart", top_k=5).hits] == first != []
