"""A store written before documents were keyed by absolute path (schema 1) keeps its documents.

`data/store-v1/knowledge.db` was written by the code of commit 3c68b41 (see `make_store.py` there):
the pack corpus indexed as `corpus` from the folder holding it, so its keys are `corpus/...`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import cast

import apsw
import pytest

from fiskai_rag import open_store
from fiskai_rag.store._db import Conn

DATA = Path(__file__).parent / "data"
MTIME_NS = 1_764_000_000_000_000_000  # what make_store.py gave every corpus file
OLD_CITATIONS = {
    "corpus/copies/backpressure-copy.md": 3,
    "corpus/design/backpressure.md": 3,
    "corpus/design/retention.md": 3,
    "corpus/glossary.md": 3,
    "corpus/notes/2026-11-23-standup.md": 1,
    "corpus/notes/2026-11-26-review.md": 1,
    "corpus/ops/runbook.md": 2,
    "corpus/ops/upgrade.md": 1,
}


def _old_store(base: Path) -> Path:
    store_dir = base / "store"
    store_dir.mkdir()
    shutil.copyfile(DATA / "store-v1" / "knowledge.db", store_dir / "knowledge.db")
    return store_dir


def _corpus(base: Path, *, keep_mtime: bool) -> Path:
    corpus = base / "corpus"
    shutil.copytree(DATA / "pack" / "corpus", corpus)
    if keep_mtime:
        for path in corpus.rglob("*.md"):
            os.utime(path, ns=(MTIME_NS, MTIME_NS))
    return corpus


def _keys(store_dir: Path) -> dict[str, str]:
    db = cast(Conn, apsw.Connection(str(store_dir / "knowledge.db"), flags=apsw.SQLITE_OPEN_READONLY))
    try:
        return {str(cite): str(path) for cite, path in db.execute("SELECT cite, path FROM documents")}
    finally:
        db.close()


def _schema_version(store_dir: Path) -> str:
    db = cast(Conn, apsw.Connection(str(store_dir / "knowledge.db"), flags=apsw.SQLITE_OPEN_READONLY))
    try:
        return str(db.execute("SELECT value FROM rag_meta WHERE key = 'schema_version'").fetchall()[0][0])
    finally:
        db.close()


def test_a_reader_searches_an_unmigrated_store(tmp_path: Path) -> None:
    store_dir = _old_store(tmp_path)
    with open_store(store_dir, read_only=True) as store:
        hits = store.search("buffer fills").hits
        shown = store.show("corpus/glossary.md#1")
        sources = store.sources()

    assert hits and all(h.citation.startswith("corpus/") for h in hits)
    assert shown.citation == "corpus/glossary.md#1"
    assert {s.path: s.chunks for s in sources} == OLD_CITATIONS
    assert all(s.indexed_ns is None for s in sources)  # schema 1 never recorded it


def test_the_writer_migrates_keys_it_can_locate_and_keeps_every_citation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_dir = _old_store(tmp_path)
    corpus = _corpus(tmp_path, keep_mtime=True)
    monkeypatch.chdir(tmp_path)  # where the old index ran: its relative keys resolve here
    with open_store(store_dir, read_only=False) as store:
        before = {s.path for s in store.sources()}
        stats = store.index([str(corpus)], reconcile=True)
        shown = store.show("corpus/glossary.md#1")

    assert before == set(OLD_CITATIONS)
    # The old store was chunked by an older chunker (no `chunker_version`): every file is re-chunked once,
    # under the citation path it already had.
    assert (stats.added, stats.updated, stats.removed, stats.skipped) == (0, 8, 0, 0)
    assert _schema_version(store_dir) == "2"
    keys = _keys(store_dir)
    assert set(keys) == set(OLD_CITATIONS)
    assert keys["corpus/glossary.md"] == str(corpus.resolve() / "glossary.md")
    assert shown.file == str(corpus.resolve() / "glossary.md")


def test_an_index_run_elsewhere_adopts_old_documents_by_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_dir = _old_store(tmp_path)
    corpus = _corpus(tmp_path / "moved", keep_mtime=False)  # other folder, other mtimes, same bytes
    (corpus / "glossary.md").write_text("# Glossary\n\nRewritten since the old index.\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with open_store(store_dir, read_only=False) as store:
        stats = store.index([str(corpus)], reconcile=True)
        cites = {s.path for s in store.sources()}

    # Seven files are the old documents (their citations kept); the rewritten glossary is not the
    # old one, so it is added beside it and the old row waits to be removed by hand. The seven are
    # re-chunked once (the old store predates the current chunker) under the citations they had.
    assert (stats.added, stats.updated, stats.removed) == (1, 7, 0)
    assert cites == set(OLD_CITATIONS) | {"corpus/glossary.md".replace("corpus/", f"{corpus.resolve()}/")}
    keys = _keys(store_dir)
    assert keys["corpus/ops/runbook.md"] == str(corpus.resolve() / "ops" / "runbook.md")
    assert keys["corpus/glossary.md"] == "corpus/glossary.md"
    assert stats.notes == [
        "1 document(s) from an older index were not found under the walked paths and keep their old key, e.g. "
        '"corpus/glossary.md": they stay searchable; remove them, or index their folder if their files still exist'
    ]
