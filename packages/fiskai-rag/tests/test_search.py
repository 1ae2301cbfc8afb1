from __future__ import annotations

import math
from typing import cast

import apsw
import pytest

from fiskai_rag._db import Conn
from fiskai_rag._search import fts_query, rrf
from fiskai_rag._vec import normalise


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
