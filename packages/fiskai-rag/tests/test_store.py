from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import cast

import pytest

from fiskai_rag import RagError, Remedy, open_store
from fiskai_rag.errors import CitationError, IndexNotBuiltError, ManifestMismatchError, StoreCorruptError
from fiskai_rag.index._walk import MAX_FILE_BYTES
from fiskai_rag.store._db import DB_NAME, Conn


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small docs tree; the cwd is tmp_path so document keys are `docs/...`."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "docs"
    (root / "guide").mkdir(parents=True)
    (root / "design.md").write_text(
        "# Design\n\n## Backpressure\n\nWhen the buffer fills, producers slow down.\n", encoding="utf-8"
    )
    (root / "guide" / "install.markdown").write_text("# Install\n\nRun the installer with sudo.\n", encoding="utf-8")
    (root / "notes.txt").write_text("Plain notes about quarterly budgets.\n", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG not indexed")
    (root / "script.py").write_text("# not indexed: wrong extension\n", encoding="utf-8")
    return root


def _index(store_dir: Path, *paths: str, reconcile: bool = True) -> tuple[int, int, int, int]:
    with open_store(store_dir, read_only=False) as store:
        stats = store.index(list(paths), reconcile=reconcile)
    return stats.added, stats.updated, stats.skipped, stats.removed


def test_index_then_search_cites_path_ordinal_and_heading(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    assert _index(store_dir, "docs") == (3, 0, 0, 0)

    with open_store(store_dir, read_only=True) as store:
        result = store.search("buffer fills")
        shown = store.show("docs/design.md#0")
        sources = [s.path for s in store.sources()]

    assert result.status == "ok"
    assert result.hits[0].citation == "docs/design.md#0"
    assert result.hits[0].heading_path == "Design > Backpressure"
    assert shown.content.startswith("Design > Backpressure\n\n")
    assert sources == ["docs/design.md", "docs/guide/install.markdown", "docs/notes.txt"]


def test_unchanged_files_are_skipped_and_changed_ones_rechunked(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    _index(store_dir, "docs")
    (docs / "notes.txt").write_text("Notes now mention the zebra migration.\n", encoding="utf-8")

    assert _index(store_dir, "docs") == (0, 1, 2, 0)
    with open_store(store_dir, read_only=True) as store:
        assert [h.citation for h in store.search("zebra").hits] == ["docs/notes.txt#0"]
        assert store.search("quarterly").hits == []


def test_a_touched_file_with_the_same_bytes_is_skipped_and_not_rehashed_next_time(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    _index(store_dir, "docs")
    target = docs / "design.md"
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 5_000_000_000))

    assert _index(store_dir, "docs") == (0, 0, 3, 0)
    with open_store(store_dir, read_only=True) as store:
        recorded = {s.path: s.mtime_ns for s in store.sources()}
    assert recorded["docs/design.md"] == target.stat().st_mtime_ns


def test_a_full_root_walk_reconciles_deletions_and_a_subpath_walk_stays_in_its_subpath(
    docs: Path, tmp_path: Path
) -> None:
    store_dir = tmp_path / "store"
    _index(store_dir, "docs")
    (docs / "notes.txt").unlink()
    (docs / "guide" / "install.markdown").unlink()
    (docs / "guide" / "upgrade.md").write_text("# Upgrade\n\nSteps.\n", encoding="utf-8")

    assert _index(store_dir, "docs/guide") == (1, 0, 0, 1)
    with open_store(store_dir, read_only=True) as store:
        assert "docs/notes.txt" in [s.path for s in store.sources()]  # outside the walked subpath
    assert _index(store_dir, "docs", reconcile=False)[3] == 0
    assert _index(store_dir, "docs")[3] == 1
    with open_store(store_dir, read_only=True) as store:
        assert [s.path for s in store.sources()] == ["docs/design.md", "docs/guide/upgrade.md"]


def test_memory_dot_dirs_and_the_store_itself_are_never_indexed(docs: Path, tmp_path: Path) -> None:
    (docs / "memory").mkdir()
    (docs / "memory" / "secret.md").write_text("# Secret\n\nprivate memory\n", encoding="utf-8")
    (docs / ".git").mkdir()
    (docs / ".git" / "HEAD.md").write_text("ref\n", encoding="utf-8")
    store_dir = docs / "store"
    store_dir.mkdir()
    (store_dir / "leftover.md").write_text("# Store\n\nnot a document\n", encoding="utf-8")

    _index(store_dir, "docs")

    with open_store(store_dir, read_only=True) as store:
        paths = [s.path for s in store.sources()]
    assert paths == ["docs/design.md", "docs/guide/install.markdown", "docs/notes.txt"]


def test_symlinks_never_lead_outside_the_root(docs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.md").write_text("# Leak\n\nconfidential\n", encoding="utf-8")
    (docs / "leak.md").symlink_to(outside / "leak.md")
    (docs / "linked-dir").symlink_to(outside, target_is_directory=True)
    (docs / "alias.md").symlink_to(docs / "design.md")

    with open_store(tmp_path / "store", read_only=False) as store:
        stats = store.index(["docs"])
        paths = [s.path for s in store.sources()]
        assert store.search("confidential").hits == []

    assert "docs/alias.md" in paths
    assert not any("leak" in p or "linked-dir" in p for p in paths)
    assert any("points outside" in note for note in stats.notes)


def test_oversized_and_non_utf8_files_are_skipped_with_a_note(docs: Path, tmp_path: Path) -> None:
    (docs / "big.md").write_text("x" * (MAX_FILE_BYTES + 1), encoding="utf-8")
    (docs / "latin1.md").write_bytes("caf\xe9 au lait".encode("latin-1"))

    with open_store(tmp_path / "store", read_only=False) as store:
        stats = store.index(["docs"])

    assert stats.added == 3
    real = os.path.realpath(docs)
    assert any(n.startswith(f'skipping oversized file "{real}/big.md"') for n in stats.notes)
    assert f'skipping non-UTF-8 file "{real}/latin1.md"' in stats.notes


def test_files_and_folders_whose_names_are_not_utf8_are_skipped_with_a_note(docs: Path, tmp_path: Path) -> None:
    # The OS hands such a name over with surrogate escapes, which SQLite refused for the whole batch.
    base = os.fsencode(docs)
    with open(base + b"/caf\xe9.md", "wb") as handle:
        handle.write(b"# Cafe\n\nespresso notes\n")
    os.mkdir(base + b"/dir\xff")
    with open(base + b"/dir\xff/inside.md", "wb") as handle:
        handle.write(b"# Inside\n\nristretto notes\n")

    with open_store(tmp_path / "store", read_only=False) as store:
        stats = store.index(["docs"])
        assert store.search("espresso").hits == []
        assert store.search("ristretto").hits == []

    assert stats.added == 3  # the fixture's own pages
    real = os.path.realpath(docs)
    assert f'skipping "{real}/caf\\xe9.md": its name is not valid UTF-8; rename it to index it' in stats.notes
    assert f'skipping "{real}/dir\\xff": its name is not valid UTF-8; rename it to index it' in stats.notes


def test_store_files_are_owner_only(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    _index(store_dir, "docs")

    assert stat.S_IMODE(store_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE((store_dir / DB_NAME).stat().st_mode) == 0o600


def test_soft_statuses_before_indexing_and_for_empty_queries(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=True) as reader:
        before = reader.search("anything")
        assert reader.sources() == []
        with pytest.raises(IndexNotBuiltError):
            reader.show("docs/design.md#0")
        _index(store_dir, "docs")
        after = reader.search("buffer")  # the same reader picks up the index once it exists
        empty = reader.search("a ? !")

    assert before.status == "index_not_built"
    assert before.note == "the knowledge index has not been built yet"
    assert after.status == "ok" and after.hits
    assert empty.status == "index_empty"


def test_top_k_is_capped_at_twenty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    many = tmp_path / "many"
    many.mkdir()
    for i in range(30):
        (many / f"doc{i:02}.md").write_text(f"# Doc {i}\n\nshared keyword number {i}\n", encoding="utf-8")
    _index(tmp_path / "store", "many")

    with open_store(tmp_path / "store", read_only=True) as store:
        assert len(store.search("shared keyword", top_k=100).hits) == 20
        assert len(store.search("shared keyword").hits) == 5
        assert len(store.search("shared keyword", top_k=0).hits) == 5


@pytest.mark.parametrize(
    ("citation", "fragment"),
    [
        ("docs/design.md", "is malformed; expected <path>#<ordinal>"),
        ("docs/design.md#x", "is malformed"),
        ("docs/design.md#99999999999999999999999", "is malformed"),  # was OverflowError
        ("docs/design.md#\u0663", "is malformed"),  # a non-ASCII digit
        ("#3", "is malformed"),
        ("docs/design.md#9", "no chunk found"),
    ],
)
def test_bad_citations_name_the_problem(docs: Path, tmp_path: Path, citation: str, fragment: str) -> None:
    _index(tmp_path / "store", "docs")

    with open_store(tmp_path / "store", read_only=True) as store, pytest.raises(CitationError) as caught:
        store.show(citation)

    assert fragment in str(caught.value)


def test_remove_and_reset_leave_a_clean_smaller_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(200):
        (corpus / f"d{i:03}.md").write_text(f"# D{i}\n\n" + f"lorem ipsum {i} " * 200, encoding="utf-8")
    store_dir = tmp_path / "store"
    _index(store_dir, "corpus")
    size_before = (store_dir / DB_NAME).stat().st_size

    with open_store(store_dir, read_only=False) as store:
        assert store.remove("corpus/d000.md") is True
        assert store.remove("corpus/d000.md") is False
        assert store.reset() == (199, 199 * 3)  # about 3 KB each: three chunks per file
        after = store.stats()
        assert store.search("lorem").status == "index_empty"

    assert (after.documents, after.chunks) == (0, 0)
    assert (store_dir / DB_NAME).stat().st_size < size_before / 4
    assert _index(store_dir, "corpus")[0] == 200


def test_a_corrupted_index_is_reported_and_reset_repairs_it(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    _index(store_dir, "docs")
    db = store_dir / DB_NAME
    for sidecar in (store_dir / f"{DB_NAME}-wal", store_dir / f"{DB_NAME}-shm"):
        sidecar.unlink(missing_ok=True)
    db.write_bytes(b"this is not sqlite at all " * 400)

    with pytest.raises(StoreCorruptError) as caught:
        open_store(store_dir, read_only=True)
    assert caught.value.remedy is Remedy.RESET and "is damaged" in str(caught.value)
    with open_store(store_dir, read_only=False) as writer:
        with pytest.raises(StoreCorruptError):
            writer.index(["docs"])
        writer.reset()
        assert writer.index(["docs"]).added == 3


def test_a_newer_index_format_is_refused(docs: Path, tmp_path: Path) -> None:
    import apsw

    store_dir = tmp_path / "store"
    _index(store_dir, "docs")
    db = cast(Conn, apsw.Connection(str(store_dir / DB_NAME)))
    db.execute("UPDATE rag_meta SET value = '2' WHERE key = 'format_version'")
    db.close()

    with pytest.raises(ManifestMismatchError) as caught:
        open_store(store_dir, read_only=True)
    assert "format_version=2" in str(caught.value)


def test_a_reader_cannot_write(docs: Path, tmp_path: Path) -> None:
    _index(tmp_path / "store", "docs")

    with open_store(tmp_path / "store", read_only=True) as store, pytest.raises(RagError):
        store.index(["docs"])


def test_dry_run_counts_without_writing(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False) as store:
        stats = store.index(["docs"], dry_run=True)
        assert (stats.added, stats.chunks) == (3, 3)
        assert store.sources() == []


def test_an_unopenable_index_path_is_a_clear_error(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    (store_dir / DB_NAME).mkdir(parents=True)  # a directory where the database file should be

    with pytest.raises(RagError) as caught:
        open_store(store_dir, read_only=False)

    assert "cannot open knowledge index" in str(caught.value)
    (store_dir / DB_NAME).rmdir()
    with open_store(store_dir, read_only=False) as retry:  # the failed open released the writer lock
        assert retry.sources() == []
