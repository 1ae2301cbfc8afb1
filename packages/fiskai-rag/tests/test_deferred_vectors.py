"""Lexical first, vectors after: an index run may defer the vectors to a pass that can stop and resume."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import apsw
import pytest
from typing_extensions import override

from fiskai_rag import StaticEmbedder, open_store
from fiskai_rag.errors import ModelError
from fiskai_rag.store._db import Conn
from fiskai_rag.store._store import VECTORS_CATCHING_UP
from fiskai_rag.store._vec import load_vec, normalise
from fiskai_rag.testing import build_bert_model, write_toy_docs

pytest.importorskip("onnxruntime", reason="the semantic extra (onnxruntime) is not installed")
pytest.importorskip("sqlite_vec", reason="the semantic extra (sqlite-vec) is not installed")

WORDS = ["car", "automobile", "fuel", "apple", "orchard", "doctor", "the", "trip", "pick", "an", "from"]


def _docs(root: Path, count: int) -> Path:
    write_toy_docs(root)
    for n in range(count):  # enough chunks for several vector batches
        (root / f"note{n}.md").write_text(f"# Note {n}\n\nThe car {n} needs fuel.\n", encoding="utf-8")
    return root


def test_a_deferred_index_searches_lexically_with_a_note_until_the_vector_pass_ends(tmp_path: Path) -> None:
    model = build_bert_model(tmp_path / "bert", WORDS)
    docs = _docs(tmp_path / "docs", 150)
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False, embedder=StaticEmbedder(str(model))) as writer:
        stats = writer.index([docs], defer_vectors=True)
        assert stats.chunks == 153 and stats.embeddings == 0
        with open_store(store_dir, read_only=True, embedder=StaticEmbedder(str(model))) as reader:
            waiting = reader.search("orchard apple", top_k=3)
            assert VECTORS_CATCHING_UP in waiting.tier and waiting.hits[0].citation.startswith("docs/orchard.md")
            assert reader.vectors_waiting() == 153
        seen: list[tuple[int, int]] = []
        assert writer.embed_pending(lambda done, total: seen.append((done, total))) == 153
        assert seen[0] == (0, 153) and seen[-1] == (153, 153) and len(seen) == 4  # batches of 64
        assert writer.embed_pending() == 0  # nothing left: a second pass is free
    with open_store(store_dir, read_only=True, embedder=StaticEmbedder(str(model))) as reader:
        result = reader.search("zeppelin", top_k=3)  # no chunk has the word: only vectors can rank
        assert VECTORS_CATCHING_UP not in result.tier and result.tier.startswith("hybrid") and result.hits
        assert reader.vectors_waiting() == 0


def test_an_interrupted_vector_pass_keeps_its_batches_and_the_next_one_resumes(tmp_path: Path) -> None:
    model = build_bert_model(tmp_path / "bert", WORDS)
    docs = _docs(tmp_path / "docs", 150)
    calls: list[int] = []

    class Failing(StaticEmbedder):
        @override
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            calls.append(len(texts))
            if len(calls) == 3:  # the probe, one batch, then the model fails
                raise ModelError("the model went away")
            return super().embed(texts)

    with open_store(tmp_path / "store", read_only=False, embedder=Failing(str(model))) as writer:
        writer.index([docs], defer_vectors=True)
        with pytest.raises(ModelError, match="went away"):
            writer.embed_pending()
        assert writer.vectors_waiting() == 153 - 64
    with open_store(tmp_path / "store", read_only=False, embedder=StaticEmbedder(str(model))) as writer:
        assert writer.embed_pending() == 153 - 64
        assert writer.vectors_waiting() == 0


def test_an_edit_after_the_pass_marks_only_the_new_chunks(tmp_path: Path) -> None:
    model = build_bert_model(tmp_path / "bert", WORDS)
    docs = _docs(tmp_path / "docs", 3)
    with open_store(tmp_path / "store", read_only=False, embedder=StaticEmbedder(str(model))) as writer:
        writer.index([docs], defer_vectors=True)
        assert writer.embed_pending() == 6
        (docs / "note1.md").write_text(
            "# Note 1\n\nAn apple from the orchard.\n\n# More\n\nThe trip.\n", encoding="utf-8"
        )
        writer.index([docs], defer_vectors=True)
        assert writer.vectors_waiting() == 2
        assert writer.embed_pending() == 2


def test_a_chunk_repeated_word_for_word_takes_its_copys_vector_without_a_forward_pass(tmp_path: Path) -> None:
    model = build_bert_model(tmp_path / "bert", WORDS)
    docs = tmp_path / "docs"
    page = "# Trip\n\nPick an apple from the orchard.\n\n## Fuel\n\nThe car needs fuel for the trip.\n"
    for folder in ("v1", "v1-notes", "v2"):
        (docs / folder).mkdir(parents=True)
    (docs / "v1" / "trip.md").write_text(page, encoding="utf-8")
    for n in range(80):  # the copy lands in a later batch than its original (batches of 64, path order)
        (docs / "v1-notes" / f"note{n:02}.md").write_text(f"# Note {n}\n\nThe car {n} needs fuel.\n", encoding="utf-8")
    (docs / "v2" / "trip.md").write_text(page, encoding="utf-8")
    # Same fingerprint (a link target is left out of it) but another text: it needs its own pass.
    (docs / "v2" / "trip-linked.md").write_text(page.replace("orchard.", "[orchard](/o/)."), encoding="utf-8")
    sent: list[str] = []

    class Counting(StaticEmbedder):
        @override
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            sent.extend(texts)
            return super().embed(texts)

    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False, embedder=Counting(str(model))) as writer:
        writer.index([docs], defer_vectors=True)
        sent.clear()
        assert writer.embed_pending() == 86
        assert writer.vectors_waiting() == 0
    assert len(sent) == 83  # copied: v2/trip.md's two chunks and trip-linked.md's unchanged second one
    assert sum("[orchard](/o/)" in text for text in sent) == 1

    db = cast(Conn, apsw.Connection(str(store_dir / "knowledge.db")))
    load_vec(db)
    rows = db.execute(
        "SELECT d.path, c.ordinal, v.embedding FROM chunks c JOIN documents d ON d.id = c.document_id "
        "JOIN chunks_vec v ON v.chunk_id = c.id WHERE d.path LIKE '%trip%.md' ORDER BY d.path, c.ordinal"
    ).fetchall()
    db.close()
    vectors = {
        ("/".join(Path(str(path)).parts[-2:]), int(str(ordinal))): cast(bytes, blob) for path, ordinal, blob in rows
    }
    fresh = normalise(StaticEmbedder(str(model)).embed(["Trip\n\nPick an apple from the orchard."])[0])
    assert vectors[("v2/trip.md", 0)] == vectors[("v1/trip.md", 0)]
    # That vector is the text's own (a float model batched with others may differ in the last bits).
    stored = struct.unpack(f"{len(fresh)}f", vectors[("v1/trip.md", 0)])
    assert stored == pytest.approx(fresh, abs=1e-5)
    assert vectors[("v2/trip.md", 1)] == vectors[("v1/trip.md", 1)]
    assert vectors[("v2/trip-linked.md", 0)] != vectors[("v1/trip.md", 0)]
    assert vectors[("v2/trip-linked.md", 1)] == vectors[("v1/trip.md", 1)]
