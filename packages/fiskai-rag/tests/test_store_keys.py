"""One store, many folders: documents keyed by resolved absolute path, cited under their folder's name."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import cast

import pytest

from fiskai_rag import Citation, open_store
from fiskai_rag.doctor import diagnose
from fiskai_rag.errors import CitationError, StoreCorruptError
from fiskai_rag.store._db import Conn


def _folder(base: Path, name: str, text: str) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(f"# {name}\n\n{text}\n", encoding="utf-8")
    return folder


def test_indexing_dot_in_two_folders_keeps_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _folder(tmp_path, "alpha", "The zebra crossing is painted white.")
    second = _folder(tmp_path, "beta", "Yak shaving takes all afternoon.")
    store_dir = tmp_path / "state" / "knowledge"

    monkeypatch.chdir(first)
    with open_store(store_dir, read_only=False) as store:
        store.index(["."], reconcile=True)
    monkeypatch.chdir(second)
    with open_store(store_dir, read_only=False) as store:
        stats = store.index(["."], reconcile=True)

    assert (stats.added, stats.updated, stats.removed) == (1, 0, 0)
    with open_store(store_dir, read_only=True) as store:
        hits = store.search("zebra crossing").hits
        sources = store.sources()
        shown = store.show("alpha/README.md#0")
    assert [h.citation for h in hits] == ["alpha/README.md#0"]
    assert hits[0].file == str(first.resolve() / "README.md")
    assert [(s.path, s.file) for s in sources] == [
        ("alpha/README.md", str(first.resolve() / "README.md")),
        ("beta/README.md", str(second.resolve() / "README.md")),
    ]
    assert "zebra" in shown.content


def test_a_reconcile_prunes_only_under_the_roots_it_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = _folder(tmp_path, "alpha", "zebra")
    _folder(tmp_path, "beta", "yak")
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index(["alpha", "beta"])
        (first / "README.md").unlink()
        assert store.index(["beta"], reconcile=True).removed == 0
        assert store.index([str(first)], reconcile=True).removed == 1
        assert [s.path for s in store.sources()] == ["beta/README.md"]


def test_two_roots_with_one_name_get_distinct_citations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    one = _folder(tmp_path / "one", "docs", "zebra in one")
    two = _folder(tmp_path / "two", "docs", "zebra in two")
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index(["one/docs"])
        store.index(["two/docs"])
        cites = sorted(s.path for s in store.sources())
        # A folder inside an indexed one is cited under the outer folder, whichever was walked.
        (one / "guide").mkdir()
        (one / "guide" / "setup.md").write_text("# Setup\n\nzebra setup\n", encoding="utf-8")
        store.index(["one/docs/guide"])

        assert cites == [f"{two.resolve()}/README.md", "docs/README.md"]
        assert "docs/guide/setup.md" in [s.path for s in store.sources()]
        assert "in two" in store.show(f"{two.resolve()}/README.md#0").content
        assert "in one" in store.show("docs/README.md#0").content


def test_show_and_remove_accept_a_citation_path_an_absolute_path_or_one_relative_to_a_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _folder(tmp_path, "alpha", "zebra")
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index(["alpha"])
        absolute = store.show(Citation(str(folder / "README.md"), 0))
        relative = store.show("README.md#0", base=folder)
        assert absolute.citation == relative.citation == "alpha/README.md#0"
        assert store.remove("README.md", base=tmp_path) is False
        assert store.remove("README.md", base=folder) is True
        with pytest.raises(CitationError) as caught:
            store.show("alpha/README.md#0")
        assert caught.value.reason == "not_found"


def test_sources_report_when_a_file_was_indexed_not_its_mtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _folder(tmp_path, "alpha", "zebra")
    old = 978_307_200 * 10**9  # 2001-01-01
    os.utime(folder / "README.md", ns=(old, old))
    before = time.time_ns()
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index(["alpha"])
        (source,) = store.sources()

    assert source.mtime_ns == old
    assert source.indexed_ns is not None and source.indexed_ns >= before


def test_a_zero_byte_index_file_reads_as_not_built_and_a_writer_builds_it(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / "knowledge.db").write_bytes(b"")
    _folder(tmp_path, "alpha", "zebra")

    with open_store(store_dir, read_only=True) as reader:
        assert reader.search("zebra").status == "index_not_built"
        assert reader.sources() == []
    checks = {c.name: c for c in diagnose(store_dir)}
    assert not checks["Index readable"].ok and checks["Index readable"].fatal
    assert "0 bytes" in checks["Index readable"].detail
    with open_store(store_dir, read_only=False) as writer:
        assert writer.index([str(tmp_path / "alpha")]).added == 1
        assert [h.citation for h in writer.search("zebra").hits] == ["alpha/README.md#0"]


def test_a_foreign_database_is_refused_untouched_and_reported(tmp_path: Path) -> None:
    import apsw

    store_dir = tmp_path / "store"
    store_dir.mkdir()
    db_path = store_dir / "knowledge.db"
    foreign = cast(Conn, apsw.Connection(str(db_path)))
    foreign.execute("CREATE TABLE documents(x); CREATE TABLE invoices(total)")
    foreign.close()
    original = db_path.read_bytes()
    _folder(tmp_path, "alpha", "zebra")

    with pytest.raises(StoreCorruptError) as caught:
        open_store(store_dir, read_only=True)
    assert caught.value.foreign and "is not a fiskai knowledge index" in str(caught.value)
    with open_store(store_dir, read_only=False) as writer, pytest.raises(StoreCorruptError):
        writer.index([str(tmp_path / "alpha")])
    assert db_path.read_bytes() == original
    checks = {c.name: c for c in diagnose(store_dir)}
    assert not checks["Index readable"].ok and checks["Index readable"].fatal
