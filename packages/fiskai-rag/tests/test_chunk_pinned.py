"""Chunks and fingerprints pinned byte for byte, so speed work on the chunker or the indexer cannot move them.

A deliberate change of how documents are cut (one that bumps `CHUNKER_VERSION`) updates the digests
here in the same commit, printed by the failing assertion; anything else that moves one is a regression.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

from fiskai_rag import open_store
from fiskai_rag.index._chunk import chunk_markdown, chunk_text
from fiskai_rag.index._fingerprint import fingerprint
from fiskai_rag.index._page_name import page_name

PACK_CORPUS = Path(__file__).parent / "data" / "pack" / "corpus"
PACK_DIGEST = "2faa864e2e2da46f12f76dff3e84869d2812194ffe9b333c5c5b4c0d614e5425"
INFLUX_DIGEST = "4f0d08da9b9d24498c6b6da332945309d28c0ed0ae82954c7589f107475cf895"


def _chunked(root: Path) -> list[tuple[str, str, str, str, list[tuple[str, str, int | None]]]]:
    """Every document under `root` as the indexer cuts it (an untitled page headed by its name, as `_prepare` does):
    (path, title, date, breadcrumb root, [(heading, content, fingerprint)])."""
    out: list[tuple[str, str, str, str, list[tuple[str, str, int | None]]]] = []
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".md", ".txt")):
        text = path.read_text(encoding="utf-8")
        name = page_name(f"{root.name}/{path.relative_to(root).as_posix()}")
        doc = chunk_text(text) if path.suffix == ".txt" else chunk_markdown(text, name)
        chunks = [(c.heading_path, c.content, fingerprint(c.content, doc.root)) for c in doc.chunks]
        out.append((path.relative_to(root).as_posix(), doc.title, doc.date, doc.root, chunks))
    return out


def _digest(documents: list[tuple[str, str, str, str, list[tuple[str, str, int | None]]]]) -> str:
    return hashlib.sha256(json.dumps(documents, ensure_ascii=False).encode()).hexdigest()


def test_the_pack_corpus_chunks_and_fingerprints_are_pinned() -> None:
    documents = _chunked(PACK_CORPUS)

    assert sum(len(chunks) for *_, chunks in documents) == 17
    assert _digest(documents) == PACK_DIGEST


def test_influxdata_docs_chunks_and_fingerprints_are_pinned(shared_fixtures: Path) -> None:
    documents = _chunked(shared_fixtures / "corpus" / "influxdata-docs")

    assert (len(documents), sum(len(chunks) for *_, chunks in documents)) == (5028, 39420)
    assert _digest(documents) == INFLUX_DIGEST


def test_the_index_stores_each_chunk_with_its_ordinal_and_fingerprint(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(PACK_CORPUS, corpus)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(corpus)])
    db = sqlite3.connect(f"file:{tmp_path / 'store' / 'knowledge.db'}?mode=ro", uri=True)
    stored: dict[str, list[tuple[str, str, int | None]]] = {}
    for cite, ordinal, heading, content, printed in db.execute(
        "SELECT d.cite, c.ordinal, f.heading_path, f.content, c.fingerprint FROM chunks c "
        "JOIN documents d ON d.id = c.document_id JOIN chunks_fts f ON f.rowid = c.id ORDER BY d.cite, c.ordinal"
    ):
        chunks = stored.setdefault(str(cite).removeprefix("corpus/"), [])
        assert ordinal == len(chunks)
        chunks.append((heading, content, printed))
    indexes = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()

    assert stored == {path: chunks for path, *_, chunks in _chunked(corpus)}
    assert "chunks_by_fingerprint" in indexes  # a first build creates it once, after the chunks


def test_noise_is_left_out_only_of_a_chunk_that_holds_a_link_shortcode_or_comment() -> None:
    # The stored fingerprints depend on this quirk of the pattern: a `{(...)` or `<(...)` goes with
    # the noise of a chunk that has a link target, shortcode or comment, and stays in one that has none.
    assert fingerprint("see {(x) here") != fingerprint("see here")
    assert fingerprint("[l](/a/) see {(x) here") == fingerprint("[l](/b/) see here")
    assert fingerprint("Title > Section\n\nBody", "Title") == fingerprint("Section\n\nBody")
    assert fingerprint("Title\n\nBody", "Title") == fingerprint("Body")
