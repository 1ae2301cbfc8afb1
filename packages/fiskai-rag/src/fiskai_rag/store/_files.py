"""An index directory's lifecycle: its connection, the single-writer lock and the manifest checks.

A writer takes the cross-process lock (`_lock.WriterLock`) before it opens `knowledge.db`; a reader
never locks, and opens the file when it first appears. A writer that finds the file damaged keeps the
error and opens nothing, so that `reset` can still replace the file; every other call raises it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from fiskai_rag.errors import IndexNotBuiltError, ManifestMismatchError, RagError, Remedy, StoreCorruptError

from ._db import (
    DB_NAME,
    FORMAT_VERSION,
    LOCK_NAME,
    Conn,
    Manifest,
    corruption_guard,
    open_reader,
    open_writer,
    read_manifest,
)
from ._lock import WriterLock
from ._vec import load_vec, vec_available

if TYPE_CHECKING:
    from fiskai_rag.embed import Embedder

__all__ = ["StoreFiles"]

_READ_ONLY = "this store was opened read-only; open it with read_only=False to write"


class StoreFiles:
    """One process's hold on an index directory (`knowledge.db` + `knowledge.lock`)."""

    def __init__(self, directory: Path, *, read_only: bool, embedder: Embedder | None) -> None:
        self.directory = directory
        self.db_path = directory / DB_NAME
        self.read_only = read_only
        self.embedder = embedder
        self.db: Conn | None = None
        self.manifest: Manifest | None = None
        self.vec_loaded = False
        """Whether sqlite-vec is loaded into `db` (the store has vectors and they are used)."""
        self.damaged: StoreCorruptError | None = None
        self._lock: WriterLock | None = None

    def open(self) -> None:
        """Open the file (a reader, when it exists), or take the writer lock and open or create it."""
        if self.read_only:
            if self.db_path.exists():
                self.db = open_reader(self.db_path)
                if self.db is not None:
                    self.load_manifest()
            return
        lock = WriterLock(self.directory / LOCK_NAME)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock.acquire()
        except OSError as err:
            raise RagError(f"cannot use knowledge store directory {self.directory}: {err.strerror or err}") from err
        self._lock = lock
        try:
            self.db = open_writer(self.db_path)
            self.load_manifest()
        except StoreCorruptError as err:
            self.damaged = err  # kept so that reset() can still repair the store
            self.db = None
        except BaseException:
            self.close()
            raise

    def load_manifest(self) -> None:
        """Read the manifest, load sqlite-vec when vectors are used, and check a reader's embedder against it.

        Raises:
            ManifestMismatchError: The index is of a newer format, or a reader's embedder is not the one
                the index was built with.
        """
        db = self.require_db()
        with corruption_guard(self.db_path):
            manifest = read_manifest(db)
        self.manifest = manifest
        if manifest is None:
            return
        if manifest.format_version > FORMAT_VERSION:
            raise ManifestMismatchError(
                f"knowledge index format is newer than this build supports: index format_version="
                f"{manifest.format_version}, this build supports up to {FORMAT_VERSION}",
                remedy=Remedy.UPGRADE,
            )
        if manifest.has_vectors and (self.embedder is not None or not self.read_only) and vec_available():
            load_vec(db)
            self.vec_loaded = True
        if not self.read_only or self.embedder is None:
            return  # the writer checks the embedder against the manifest when it indexes
        embedder = self.embedder
        if not manifest.has_vectors:
            raise ManifestMismatchError(
                "knowledge index was built with a different embedding configuration: config requests "
                f'embeddings model="{embedder.model}" but the index was built lexical-only'
            )
        if (manifest.model, manifest.query_prefix, manifest.document_prefix) != (
            embedder.model,
            embedder.query_prefix,
            embedder.document_prefix,
        ) or not manifest.normalized:
            raise ManifestMismatchError(
                "knowledge index was built with a different embedding configuration: index model="
                f'"{manifest.model}" query_prefix="{manifest.query_prefix}" document_prefix="{manifest.document_prefix}"; '
                f'config requests model="{embedder.model}" query_prefix="{embedder.query_prefix}" '
                f'document_prefix="{embedder.document_prefix}"'
            )

    def require_db(self) -> Conn:
        """The connection; a reader opens an index built since it was opened.

        Raises:
            IndexNotBuiltError: There is no index yet.
            StoreCorruptError: The writer found the file damaged when it opened it.
        """
        if self.damaged is not None:
            raise self.damaged
        if self.db is None and self.read_only and self.db_path.exists():
            self.db = open_reader(self.db_path)
            if self.db is not None:
                self.load_manifest()
        if self.db is None:
            raise IndexNotBuiltError(self.db_path)
        return self.db

    def writer(self) -> Conn:
        """The connection of a writer.

        Raises:
            RagError: The store was opened read-only.
        """
        self.refuse_read_only()
        return self.require_db()

    def refuse_read_only(self) -> None:
        """Raise for a write through a read-only store."""
        if self.read_only:
            raise RagError(_READ_ONLY)

    def recreate(self) -> None:
        """Replace the index file with a new empty one (the writer lock is held throughout)."""
        if self.db is not None:
            self.db.close()
            self.db = None
        for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"):
            with contextlib.suppress(FileNotFoundError):
                (self.directory / name).unlink()
        self.damaged = None
        self.db = open_writer(self.db_path)
        self.manifest = None

    def close(self) -> None:
        """Close the connection and release the writer lock; safe to call twice."""
        db, self.db = self.db, None
        if db is not None:
            db.close()
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()
