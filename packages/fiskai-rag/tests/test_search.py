from __future__ import annotations

import math
from pathlib import Path
from typing import cast

import apsw
import pytest

from fiskai_rag import open_store
from fiskai_rag.search._fusion import rrf
from fiskai_rag.search._query import fts_query
from fiskai_rag.store._db import Conn
from fiskai_rag.store._vec import normalise


def test_terms_are_quoted_and_or_joined() -> None:
    assert fts_query("backpressure work queue") == '"backpressure" OR "work" OR "queue"'


def test_repeated_words_are_kept_so_bm25_weights_them() -> None:
    assert fts_query("titles of titles, Titles!") == '"titles" OR "titles" OR "titles"'


def test_terms_shorter_than_two_characters_are_dropped() -> None:
    assert fts_query("a bb ccc") == '"bb" OR "ccc"'


def test_function_words_are_dropped_when_other_terms_remain() -> None:
    assert fts_query("how does backpressure work") == '"backpressure" OR "work"'
    assert fts_query("how does it") == '"how" OR "does" OR "it"'


def test_at_most_forty_terms_are_kept() -> None:
    query = fts_query(" ".join(f"term{i}" for i in range(60)))

    assert query.count(" OR ") == 39


def test_text_without_searchable_terms_gives_an_empty_query() -> None:
    assert fts_query("? ! - a") == ""


@pytest.mark.parametrize(
    "hostile",
    [
        'say "hello',
        "NEAR(alpha beta, 2)",
        "content:secret",
        "alpha AND NOT beta",
        "prefix* ^start",
        "(unbalanced",
        "heading_path : x OR",
        "'; DROP TABLE chunks; --",
    ],
)
def test_user_text_is_never_fts5_syntax(hostile: str) -> None:
    db = cast(Conn, apsw.Connection(":memory:"))
    db.execute("CREATE VIRTUAL TABLE t USING fts5(content, heading_path, tokenize='porter unicode61')")
    db.execute(
        "INSERT INTO t VALUES ('near alpha beta and not prefix start content secret hello drop table unbalanced heading path', '')"
    )

    query = fts_query(hostile)

    rows = db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (query,)).fetchall()
    assert rows[0][0] == 1
    assert all(part.startswith('"') and part.endswith('"') for part in query.split(" OR "))


def test_rrf_adds_reciprocal_ranks_with_k_60() -> None:
    fused = dict(rrf([1, 2, 3], [3, 1]))

    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)


def test_rrf_ties_go_to_the_smaller_chunk_id() -> None:
    assert [chunk_id for chunk_id, _ in rrf([9, 4], [4, 9])] == [4, 9]


def test_normalise_gives_unit_length_and_leaves_zero_alone() -> None:
    assert math.fsum(x * x for x in normalise([3.0, 4.0])) == pytest.approx(1.0)
    assert normalise([0.0, 0.0]) == [0.0, 0.0]


def test_fuse_is_rrf_with_k_60_over_fifty_a_side_for_a_server_or_contextual_model() -> None:
    from fiskai_rag.search._fusion import RRF_K, SEARCH_FANOUT, fuse

    lexical = [(1, 30.0), (2, 10.5), (3, 10.0)]  # chunk 1 far ahead on the words: RRF keeps only ranks
    vectors = [(2, 0.6), (3, 0.61), (1, 0.62), (4, 1.2)]  # L2 distances of unit vectors
    fused = fuse(lexical, vectors, static=False)
    assert [c for c, _ in fused] == [2, 1, 3, 4]
    assert dict(fused)[2] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert dict(fused)[4] == pytest.approx(1 / (RRF_K + 4))
    # Only the best fifty of each side take part.
    many = [(chunk_id, 1000.0 - chunk_id) for chunk_id in range(100)]
    far = [(chunk_id, 0.01 * chunk_id) for chunk_id in range(200, 300)]
    ids = {c for c, _ in fuse(many, far, static=False)}
    assert len(ids) == 2 * SEARCH_FANOUT and 50 not in ids and 250 not in ids


def test_fuse_weights_a_static_models_vectors_down_to_tie_breaking() -> None:
    from fiskai_rag.search._fusion import RRF_K, STATIC_VECTOR_WEIGHT, fuse

    fused = fuse([(1, 3.0), (2, 2.0)], [(9, 0.1), (8, 0.2)], static=True)
    assert [c for c, _ in fused] == [1, 2, 9, 8]  # chunks only the vectors find come after every word match
    assert dict(fused)[9] == pytest.approx(STATIC_VECTOR_WEIGHT / (RRF_K + 1))


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("INFLUXDB_HTTP_BIND_ADDRESS", True),
        ("hinted-handoff max-age", True),
        ("chronograf --port", True),
        ("influx backup --compression", True),
        ("max-series-per-database default", True),
        ("TSDB", True),
        ("enable TSI index", False),  # capitals of three letters are a word, not a name
        ("telegraf agent interval", False),
        ("which port does the influxdb 1.x http api listen on out of the box?", False),  # a sentence
        ("how do I set max-age on hinted handoff", False),
    ],
)
def test_names_only_tells_a_few_names_from_a_sentence(query: str, names: bool) -> None:
    from fiskai_rag.search._fusion import names_only

    assert names_only(query) is names


def _three_docs(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for name, body in (("a", "alpha beta"), ("b", "gamma delta"), ("c", "epsilon zeta")):
        (docs / f"{name}.md").write_text(f"# {name}\n\n{body} words here.\n", encoding="utf-8")
    return docs


def test_a_pack_carries_what_only_the_vectors_found_and_keeps_to_its_limit(tmp_path: Path) -> None:
    from fiskai_rag.errors import EmbedderError
    from fiskai_rag.testing import FakeEmbedder

    docs = _three_docs(tmp_path)
    embedder = FakeEmbedder(dimension=16)
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        writer.index([str(docs)])
    with open_store(tmp_path / "store", read_only=True) as lexical:
        assert lexical.context("omega", budget=800).citations == ()  # no document has the word
    with open_store(tmp_path / "store", read_only=True, embedder=embedder) as hybrid:
        found = hybrid.context("omega", budget=800)
        one = hybrid.context("omega", budget=800, limit=1)
        embedder.fail = EmbedderError("connection refused")
        degraded = hybrid.context("alpha", budget=800)

    assert len(found.citations) == 3 and found.degraded is None
    assert one.citations == found.citations[:1]
    assert degraded.degraded == "connection refused"
    assert degraded.citations[0].endswith("a.md#0")
