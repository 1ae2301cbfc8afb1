"""Incremental indexing: walk, stat, hash only what changed, chunk, embed outside the transaction, upsert.

Unchanged files cost one `stat` (size and mtime match the stored row); a file whose stat changed is
read and hashed, and re-chunked only when its SHA-256 differs. Changed files are written in batches,
one short transaction per batch, so readers see whole files appear and the corpus is never held in
memory (two batches at most: with a core to spare, a helper thread writes one while the next is
prepared, see `_write`). Embedding happens before a batch's transaction opens, so a slow embeddings server never keeps
the write transaction (and SQLite's write lock) open.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from fiskai_rag.embed import Embedder
from fiskai_rag.errors import (
    EmbedderError,
    EmbeddingDimensionError,
    ManifestMismatchError,
    PathsNotFoundError,
    RagError,
)
from fiskai_rag.store._db import (
    RECHUNK_MARK,
    Conn,
    Manifest,
    clear_index,
    create_fingerprint_index,
    create_vec_table,
    drop_fingerprint_index,
    read_manifest,
    settle_dates,
    write_manifest,
)
from fiskai_rag.store._vec import load_vec, normalise, pack

from ._prepare import Job, prepared
from ._walk import Candidate, walk
from ._write import BatchWriter, Pending, bulk_supported, core_to_spare, runnable

__all__ = ["IndexStats", "Progress", "run_index"]

Progress = Callable[[int, int, str], None]
"""Called after each file with (files done, files total, document key), on the indexing thread while a
helper thread may be writing: it must not use the store being indexed."""

_BATCH_FILES = 500
_BATCH_BYTES = 4 * 1024 * 1024
_BATCH_CHUNKS_EMBEDDED = 256
_PROBE = "dimension probe"
_MISMATCH = "knowledge index was built with a different embedding configuration"


@dataclass(slots=True)
class IndexStats:
    """What an indexing run did."""

    files: int = 0
    added: int = 0
    updated: int = 0
    skipped: int = 0
    removed: int = 0
    chunks: int = 0
    """Chunks of every file seen, skipped ones included."""
    embeddings: int = 0
    first_build: bool = False
    dry_run: bool = False
    notes: list[str] = field(default_factory=lambda: [])
    """Skipped files and missing roots, one line each."""


_Row = tuple[int, int, int, str, int, str]
"""A stored document: (id, size, mtime_ns, hash, chunk count, citation path)."""


def _under(path: str, root_key: str) -> bool:
    return path == root_key or path.startswith(root_key.rstrip("/") + "/")


class _Labels:
    """Citation paths for new documents: the indexed folder's name and the file's path inside it.

    Each root folder is registered once (`roots` table) under its base name (`docs`), or under its
    absolute path when another folder already has that name, so two roots never share a citation path.
    A root inside a registered folder is cited under that folder (`docs/guide/x.md`, whichever of the
    two was walked), so a document's citation path does not depend on which root found it.
    """

    def __init__(self, db: Conn, taken: set[str]) -> None:
        self.roots: dict[str, str] = {str(p): str(label) for p, label in db.execute("SELECT path, label FROM roots")}
        self.labels = set(self.roots.values())
        self.new: list[tuple[str, str]] = []
        self.taken = taken
        self._bases: dict[str, str] = {}

    def _base(self, root: str) -> str:
        containing = [r for r in self.roots if _under(root, r)]
        if containing:
            return min(containing, key=len)  # the outermost registered folder
        label = os.path.basename(root.rstrip("/")) or root
        if label in self.labels:
            label = root
        self.roots[root] = label
        self.labels.add(label)
        self.new.append((root, label))
        return root

    def cite(self, candidate: Candidate) -> str:
        base = self._bases.get(candidate.root)
        if base is None:
            base = self._bases[candidate.root] = self._base(candidate.root)
        label = self.roots[base]
        rel = candidate.key[len(base) :].lstrip("/")
        if os.path.isabs(label):
            cite = candidate.key
        else:
            cite = f"{label}/{rel}" if rel else label
        if cite in self.taken:
            cite = candidate.key  # a document from an older store already has it; the key is unique
        self.taken.add(cite)
        return cite

    def take(self) -> list[tuple[str, str]]:
        """The roots labelled since the last call, for the caller to register with its next batch."""
        new, self.new = self.new, []
        return new

    def save(self, db: Conn) -> None:
        """Register the roots labelled since the last save, inside the caller's transaction."""
        db.executemany("INSERT OR IGNORE INTO roots(path, label) VALUES (?, ?)", self.new)
        self.new.clear()


def _legacy_suffix(key: str) -> str:
    parts = [p for p in key.split("/") if p not in ("", ".", "..")]
    return "/" + "/".join(parts)


def _adopt(known: dict[str, _Row], legacy: dict[str, list[str]], candidate: Candidate) -> str | None:
    """The relative key of an old-store document that is this file, if any (same trailing path, same bytes)."""
    for old in legacy.get(os.path.basename(candidate.key), []):
        if not candidate.key.endswith(_legacy_suffix(old)):
            continue
        row = known[old]
        if (row[1], row[2]) == (candidate.size, candidate.mtime_ns):
            return old
        try:
            with open(candidate.path, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError:
            continue
        if digest == row[3].removeprefix(RECHUNK_MARK):
            return old
    return None


def document_input(embedder: Embedder, heading_path: str, content: str) -> str:
    """The text embedded for a chunk: the document prefix (with `{title}`) and the chunk."""
    return embedder.document_prefix.replace("{title}", heading_path or "none") + content


def prepare_vector_tier(db: Conn, embedder: Embedder | None) -> Manifest:
    """Check the pinned manifest against the embedder, create the vector table, pin the manifest.

    Raises:
        ManifestMismatchError: The index was built with another model, dimension or prefixes.
        EmbedderError: The embeddings server cannot be reached to probe the dimension.
    """
    pinned = read_manifest(db)
    has_chunks = bool(db.execute("SELECT EXISTS(SELECT 1 FROM chunks)").fetchall()[0][0])
    if embedder is None:
        if pinned is not None and pinned.has_vectors and has_chunks:
            raise ManifestMismatchError(
                f"{_MISMATCH}: manifest built with model={pinned.model} dim={pinned.dimension}; "
                "no embeddings are configured now, so new chunks would have no vectors"
            )
        wanted = pinned if pinned is not None else Manifest()
    else:
        probe = embedder.embed([_PROBE])
        if len(probe) != 1 or not probe[0]:
            raise EmbedderError("the embeddings server returned no vector for the dimension probe")
        wanted = Manifest(
            model=embedder.model,
            dimension=len(probe[0]),
            normalized=True,
            query_prefix=embedder.query_prefix,
            document_prefix=embedder.document_prefix,
        )
        if pinned is not None and pinned.has_vectors and pinned != wanted:
            raise ManifestMismatchError(
                f"{_MISMATCH}: manifest built with model={pinned.model} dim={pinned.dimension}; "
                f"config requests model={wanted.model} dim={wanted.dimension}"
            )
        if pinned is not None and not pinned.has_vectors and has_chunks:
            raise ManifestMismatchError(
                f"{_MISMATCH}: the existing index is lexical-only but config now requests embeddings "
                f"model={wanted.model}"
            )
        load_vec(db)
    with db:
        if wanted.has_vectors:
            create_vec_table(db, wanted.dimension)
        write_manifest(db, wanted)
    return wanted


# The walk, hash, embed and upsert steps share counters and the reconcile set; one function keeps the
# transaction boundaries visible.
def run_index(  # noqa: C901
    db: Conn,
    *,
    store_dir: str,
    embedder: Embedder | None,
    roots: list[str],
    reconcile: bool,
    reindex: bool,
    dry_run: bool,
    progress: Progress | None,
    defer_vectors: bool = False,
) -> IndexStats:
    """Bring the index in line with the files under `roots` (the caller holds the writer lock).

    With `defer_vectors`, chunks are written without their vectors and the index marked for the vector
    pass (`_vectors.embed_pending`), so the lexical index is whole as soon as this returns.

    Returns:
        Counts of what was added, updated, skipped and removed.
    """
    if not roots:
        raise RagError("no paths given - pass a path to index")
    stats = IndexStats(dry_run=dry_run)
    running = runnable()
    found = walk(roots, exclude_dir=store_dir)
    stats.notes.extend(found.notes)
    if not found.root_keys:
        raise PathsNotFoundError(found.missing)
    known: dict[str, _Row] = {
        str(path): (int(doc_id), int(size), int(mtime_ns), str(digest), int(count), str(cite))
        for doc_id, path, size, mtime_ns, digest, count, cite in db.execute(
            "SELECT id, path, size, mtime_ns, hash, chunk_count, cite FROM documents"
        )
    }
    stats.first_build = not known or reindex
    manifest: Manifest | None = None
    if not dry_run:
        if reindex:
            clear_index(db)
            known = {}
        manifest = prepare_vector_tier(db, embedder)
    labels = _Labels(db, {row[5] for row in known.values()})
    # Documents of a schema-1 store whose folder was unknown when it was migrated keep a relative key
    # until this walk meets the same file (see `_adopt`).
    legacy: dict[str, list[str]] = {}
    for path in known:
        if not os.path.isabs(path):
            legacy.setdefault(os.path.basename(path), []).append(path)
    adopted: list[tuple[str, int]] = []
    vectors_on = embedder is not None and (manifest is None or manifest.has_vectors)
    if vectors_on and defer_vectors and not dry_run:
        from ._vectors import mark_vectors_pending

        mark_vectors_pending(db)  # before any chunk lands without its vector
        vectors_on = False

    batch: list[Pending] = []
    batch_bytes = 0
    batch_chunks = 0
    touched: list[tuple[int, int, int]] = []
    seen: set[str] = set()
    total = len(found.candidates)
    done = 0
    # Stat first: a file whose size and mtime match its row is skipped without being opened.
    work: list[tuple[Job, Candidate, _Row | None]] = []
    for candidate in found.candidates:
        seen.add(candidate.key)
        stats.files += 1
        row = known.get(candidate.key)
        if row is None and legacy:
            old = _adopt(known, legacy, candidate)
            if old is not None:
                row = known[candidate.key] = known.pop(old)
                legacy[os.path.basename(old)].remove(old)
                adopted.append((candidate.key, row[0]))
        if row is not None and not reindex and row[1] == candidate.size and row[2] == candidate.mtime_ns:
            stats.skipped += 1
            stats.chunks += row[4]
            done += 1
            if progress is not None:
                progress(done, total, candidate.key)
            continue
        digest = row[3] if row is not None and not reindex else ""
        work.append((Job(candidate.key, candidate.path, candidate.size, digest), candidate, row))
    if adopted and not dry_run:
        with db:
            db.executemany("UPDATE documents SET path = ? WHERE id = ?", adopted)
    # A first build keeps no fingerprint index while it fills the store (see `drop_fingerprint_index`).
    deferred = stats.first_build and not dry_run and bool(work)
    if deferred:
        with db:
            drop_fingerprint_index(db)
    # A helper thread writes each batch while the next is prepared, when there is more than one batch
    # and a core to run it on (see `_write`).
    helper = not dry_run and not vectors_on and _helps(work) and core_to_spare(running) and bulk_supported(db)
    writer = BatchWriter(db, helper=helper)
    pace = _Pace(helper, work)
    embedding = vectors_on and not dry_run
    try:
        rows = {job.key: (candidate, row) for job, candidate, row in work}
        if progress is not None and embedding and work:
            progress(done, total, "")  # the total now: the first batch's embeddings take a while
        for job, result in prepared([job for job, _, _ in work]):
            candidate, row = rows[job.key]
            done += 1
            if result.outcome == "note":
                stats.notes.append(result.note)
            elif result.outcome == "same":
                # Same bytes, new mtime (a checkout, a touch): remember the stat so the next run skips the read.
                assert row is not None
                stats.skipped += 1
                stats.chunks += row[4]
                touched.append((candidate.size, candidate.mtime_ns, row[0]))
            else:
                existing = None if row is None or reindex else row[0]
                if existing is None:
                    stats.added += 1
                else:
                    stats.updated += 1
                count = len(result.contents)
                stats.chunks += count
                if vectors_on:
                    stats.embeddings += count
                if not dry_run:
                    cite = row[5] if existing is not None and row is not None else labels.cite(candidate)
                    batch.append(Pending(candidate, result, existing, cite))
                    batch_bytes += candidate.size
                    batch_chunks += count
            pace.took(candidate.size)
            flushed = False
            if batch and (
                pace.full(len(batch), batch_bytes) or (vectors_on and batch_chunks >= _BATCH_CHUNKS_EMBEDDED)
            ):
                _flush(writer, batch, embedder if vectors_on else None, manifest, labels)
                pace.flushed()
                batch, batch_bytes, batch_chunks = [], 0, 0
                flushed = True
            # With embeddings, the model's pass over each batch is nearly all the time (an in-process
            # contextual model: tens of chunks a second), so files count as done once their batch is
            # written: reporting them as they are read would run the count ahead and then stall.
            if progress is not None and (flushed or not embedding or not batch):
                progress(done, total, job.key)
        if not dry_run:
            if batch:
                _flush(writer, batch, embedder if vectors_on else None, manifest, labels)
                if progress is not None:
                    progress(done, total, batch[-1].candidate.key)
            writer.finish()
    finally:
        writer.close()
        if deferred:
            with db:
                create_fingerprint_index(db)
    if not dry_run:
        with db:
            labels.save(db)
        if touched:
            with db:
                db.executemany("UPDATE documents SET size = ?, mtime_ns = ? WHERE id = ?", touched)
        if reconcile:
            gone = [path for path in known if path not in seen and any(_under(path, r) for r in found.root_keys)]
            with db:
                db.executemany("DELETE FROM documents WHERE path = ?", [(p,) for p in gone])
            stats.removed = len(gone)
        with db:
            settle_dates(db)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stray = sorted(old for olds in legacy.values() for old in olds)
    if stray:
        # Said on every run until resolved: these rows are neither refreshed nor pruned by any walk.
        stats.notes.append(
            f"{len(stray)} document(s) from an older index were not found under the walked paths and keep "
            f'their old key, e.g. "{stray[0]}": they stay searchable; remove them, or index their folder '
            "if their files still exist"
        )
    return stats


def _embed_batch(batch: list[Pending], embedder: Embedder, manifest: Manifest | None) -> list[bytes]:
    inputs = [
        document_input(embedder, heading, content)
        for p in batch
        for heading, content in zip(p.result.headings, p.result.contents, strict=True)
    ]
    if not inputs:
        return []
    vectors = embedder.embed(inputs)
    if len(vectors) != len(inputs):
        raise EmbedderError(f"embedder returned {len(vectors)} vectors for {len(inputs)} chunks")
    dimension = manifest.dimension if manifest is not None else len(vectors[0])
    for v in vectors:
        if len(v) != dimension:
            raise EmbeddingDimensionError(
                f'embedding dimension does not match the index: model "{embedder.model}" now emits dimension '
                f"{len(v)} but the index was built at {dimension}"
            )
    return [pack(normalise(v)) for v in vectors]


_SMALL_BYTES = 256 * 1024
"""With a helper, the first and last batches weigh this little (see `_Pace`)."""


def _file_bytes() -> int:
    """What a file weighs in a batch besides its bytes: a full batch is 500 small files or 4 MB of text."""
    return _BATCH_BYTES // _BATCH_FILES


class _Pace:
    """When a batch is full: at 500 files or 4 MB; with a helper, also small at both ends of the run.

    The helper has nothing to write while the first batch is prepared, and the caller nothing to do while
    the last one is written: so the first batch is small, each next may weigh twice as much, and the last
    ones shrink to half of what is left, down to `_SMALL_BYTES`. A batch weighs its bytes and
    `_file_bytes()` a file (every commit costs FTS5 a segment: tldr-pages, 7.4k one-chunk files, took
    0.55 s in 98 batches weighed by bytes alone, against 0.39 s for the caller alone in 15).
    """

    def __init__(self, helper: bool, work: list[tuple[Job, Candidate, _Row | None]]) -> None:
        self.helper = helper
        self.left = sum(job.size for job, _, _ in work) + len(work) * _file_bytes()
        """What the files not yet taken into a batch weigh."""
        self.limit = _BATCH_BYTES
        self._grown = _SMALL_BYTES // 2
        self.flushed()

    def took(self, size: int) -> None:
        """Count a file of `size` bytes as taken (into a batch or not)."""
        self.left -= size + _file_bytes()

    def full(self, files: int, size: int) -> bool:
        """Whether a batch of `files` files and `size` bytes is to be written now."""
        if files >= _BATCH_FILES or size >= _BATCH_BYTES:
            return True
        return self.helper and size + files * _file_bytes() >= self.limit

    def flushed(self) -> None:
        """Set the limit of the next batch."""
        if self.helper:
            self._grown = min(_BATCH_BYTES, 2 * self._grown)
            self.limit = max(_SMALL_BYTES, min(self._grown, self.left // 2))


def _helps(work: list[tuple[Job, Candidate, _Row | None]]) -> bool:
    """Whether the work holds more than a full batch of text, in files of 1 KB or more on average.

    The helper overlaps SQLite's time, which grows with the text, with the caller's, which also grows
    with the files. Same run, idle machine, caller alone against a helper: generated 1k files (7 MB)
    0.334 -> 0.292 s, influxdata-docs (22 MB, 4.4 KB a file) 1.07 -> 0.77 s, but tldr-pages (4.3 MB in
    7.4k files of 0.6 KB, whose raw FTS5 insert takes 0.10 s of its 0.39 s) 0.389 -> 0.400 s.
    """
    size = sum(job.size for job, _, _ in work)
    return size > _BATCH_BYTES and size >= 1024 * len(work)


def _flush(
    writer: BatchWriter, batch: list[Pending], embedder: Embedder | None, manifest: Manifest | None, labels: _Labels
) -> None:
    # Embedding before the transaction opens: a slow embeddings server never holds the write lock.
    blobs = _embed_batch(batch, embedder, manifest) if embedder is not None else []
    writer.write(batch, labels.take(), blobs)
