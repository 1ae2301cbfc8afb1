"""The vector side of hybrid search: the in-memory matrix gives sqlite-vec's exact neighbours, stays fresh,
and a query without a vector stays lexical."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import apsw
import pytest

from fiskai_rag import StaticEmbedder, open_store
from fiskai_rag.search._knn import VectorMatrix, load_matrix, vec0_nearest
from fiskai_rag.store._db import Conn
from fiskai_rag.store._vec import load_vec, normalise, pack, vec_available
from fiskai_rag.testing import FakeEmbedder, build_static_model

np = pytest.importorskip("numpy", reason="the semantic extra (numpy) is not installed")
pytestmark = pytest.mark.skipif(not vec_available(), reason="sqlite-vec (the vector extra) is not installed")


@pytest.fixture
def vec_db(tmp_path: Path) -> Iterator[Conn]:
    """A vec0 table of 600 unit vectors: random ones, exact copies and zero vectors (text without tokens)."""
    db = cast(Conn, apsw.Connection(str(tmp_path / "v.db")))
    load_vec(db)
    db.execute("CREATE TABLE chunks(id INTEGER PRIMARY KEY)")
    db.execute("CREATE VIRTUAL TABLE chunks_vec USING vec0(chunk_id INTEGER PRIMARY KEY, embedding FLOAT[16])")
    rng = random.Random(5)
    vectors = [normalise([rng.gauss(0, 1) for _ in range(16)]) for _ in range(500)]
    vectors += [vectors[7]] * 60 + [[0.0] * 16] * 40
    with db:
        for chunk_id, vector in enumerate(vectors, start=1):
            db.execute("INSERT INTO chunks(id) VALUES (?)", (chunk_id,))
            db.execute("INSERT INTO chunks_vec(chunk_id, embedding) VALUES (?, ?)", (chunk_id, pack(vector)))
    yield db
    db.close()


def test_the_matrix_finds_sqlite_vecs_nearest_neighbours(vec_db: Conn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fiskai_rag.search._knn.MATRIX_MIN_VECTORS", 1)
    matrix = load_matrix(vec_db, 16)
    assert isinstance(matrix, VectorMatrix) and len(matrix) == 600
    rng = random.Random(9)
    queries = [pack(normalise([rng.gauss(0, 1) for _ in range(16)])) for _ in range(30)]
    queries.append(pack(normalise([v + 1e-3 for v in np.frombuffer(queries[0], dtype=np.float32).tolist()])))
    for blob in queries:
        ours = matrix.nearest(blob, 50)
        theirs = vec0_nearest(vec_db, blob, 50)
        assert [d for _, d in ours] == pytest.approx([d for _, d in theirs], abs=1e-5)
        cut = theirs[-1][1]
        # The same neighbours, but for which of several equally distant copies fills the last places.
        assert {c for c, d in ours if d < cut - 1e-5} == {c for c, d in theirs if d < cut - 1e-5}
    copies = matrix.nearest(pack(normalise(np.frombuffer(queries[0], dtype=np.float32).tolist())), 600)
    assert len(copies) == 600 and [c for c, _ in copies] != sorted(c for c, _ in copies)


def test_equal_distances_are_ordered_by_chunk_id(vec_db: Conn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fiskai_rag.search._knn.MATRIX_MIN_VECTORS", 1)
    matrix = load_matrix(vec_db, 16)
    assert matrix is not None
    row = vec_db.execute("SELECT embedding FROM chunks_vec WHERE chunk_id = 8").fetchall()[0][0]
    nearest = matrix.nearest(cast(bytes, row), 10)  # chunk 8 and its 60 exact copies (501-560) tie at 0
    assert [c for c, _ in nearest] == [8, 501, 502, 503, 504, 505, 506, 507, 508, 509]


def test_a_small_store_keeps_sqlite_vec_unless_numpy_is_already_imported(
    vec_db: Conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    matrix = load_matrix(vec_db, 16)  # 600 < MATRIX_MIN_VECTORS, but this process has numpy
    assert isinstance(matrix, VectorMatrix) and len(matrix) == 600
    monkeypatch.delitem(sys.modules, "numpy")  # a process without it: the matrix is not worth the import
    assert load_matrix(vec_db, 16) is None
    assert "numpy" not in sys.modules


def _corpus(root: Path, count: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    words = ["backup", "restore", "retention", "shard", "token", "bucket", "query", "series", "field", "tag"]
    rng = random.Random(3)
    for n in range(count):
        body = " ".join(rng.choice(words) for _ in range(12))
        (root / f"page{n:03}.md").write_text(f"# Page {n}\n\n{body} page{n}.\n", encoding="utf-8")
    return root


def _hits(store_dir: Path, query: str) -> list[str]:
    with open_store(store_dir, read_only=True, embedder=FakeEmbedder()) as one_shot:
        return [str(hit.citation) for hit in one_shot.search(query, top_k=10).hits]


def test_a_long_lived_reader_ranks_from_the_matrix_and_drops_it_when_the_index_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fiskai_rag.search._knn.MATRIX_MIN_VECTORS", 1)
    docs = _corpus(tmp_path / "docs", 60)
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index([docs])
    query = "retention of shard backup"
    expected = _hits(store_dir, query)  # one search in its own store: sqlite-vec's KNN
    reader = open_store(store_dir, read_only=True, embedder=FakeEmbedder())
    try:
        reader.search(query, top_k=10)
        reader.search(query, top_k=10)  # the second search of an unchanged store starts the load
        loader = reader._sides.vectors.loader
        assert loader is not None
        loader.join(timeout=60)
        assert reader._sides.vectors.matrix is not None
        assert [str(hit.citation) for hit in reader.search(query, top_k=10).hits] == expected

        (docs / "page999.md").write_text("# Retention\n\nretention of shard backup, the whole answer.\n")
        with open_store(store_dir, read_only=False, embedder=FakeEmbedder()) as writer:
            writer.index([docs])
        fresh = [str(hit.citation) for hit in reader.search(query, top_k=10).hits]
        assert reader._sides.vectors.matrix is None
        assert fresh == _hits(store_dir, query) and "docs/page999.md#0" in fresh
        reader.search(query, top_k=10)  # the store is quiet again: the matrix is reloaded
        reloader = reader._sides.vectors.loader
        assert reloader is not None and reloader is not loader
        reloader.join(timeout=60)
        assert reader._sides.vectors.matrix is not None
        assert [str(hit.citation) for hit in reader.search(query, top_k=10).hits] == fresh
    finally:
        reader.close()


def test_a_query_without_a_known_token_stays_lexical(tmp_path: Path) -> None:
    """A zero query vector ties every chunk: fusing that arbitrary order would add unrelated hits."""
    model = build_static_model(tmp_path / "model", {"backup": [1.0, 0.0], "restore": [0.0, 1.0]})
    docs = _corpus(tmp_path / "docs", 12)
    (docs / "zeppelin.md").write_text("# Airships\n\nA zeppelin is a rigid airship.\n", encoding="utf-8")
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False, embedder=StaticEmbedder(str(model))) as writer:
        writer.index([docs])
    with open_store(store_dir, read_only=True, embedder=StaticEmbedder(str(model))) as hybrid:
        result = hybrid.search("zeppelin", top_k=5)
    assert result.tier.startswith("hybrid") and result.degraded is None
    assert [str(hit.citation) for hit in result.hits] == ["docs/zeppelin.md#0"]


def test_a_small_store_never_loads_numpy_for_the_matrix(tmp_path: Path) -> None:
    """Below MATRIX_MIN_VECTORS a long-lived reader keeps sqlite-vec and never imports numpy."""
    docs = _corpus(tmp_path / "docs", 20)
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index([docs])
    script = (
        "import sys\n"
        "from fiskai_rag import open_store\n"
        "from fiskai_rag.testing import FakeEmbedder\n"
        f"with open_store({str(store_dir)!r}, read_only=True, embedder=FakeEmbedder()) as store:\n"
        "    hits = [store.search('retention shard', top_k=5).hits for _ in range(3)]\n"
        "    store._sides.vectors.loader.join(60)\n"
        "    print(bool(hits[-1]), store._sides.vectors.matrix is None, 'numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.split() == ["True", "True", "False"]
