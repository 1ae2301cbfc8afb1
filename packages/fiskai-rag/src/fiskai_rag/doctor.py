"""Health checks of a knowledge store: the file, SQLite features, the lock, paths, the vector tier.

A public module (`from fiskai_rag.doctor import diagnose`): `fiskai knowledge doctor` is built on it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import apsw

from fiskai_rag.embed import Embedder
from fiskai_rag.store._db import DB_NAME, LOCK_NAME, Conn, Manifest, open_reader, read_manifest
from fiskai_rag.store._lock import WriterLock
from fiskai_rag.store._vec import load_vec

from .errors import IndexLockedError, RagError, Remedy

__all__ = ["Check", "diagnose"]


@dataclass(frozen=True, slots=True)
class Check:
    """One doctor finding; only a failed fatal check makes the store unusable."""

    name: str
    ok: bool
    detail: str
    fatal: bool = False
    remedy: Remedy | None = None
    """What fixes a failed check, for the caller to word."""


def diagnose(
    store_dir: str | os.PathLike[str], *, embedder: Embedder | None = None, paths: Sequence[str] = ()
) -> list[Check]:
    """Check a store without changing it (the writer lock is probed, not held).

    Args:
        store_dir: The store directory.
        embedder: The configured embedder, if the vector tier is on; the server is contacted once.
        paths: The configured index roots.

    Returns:
        The checks in a stable order.
    """
    directory = Path(store_dir)
    db_path = directory / DB_NAME
    checks: list[Check] = []
    manifest: Manifest | None = None
    if not db_path.exists():
        checks.append(Check("Store present", False, f"no index file at {db_path}", remedy=Remedy.INDEX))
    else:
        checks.append(Check("Store present", True, str(db_path)))
        manifest = _database_checks(db_path, checks)
        checks.append(_lock_check(directory))
    if not paths:
        checks.append(Check("Index paths resolve", True, "no paths configured (pass a path to knowledge index)"))
    for path in paths:
        exists = os.path.exists(path)
        checks.append(Check(f"Index path {path}", exists, "exists" if exists else "missing"))
    if embedder is None:
        checks.append(Check("Embeddings", True, "not configured (lexical-only)"))
    else:
        checks.extend(_vector_checks(embedder, manifest))
    return checks


def _database_checks(db_path: Path, checks: list[Check]) -> Manifest | None:
    try:
        db = open_reader(db_path)
    except RagError as err:
        checks.append(Check("Index readable", False, str(err), fatal=True, remedy=err.remedy))
        return None
    if db is None:
        size = _size(db_path)
        detail = f"{db_path} holds no index ({size} bytes, no tables): an index run that never finished"
        checks.append(Check("Index readable", False, detail, fatal=True, remedy=Remedy.INDEX))
        return None
    try:
        checks.append(Check("FTS5 compiled in", True, "ENABLE_FTS5"))
        mode = str(db.execute("PRAGMA journal_mode").fetchall()[0][0])
        checks.append(Check("WAL journal mode", mode == "wal", f"journal_mode={mode}"))
        result = str(db.execute("PRAGMA quick_check").fetchall()[0][0])
        checks.append(Check("Index integrity", result == "ok", f"quick_check: {result}", fatal=True))
        manifest = read_manifest(db)
    except RagError as err:
        checks.append(Check("Index readable", False, str(err), fatal=True, remedy=err.remedy))
        return None
    except apsw.Error as err:
        checks.append(Check("Index readable", False, str(err), fatal=True, remedy=Remedy.RESET))
        return None
    finally:
        db.close()
    try:
        mode_bits = db_path.stat().st_mode
    except OSError as err:
        checks.append(Check("Index writable", False, str(err), fatal=True))
    else:
        checks.append(Check("Index writable", bool(mode_bits & stat.S_IWUSR), stat.filemode(mode_bits)))
    return manifest


def _lock_check(directory: Path) -> Check:
    lock = WriterLock(directory / LOCK_NAME)
    try:
        lock.acquire()
    except IndexLockedError as err:
        return Check("Writer lock", True, f"held: {err}")
    except OSError as err:
        return Check("Writer lock", False, f"cannot open {lock.path}: {err.strerror}")
    lock.release()
    return Check("Writer lock", True, "free")


def _vector_checks(embedder: Embedder, manifest: Manifest | None) -> list[Check]:
    checks: list[Check] = []
    db = cast(Conn, apsw.Connection(":memory:"))
    try:
        checks.append(Check("sqlite-vec extension", True, f"vec0 {load_vec(db)}"))
    except RagError as err:
        checks.append(Check("sqlite-vec extension", False, str(err), fatal=True))
    finally:
        db.close()
    dimension = 0
    try:
        vectors = embedder.embed(["dimension probe"])
        dimension = len(vectors[0]) if vectors else 0
        checks.append(Check("Embeddings reachable", dimension > 0, f"model={embedder.model} dim={dimension}"))
    except RagError as err:
        checks.append(Check("Embeddings reachable", False, str(err)))
    if manifest is None:
        checks.append(Check("Manifest matches model", True, "no manifest yet (index not built)"))
    elif not manifest.has_vectors:
        checks.append(Check("Manifest matches model", False, "the index is lexical-only", remedy=Remedy.REINDEX))
    elif manifest.model != embedder.model or (dimension and manifest.dimension != dimension):
        checks.append(
            Check(
                "Manifest matches model",
                False,
                f"index built with model={manifest.model} dim={manifest.dimension}; config requests "
                f"model={embedder.model} dim={dimension}",
                remedy=Remedy.REINDEX,
            )
        )
    else:
        checks.append(Check("Manifest matches model", True, f"model={manifest.model} dim={manifest.dimension}"))
    return checks


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
