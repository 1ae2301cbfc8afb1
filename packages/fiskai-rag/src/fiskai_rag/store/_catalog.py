"""What an index holds: its documents (`Source`) and its counts and sizes (`StoreStats`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ._db import DB_NAME, Conn, Manifest
from ._sql import Columns

__all__ = ["Source", "StoreStats", "list_sources", "store_stats"]


@dataclass(frozen=True, slots=True)
class Source:
    """One indexed file."""

    path: str
    """The citation path (`docs/design.md`): what citations, `show` and `remove` use."""
    file: str
    """The document key: the file's resolved absolute path."""
    chunks: int
    indexed_ns: int | None
    """When its content was last indexed; None for documents indexed before this was recorded."""
    mtime_ns: int
    """The file's mtime when it was indexed."""


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Counts and sizes of an index."""

    directory: Path
    db_path: Path
    built: bool
    documents: int
    chunks: int
    vectors: int
    manifest: Manifest | None
    db_bytes: int
    wal_bytes: int
    modified_ns: int | None


def list_sources(db: Conn) -> list[Source]:
    """Every indexed file, sorted by citation path."""
    cols = Columns.of(db)
    indexed = "d.indexed_ns" if cols.cite == "d.cite" else "NULL"
    rows = db.execute(
        f"SELECT {cols.cite}, d.path, d.chunk_count, {indexed}, d.mtime_ns FROM documents d ORDER BY 1"
    ).fetchall()
    return [
        Source(str(cite), str(path), int(count), None if when is None else int(when), int(mtime_ns))
        for cite, path, count, when, mtime_ns in rows
    ]


def store_stats(directory: Path, db: Conn | None, manifest: Manifest | None, *, vectors: bool) -> StoreStats:
    """The counts of `db` (zeros without one: not built) and the sizes of its files.

    `vectors`: whether sqlite-vec is loaded into `db`, so that its vector table can be counted.
    """
    db_path = directory / DB_NAME
    documents = chunks = stored = 0
    if db is not None:
        documents = int(db.execute("SELECT count(*) FROM documents").fetchall()[0][0])
        chunks = int(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0])
        if vectors and db.execute("SELECT 1 FROM sqlite_master WHERE name='chunks_vec'").fetchall():
            stored = int(db.execute("SELECT count(*) FROM chunks_vec").fetchall()[0][0])
    wal = db_path.with_name(DB_NAME + "-wal")
    return StoreStats(
        directory=directory,
        db_path=db_path,
        built=db is not None,
        documents=documents,
        chunks=chunks,
        vectors=stored,
        manifest=manifest,
        db_bytes=_size(db_path),
        wal_bytes=_size(wal),
        modified_ns=max(_mtime(db_path), _mtime(wal)) if db is not None else None,
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
