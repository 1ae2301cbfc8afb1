"""Writing prepared files into the store: one transaction per batch, possibly beside the preparing thread.

A batch is written either row by row (`executemany`, the general path: vectors, text that SQLite's carray
cannot carry, and every batch when no helper runs) or in bulk: a handful of set-based statements over the
whole batch, its texts bound as carrays (`apsw.carray`, no copy) and its small columns as JSON texts.
Both write the same rows with the same ids (`write_rows` is the reference; the tests hold them equal,
and the stores of influxdata-docs, tldr-pages, generated 1k and 10k were identical row for row).

Bulk statements are what let a helper thread write batch N while the caller's thread reads and chunks
batch N+1. apsw releases the GIL while SQLite steps, but `executemany` needs it back for every row, and
a thread waiting for the GIL gets it only when the running one lets go (at most every 5 ms): with the
preparing thread busy in Python, a writer thread on `executemany` ran no faster than without a second
thread (influxdata-docs: 1.15-1.19 s against 1.06-1.10 s inline, also with a 0.05 ms switch interval).
A bulk statement holds no GIL from its first row to its last. Two more hand-backs mattered: apsw's
`with conn:` commits holding the GIL (`_transaction`), and the 5 ms switch interval (`_Handoffs`).

Measured with `bench/knowledge_ab.py` against 188e881 (alternating, medians of 7, idle 2-core machine,
helper on): influxdata-docs cold index 1.11 -> 0.82-0.84 s (floor 0.51 s: 2.2x -> 1.65x; 0.76-0.77 s in
runs of the indexer alone), generated 1k files 0.368 -> 0.336 s (1.50x -> 1.37x), generated 10k 3.98 ->
3.07-3.38 s (1.20x -> 0.93-1.0x); about 6% more CPU. With another process busy on a core there is
no helper (`core_to_spare`) and indexing runs as before; forced on there, it cost 3% (1.126 -> 1.156 s).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from array import array
from collections.abc import Callable, Generator
from itertools import repeat
from typing import Any, NamedTuple

import apsw

from fiskai_rag.errors import RagError
from fiskai_rag.store._db import Conn
from fiskai_rag.store._worker import Worker, runnable, spare_core

from ._prepare import Prepared
from ._walk import Candidate

__all__ = ["BatchWriter", "Pending", "bulk_supported", "core_to_spare", "runnable", "write_rows"]


class Pending(NamedTuple):
    """A prepared file waiting for its batch to be written."""

    candidate: Candidate
    result: Prepared
    existing_id: int | None
    """The document's id when it replaces an indexed one."""
    cite: str


def core_to_spare(earlier: int | None) -> bool:
    """Whether a writer thread would find a core that nothing else uses, from `runnable()` now and `earlier`.

    Read at the moment, not from the 1-minute load average that `_worker.spare_core` (the fallback)
    may read: an index run is long and decides once, and the average still counts the runs just before
    it, such as the previous index of a benchmark, whose core is free again. A process busy on a core
    is runnable at every reading, so one of two readings that sees a core free is enough: a helper
    that then shares a core after all costs little (influxdata-docs beside a process busy on one core,
    alternating: 1.156 s with a helper forced on against 1.126 s without), one that runs gains much
    (1.07 -> 0.77 s on an idle machine).
    """
    now = runnable()
    if now is None or earlier is None:
        return spare_core()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(now, earlier) < cores


def _next_ids(db: Conn) -> tuple[int, int]:
    """The next chunk id and the next document id (the writer is alone, so every insert is a plain INSERT)."""
    row = db.execute(
        "SELECT (SELECT coalesce(max(id), 0) + 1 FROM chunks), (SELECT coalesce(max(id), 0) + 1 FROM documents)"
    ).fetchall()[0]
    return int(row[0]), int(row[1])


def write_rows(db: Conn, batch: list[Pending], blobs: list[bytes]) -> None:
    """Write one batch row by row inside the caller's transaction, one executemany per table.

    Ids are assigned here (the writer is alone) so that every statement is a plain INSERT: an upsert
    with RETURNING opens a statement savepoint, and FTS5 flushes its pending index data at every
    savepoint, which had made the document upserts cost half of a cold index.
    """
    next_id, next_doc = _next_ids(db)
    now = time.time_ns()
    new_docs: list[tuple[object, ...]] = []
    chunk_rows: list[tuple[int, int, int, int | None]] = []
    fts_rows: list[tuple[int, str, str]] = []
    for pending in batch:
        candidate = pending.candidate
        result = pending.result
        count = len(result.contents)
        row = (result.title, result.date, candidate.size, candidate.mtime_ns, result.digest, count, now)
        if pending.existing_id is not None:
            doc_id = pending.existing_id
            db.execute("DELETE FROM chunks WHERE document_id = ?", (doc_id,))
            db.execute(
                "UPDATE documents SET title = ?, date = ?, size = ?, mtime_ns = ?, hash = ?, chunk_count = ?, "
                "indexed_ns = ? WHERE id = ?",
                (*row, doc_id),
            )
        else:
            doc_id = next_doc
            next_doc += 1
            new_docs.append((doc_id, candidate.key, pending.cite, *row))
        ids = range(next_id, next_id + count)
        chunk_rows += zip(ids, repeat(doc_id, count), range(count), result.prints, strict=True)
        fts_rows += zip(ids, result.contents, result.headings, strict=True)
        next_id += count
    db.executemany(
        "INSERT INTO documents(id, path, cite, title, date, size, mtime_ns, hash, chunk_count, indexed_ns) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        new_docs,
    )
    db.executemany("INSERT INTO chunks(id, document_id, ordinal, fingerprint) VALUES (?, ?, ?, ?)", chunk_rows)
    db.executemany("INSERT INTO chunks_fts(rowid, content, heading_path) VALUES (?, ?, ?)", fts_rows)
    if blobs:
        ids = [row[0] for row in chunk_rows]
        db.executemany("INSERT INTO chunks_vec(chunk_id, embedding) VALUES (?, ?)", list(zip(ids, blobs, strict=True)))


_HEADINGS = "temp.fiskai_pending_headings"
_OWNERS = "temp.fiskai_pending_owners"
"""Each chunk's heading path and owner (document and ordinal) by its position in the batch: the joins that
pair them with the chunk's content and fingerprint (a carray or json_each is scanned, never looked up,
so two cannot be joined to each other)."""
_ORDINAL_BITS = 24
"""An owner is `(document << 24) | ordinal`: a file of at most 512 KiB has fewer than 2**24 chunks."""
_MAX_OWNED_ID = 1 << (62 - _ORDINAL_BITS)
"""A replaced document's id must leave its owners inside int64 (ids count up from 1: never in practice)."""
_carray: Callable[[object], object] | None = getattr(apsw, "carray", None)
"""`apsw.carray` (apsw 3.50 and later, built with carray as PyPI's wheels are), else None."""
_UPDATE_DOCUMENTS = (
    "UPDATE documents SET title = u.value ->> 1, date = u.value ->> 2, size = u.value ->> 3, "
    "mtime_ns = u.value ->> 4, hash = u.value ->> 5, chunk_count = u.value ->> 6, indexed_ns = ?2 "
    "FROM json_each(?1) AS u WHERE documents.id = u.value ->> 0"
)
_INSERT_DOCUMENTS = (
    "INSERT INTO documents(id, path, cite, title, date, size, mtime_ns, hash, chunk_count, indexed_ns) "
    "SELECT ?1 + key, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, "
    "value ->> 7, ?2 FROM json_each(?3)"
)
# The document of an owner is `2 * id + 1` for a replaced document, `2 * rank` for the batch's new one of
# that rank (its id is known only once the transaction is open).
_INSERT_CHUNKS = (
    "INSERT INTO chunks(id, document_id, ordinal, fingerprint) SELECT ?1 + f.key, "
    "iif(o.owner >> 24 & 1, o.owner >> 25, ?2 + (o.owner >> 25)), o.owner & 16777215, f.value "
    f"FROM json_each(?3) AS f CROSS JOIN {_OWNERS} AS o ON o.pos = f.key + 1"
)
_INSERT_FTS = (
    "INSERT INTO chunks_fts(rowid, content, heading_path) "
    f"SELECT ?1 + a.rowid - 1, a.value, h.heading FROM carray(?2) AS a CROSS JOIN {_HEADINGS} AS h ON h.pos = a.rowid"
)


class Bulk(NamedTuple):
    """A batch as the arguments of its set-based statements, built on the preparing thread."""

    first: str
    last: str
    """The first and last document keys, for an error message."""
    updated: str
    """JSON: [id, title, date, size, mtime_ns, hash, chunk count] per replaced document, or `""`."""
    added: str
    """JSON: [path, cite, title, date, size, mtime_ns, hash, chunk count] per new document, or `""`."""
    owners: object
    """An `apsw.carray` of int64: each chunk's owner (`_ORDINAL_BITS`), or None when the batch has no chunk."""
    prints: str
    """JSON: each chunk's fingerprint or null."""
    contents: object
    """An `apsw.carray` of every chunk's content in order, or None when the batch has no chunk."""
    headings: object


def bulk_supported(db: Conn) -> bool:
    """Whether this apsw and SQLite bind carrays (PyPI builds of apsw do; a distribution's may not)."""
    if _carray is None:
        return False
    try:
        db.execute("SELECT value FROM carray(?)", (_carray(("",)),)).fetchall()
    except apsw.Error:
        return False
    db.execute(f"CREATE TABLE IF NOT EXISTS {_HEADINGS}(pos INTEGER PRIMARY KEY, heading TEXT NOT NULL)")
    db.execute(f"CREATE TABLE IF NOT EXISTS {_OWNERS}(pos INTEGER PRIMARY KEY, owner INTEGER NOT NULL)")
    return True


def _bulk(batch: list[Pending]) -> Bulk | None:
    """The bulk arguments of a batch, or None when a text cannot be bound as a carray (it holds a NUL)."""
    if _carray is None:
        return None
    updated: list[tuple[object, ...]] = []
    added: list[tuple[object, ...]] = []
    owners = array("q")
    prints: list[int | None] = []
    contents: list[str] = []
    headings: list[str] = []
    for pending in batch:
        candidate = pending.candidate
        result = pending.result
        count = len(result.contents)
        row = (result.title, result.date, candidate.size, candidate.mtime_ns, result.digest, count)
        if pending.existing_id is not None:
            if pending.existing_id >= _MAX_OWNED_ID:
                return None
            updated.append((pending.existing_id, *row))
            owner = (2 * pending.existing_id + 1) << _ORDINAL_BITS
        else:
            owner = 2 * len(added) << _ORDINAL_BITS
            added.append((candidate.key, pending.cite, *row))
        owners.extend(range(owner, owner + count))
        prints += result.prints
        contents += result.contents
        headings += result.headings
    try:
        texts = (_carray(tuple(contents)), _carray(tuple(headings))) if contents else (None, None)
    except ValueError:
        return None  # an embedded NUL: carray takes C strings
    # ensure_ascii=False: SQLite reads the text as UTF-8 either way, and this one is shorter to write and parse.
    return Bulk(
        batch[0].candidate.key,
        batch[-1].candidate.key,
        json.dumps(updated, ensure_ascii=False) if updated else "",
        json.dumps(added, ensure_ascii=False) if added else "",
        _carray(owners) if contents else None,
        json.dumps(prints),
        *texts,
    )


def _write_bulk(db: Conn, bulk: Bulk) -> None:
    """Write a batch in bulk inside the caller's transaction: the same rows and ids as `write_rows`."""
    next_id, next_doc = _next_ids(db)
    now = time.time_ns()
    if bulk.updated:
        db.execute("DELETE FROM chunks WHERE document_id IN (SELECT value ->> 0 FROM json_each(?))", (bulk.updated,))
        db.execute(_UPDATE_DOCUMENTS, (bulk.updated, now))
    if bulk.added:
        db.execute(_INSERT_DOCUMENTS, (next_doc, now, bulk.added))
    if bulk.contents is None:
        return
    # Rows of a larger batch before stay past this batch's last position, where its joins never look.
    db.execute(f"INSERT OR REPLACE INTO {_OWNERS}(pos, owner) SELECT rowid, value FROM carray(?)", (bulk.owners,))
    db.execute(_INSERT_CHUNKS, (next_id, next_doc, bulk.prints))
    db.execute(f"INSERT OR REPLACE INTO {_HEADINGS}(pos, heading) SELECT rowid, value FROM carray(?)", (bulk.headings,))
    db.execute(_INSERT_FTS, (next_id, bulk.contents))


@contextlib.contextmanager
def _transaction(db: Conn) -> Generator[None]:
    """What `with db:` does, by statements: apsw's own exit commits without releasing the GIL.

    A commit flushes FTS5's pending index (a quarter of the writer's time); with the helper committing
    inside apsw's `__exit__`, a Python thread beside it ran at about 10% of its speed (an `execute` of
    the same RELEASE: 60-99%).
    """
    db.execute("SAVEPOINT fiskai_batch")
    try:
        yield
        db.execute("RELEASE fiskai_batch")
    except BaseException:
        db.execute("ROLLBACK TO fiskai_batch")
        db.execute("RELEASE fiskai_batch")
        raise


def _commit(db: Conn, roots: list[tuple[str, str]], first: str, last: str, write: Any) -> None:
    try:
        with _transaction(db):
            if roots:  # with the documents cited under them, so a canceled run leaves no orphan label
                db.executemany("INSERT OR IGNORE INTO roots(path, label) VALUES (?, ?)", roots)
            write()
    except apsw.Error as err:
        raise RagError(f'indexing the batch "{first}" .. "{last}": {err}') from err


_SWITCH_S = 0.0001
"""The interpreter's switch interval while a helper writes (Python's default is 5 ms)."""


class _Handoffs:
    """Shortens the interpreter's switch interval while any helper writes, and restores it after the last.

    The helper needs the GIL back after every statement, and the preparing thread, busy in Python,
    hands it over only when the interval runs out: 5 ms a statement, about a third of the helper's
    time on influxdata-docs (its small statements took 4x their CPU time). The interval bounds the
    wait and costs nothing while no other thread waits (same run, alternating, idle machine: cold
    index 0.83-0.84 s at 5 ms, 0.81-0.82 s at 0.5 ms, 0.76 s at 0.1 ms). It is process-wide: other
    threads of the process only switch sooner when they contend for the GIL.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved: float | None = None
        self._ours = 0.0

    def start(self) -> None:
        with self._lock:
            self._users += 1
            current = sys.getswitchinterval()
            if self._users == 1 and current > _SWITCH_S:
                self._saved = current
                sys.setswitchinterval(_SWITCH_S)
                self._ours = sys.getswitchinterval()  # as the interpreter rounds it

    def end(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0 and self._saved is not None:
                if sys.getswitchinterval() == self._ours:  # unless someone else changed it meanwhile
                    sys.setswitchinterval(self._saved)
                self._saved = None


_handoffs = _Handoffs()


class BatchWriter:
    """Writes batches in order, each in its own transaction; with `helper`, in bulk on a thread of its own.

    With a helper, `write` returns once the previous batch is written and this one has started, so a
    batch's error surfaces at the next `write` or at `finish`; a batch the helper cannot take (vectors,
    a NUL in its text) is written row by row on the caller's thread after the one before it. The caller
    uses the connection again only after `finish` or `close`.
    """

    def __init__(self, db: Conn, *, helper: bool) -> None:
        self._db = db
        self._worker: Worker[None] | None = None
        self._busy = False
        if helper:
            _handoffs.start()
            self._worker = Worker("fiskai-rag-writer")

    def write(self, batch: list[Pending], roots: list[tuple[str, str]], blobs: list[bytes]) -> None:
        """Write one batch (and the roots its documents are cited under); `blobs` are its chunks' vectors."""
        db = self._db
        first, last = batch[0].candidate.key, batch[-1].candidate.key
        bulk = _bulk(batch) if self._worker is not None and not blobs else None
        self.finish()
        if bulk is None or self._worker is None:
            _commit(db, roots, first, last, lambda: write_rows(db, batch, blobs))
            return
        self._worker.submit(lambda: _commit(db, roots, first, last, lambda: _write_bulk(db, bulk)))
        self._busy = True

    def finish(self) -> None:
        """Wait for the batch being written, raising its error."""
        if self._busy and self._worker is not None:
            self._busy = False
            self._worker.result()

    def close(self) -> None:
        """Wait for the batch being written and end the helper (an error is dropped: the caller is failing or done)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            self._busy = False
            worker.stop()
            _handoffs.end()
            with contextlib.suppress(apsw.Error):
                self._db.execute(f"DELETE FROM {_HEADINGS}; DELETE FROM {_OWNERS}")
