"""The helper thread that writes a batch while the next is prepared (`_write`): the same rows, ids and progress
as writing on the caller's thread, and a batch that fails loses nothing written before it."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from fiskai_rag import RagError, open_store
from fiskai_rag.index import _index as index_module, _write as write_module

PACK_CORPUS = Path(__file__).parent / "data" / "pack" / "corpus"

_Rows = dict[str, list[tuple[Any, ...]]]


def _tree(root: Path) -> None:
    """The pack corpus and files that exercise every column: a text file, an untitled page, non-ASCII text, a
    NUL character (which a carray cannot carry), a page with no chunk, a JSON-hostile title."""
    shutil.copytree(PACK_CORPUS, root)
    extra = root / "extra"
    extra.mkdir()
    (extra / "notes.txt").write_text("First paragraph.\n\nSecond paragraph about quotas.\n", encoding="utf-8")
    (extra / "untitled-page.md").write_text("Text before any heading.\n\n## Section\n\nBody.\n", encoding="utf-8")
    (extra / "unicode.md").write_text(
        '---\ntitle: "Quotes \\" and \\\\ and ünïcode 😀"\ndate: 2024-02-29\n---\n\n## Über\n\nΑλφα — 数据\n',
        encoding="utf-8",
    )
    (extra / "nul.md").write_text("# Has a NUL\n\nbefore\x00after\n", encoding="utf-8")
    (extra / "empty.md").write_text("<!-- only a comment -->\n", encoding="utf-8")
    long = "\n\n".join(f"## Part {n}\n\n" + "A sentence that fills the part. " * 30 for n in range(12))
    (extra / "long.md").write_text(f"# Long\n\n{long}\n", encoding="utf-8")


def _edit(root: Path) -> None:
    """Changes for an incremental run: fewer chunks, more chunks, a new file, a deleted one."""
    (root / "extra" / "long.md").write_text("# Long\n\nNow short.\n", encoding="utf-8")
    (root / "extra" / "notes.txt").write_text("One.\n\n" + "Two words. " * 400 + "\n", encoding="utf-8")
    (root / "extra" / "added.md").write_text("# Added\n\nA new page.\n", encoding="utf-8")
    (root / "extra" / "untitled-page.md").unlink()


def _rows(store_dir: Path) -> _Rows:
    """Every row of the store; `indexed_ns` (the clock) left out."""
    db = sqlite3.connect(f"file:{store_dir / 'knowledge.db'}?mode=ro", uri=True)
    try:
        return {
            "documents": db.execute(
                "SELECT id, path, cite, title, date, size, mtime_ns, hash, chunk_count FROM documents ORDER BY id"
            ).fetchall(),
            "roots": db.execute("SELECT path, label FROM roots ORDER BY path").fetchall(),
            "chunks": db.execute("SELECT id, document_id, ordinal, fingerprint FROM chunks ORDER BY id").fetchall(),
            "fts": db.execute("SELECT rowid, content, heading_path FROM chunks_fts ORDER BY rowid").fetchall(),
            "meta": db.execute("SELECT key, value FROM rag_meta ORDER BY key").fetchall(),
            "schema": db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall(),
        }
    finally:
        db.close()


@pytest.fixture
def writers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Small batches, and the name of the thread that writes each bulk batch."""
    monkeypatch.setattr(index_module, "_BATCH_FILES", 2)
    monkeypatch.setattr(index_module, "_BATCH_BYTES", 2048)  # a helper takes over 4 KB of work
    names: list[str] = []
    write_bulk = write_module._write_bulk

    def spy(db: Any, bulk: Any) -> None:
        names.append(threading.current_thread().name)
        write_bulk(db, bulk)

    monkeypatch.setattr(write_module, "_write_bulk", spy)
    yield names


def _cores(*, spare: bool) -> Callable[[int | None], bool]:
    """`_index.core_to_spare` answering as told, whatever else runs on this machine."""

    def core_to_spare(earlier: int | None) -> bool:
        return spare

    return core_to_spare


_Stats = tuple[int, int, int, int, int]
"""Added, updated, skipped, removed, chunks."""


def _index(store_dir: Path, root: Path, calls: list[tuple[int, int, str]]) -> _Stats:
    def progress(done: int, total: int, key: str) -> None:
        calls.append((done, total, key))

    with open_store(store_dir, read_only=False) as store:
        stats = store.index([str(root)], reconcile=True, progress=progress)
    return stats.added, stats.updated, stats.skipped, stats.removed, stats.chunks


def test_the_helper_writes_the_rows_ids_and_progress_of_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writers: list[str]
) -> None:
    root = tmp_path / "docs"
    _tree(root)
    runs: dict[bool, list[tuple[_Stats, list[tuple[int, int, str]], _Rows]]] = {False: [], True: []}

    def run(helper: bool) -> None:
        monkeypatch.setattr(index_module, "core_to_spare", _cores(spare=helper))
        calls: list[tuple[int, int, str]] = []
        stats = _index(tmp_path / f"store-{helper}", root, calls)
        runs[helper].append((stats, calls, _rows(tmp_path / f"store-{helper}")))

    # Both stores index the same files (same keys and mtimes): a cold build, then an incremental run.
    run(False)
    run(True)
    cold_writes = len(writers)
    _edit(root)
    run(False)
    run(True)

    assert runs[True] == runs[False]
    (cold, _, cold_rows), (again, _, _) = runs[True]
    assert cold[0] > 3 * 2  # several batches
    assert again[1] == 2 and again[3] == 1  # updated, removed
    assert any("\x00" in content for _, content, _ in cold_rows["fts"])  # written row by row, after the helper's
    assert 0 < cold_writes < len(writers)  # the helper wrote batches of both runs
    assert set(writers) == {"fiskai-rag-writer"}


def test_without_a_spare_core_every_batch_is_written_on_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writers: list[str]
) -> None:
    root = tmp_path / "docs"
    _tree(root)
    monkeypatch.setattr(index_module, "core_to_spare", _cores(spare=False))

    _index(tmp_path / "store", root, [])

    assert writers == []


def _refuse_in_batches(connection: Any) -> None:
    # A temp trigger lives on the writer's own connection: the third batch's insert fails in SQLite.
    if connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'documents'").fetchall():
        connection.execute(
            "CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.documents WHEN new.path LIKE '%-refused.md' "
            "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
        )


@pytest.mark.parametrize("helper", [False, True])
def test_a_failing_batch_is_named_and_the_batches_before_it_stay_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writers: list[str], helper: bool
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for n in range(12):
        name = f"page-{n:02}-refused.md" if n == 7 else f"page-{n:02}.md"
        (root / name).write_text(f"# Page {n}\n\n" + f"Text of page {n}. " * 80, encoding="utf-8")
    monkeypatch.setattr(index_module, "core_to_spare", _cores(spare=helper))
    monkeypatch.setattr(index_module, "_BATCH_FILES", 3)
    monkeypatch.setattr(index_module, "_BATCH_BYTES", 3000)  # two files a batch
    store_dir = tmp_path / "store"
    (tmp_path / "empty").mkdir()
    _index(store_dir, tmp_path / "empty", [])  # the schema, so the hook below can name its table
    monkeypatch.setattr(apsw, "connection_hooks", [*apsw.connection_hooks, _refuse_in_batches])

    with pytest.raises(RagError, match=r'indexing the batch ".*" \.\. ".*": .*refused by the test') as failed:
        _index(store_dir, root, [])

    # The batch is named by its first and last files; every file before it is stored whole, none after it.
    named = re.search(r'batch "(.*)" \.\. "(.*)":', str(failed.value))
    assert named is not None
    names = sorted(p.name for p in root.iterdir())
    first, last = names.index(Path(named[1]).name), names.index(Path(named[2]).name)
    assert first <= names.index("page-07-refused.md") <= last and first > 0
    rows = _rows(store_dir)
    assert [Path(path).name for _, path, *_ in rows["documents"]] == names[:first]
    assert len(rows["chunks"]) == len(rows["fts"]) == sum(doc[-1] for doc in rows["documents"])
    assert any(name == "chunks_by_fingerprint" for _, name, _ in rows["schema"])
    assert bool(writers) == helper

    monkeypatch.setattr(apsw, "connection_hooks", [h for h in apsw.connection_hooks if h is not _refuse_in_batches])
    assert _index(store_dir, root, [])[:3] == (len(names) - first, 0, first)


@pytest.mark.skipif(not Path("/proc/loadavg").is_file(), reason="reads Linux's /proc/loadavg")
def test_the_reading_counts_the_caller_and_a_core_is_spare_unless_both_readings_see_them_all_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cores = len(os.sched_getaffinity(0))

    now = write_module.runnable()

    assert now is not None and now >= 1
    monkeypatch.setattr(write_module, "runnable", lambda: cores)  # as many running as there are cores
    assert write_module.core_to_spare(earlier=cores) is False
    assert write_module.core_to_spare(earlier=cores - 1) is True


def test_where_nothing_is_read_the_one_minute_load_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(write_module, "spare_core", lambda: True)
    assert write_module.core_to_spare(earlier=None) is True
    monkeypatch.setattr(write_module, "spare_core", lambda: False)
    assert write_module.core_to_spare(earlier=None) is False


def test_the_switch_interval_is_short_while_a_helper_writes_and_restored_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writers: list[str]
) -> None:
    root = tmp_path / "docs"
    _tree(root)
    monkeypatch.setattr(index_module, "core_to_spare", _cores(spare=True))
    before = sys.getswitchinterval()
    seen: list[float] = []

    def progress(done: int, total: int, key: str) -> None:
        seen.append(sys.getswitchinterval())

    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(root)], progress=progress)

    assert writers and max(seen) < before
    assert sys.getswitchinterval() == before


def test_overlapping_helpers_restore_the_interval_once_the_last_ends_unless_someone_changed_it() -> None:
    before = sys.getswitchinterval()
    handoffs = write_module._Handoffs()
    try:
        handoffs.start()
        handoffs.start()
        short = sys.getswitchinterval()
        handoffs.end()
        assert short < before and sys.getswitchinterval() == short
        handoffs.end()
        assert sys.getswitchinterval() == before

        handoffs.start()
        sys.setswitchinterval(0.002)  # the application's own choice, made while a helper writes
        handoffs.end()
        assert sys.getswitchinterval() == pytest.approx(0.002)
    finally:
        sys.setswitchinterval(before)


@pytest.mark.parametrize("helper", [False, True])
def test_an_interrupted_run_keeps_whole_documents_and_the_next_run_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writers: list[str], helper: bool
) -> None:
    root = tmp_path / "docs"
    _tree(root)
    monkeypatch.setattr(index_module, "core_to_spare", _cores(spare=helper))
    before = sys.getswitchinterval()
    store_dir = tmp_path / "store"

    def interrupt(done: int, total: int, key: str) -> None:
        if done == total // 2:
            raise KeyboardInterrupt  # Ctrl-C while the helper may be writing a batch

    with pytest.raises(KeyboardInterrupt), open_store(store_dir, read_only=False) as store:
        store.index([str(root)], progress=interrupt)

    rows = _rows(store_dir)
    assert 0 < len(rows["documents"]) < len(list(root.rglob("*.md"))) + len(list(root.rglob("*.txt")))
    assert len(rows["chunks"]) == len(rows["fts"]) == sum(doc[-1] for doc in rows["documents"])
    assert bool(writers) == helper and sys.getswitchinterval() == before
    _index(store_dir, root, [])
    _index(tmp_path / "clean", root, [])
    assert _rows(store_dir)["fts"] == _rows(tmp_path / "clean")["fts"]
