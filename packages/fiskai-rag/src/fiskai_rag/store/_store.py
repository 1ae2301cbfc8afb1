"""The Store: the face of one knowledge index directory, opened as the single writer or as a reader.

Each method takes the store's lock and hands the work to where it lives: the directory's lifecycle and
the writer lock (`_files`), search (`fiskai_rag.search._stages`: the ranking as a list of named stages,
and the helpers a store keeps between searches), context packs (`fiskai_rag.pack`), indexing
(`fiskai_rag.index`) and the catalogue (`_catalog`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, Literal, ParamSpec, TypeVar

import apsw

from fiskai_rag.embed import Embedder, StaticEmbedder
from fiskai_rag.errors import CitationError, IndexNotBuiltError, RagError
from fiskai_rag.search._enumerate import Enumeration, enumerate_documents
from fiskai_rag.search._fusion import hybrid_tier
from fiskai_rag.search._hit import DEFAULT_TOP_K, MAX_TOP_K, MODEL_DEGRADED, Hit, SearchResult
from fiskai_rag.search._query import fts_query
from fiskai_rag.search._stages import SearchRun, Sides, check_stages, run_search

from ._catalog import Source, StoreStats, list_sources, store_stats
from ._citation import Citation
from ._db import Conn, Manifest, clear_index, corruption_guard, read_manifest
from ._files import StoreFiles
from ._pending import vectors_pending
from ._sql import Columns, chunk_rows, find_chunk, find_documents

if TYPE_CHECKING:
    import datetime as dt

    from fiskai_rag.index._index import IndexStats, Progress
    from fiskai_rag.pack._build import Pack, SeedHits

__all__ = ["VECTORS_CATCHING_UP", "Store", "open_store"]

VECTORS_CATCHING_UP = "searching lexically until the vectors catch up (fiskai knowledge index finishes them)"

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _serialised(method: Callable[Concatenate[Store, _P], _R]) -> Callable[Concatenate[Store, _P], _R]:
    """Run a Store method under the store's lock.

    One apsw connection must not be used by two threads at once, and an MCP server or an agent calls
    `search` from worker threads concurrently on one shared store.
    """

    @functools.wraps(method)
    def locked(self: Store, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._mutex:  # pyright: ignore[reportPrivateUsage]
            return method(self, *args, **kwargs)

    return locked


class Store:
    """A knowledge index directory (`knowledge.db` + `knowledge.lock`).

    Open with `open_store`. A writer holds the cross-process writer lock until `close`; readers never
    lock and keep searching the last committed state while a writer rebuilds. A reader opened before
    the index exists reports `index_not_built` and picks the index up once it appears.
    """

    def __init__(
        self, directory: Path, *, read_only: bool, embedder: Embedder | None, without_stages: Collection[str] = ()
    ) -> None:
        self._files = StoreFiles(directory, read_only=read_only, embedder=embedder)
        self.directory = directory
        self.db_path = self._files.db_path
        self.read_only = read_only
        self.embedder = embedder
        self.without_stages = check_stages(without_stages)
        """The search stages this store switches off (`fiskai_rag.search._stages.SEARCH_STAGES`)."""
        self._mutex = threading.RLock()
        self._sides = Sides(self.db_path)

    # -- lifecycle -----------------------------------------------------------------------------------

    @_serialised
    def close(self) -> None:
        """Close the database and release the writer lock; safe to call twice."""
        # A matrix or postings loader still running reads through its own connection and drops its result
        # once it sees the store closed; a process exiting does not wait for it (a daemon thread).
        self._sides.close()
        self._files.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _require_db(self) -> Conn:
        return self._files.require_db()

    # -- reading -------------------------------------------------------------------------------------

    @property
    def built(self) -> bool:
        """Whether the index file exists."""
        return self.db_path.exists()

    @_serialised
    def manifest(self) -> Manifest | None:
        """The pinned embedding manifest, or None before the first index run."""
        with contextlib.suppress(IndexNotBuiltError):
            self._files.require_db()
        return self._files.manifest

    @_serialised
    def tier(self) -> str:
        """Which search tier runs: `lexical (FTS5) - ...` or `hybrid (FTS5 + vectors, <fusion>) - ...`."""
        if self.embedder is None:
            return "lexical (FTS5) - no embeddings configured"
        manifest = self.manifest()
        # Before the first index run nothing has pinned a dimension: say none rather than `dim=0`.
        dimension = manifest.dimension if manifest is not None and manifest.dimension else None
        tier = hybrid_tier(self.embedder, dimension)
        if manifest is not None and manifest.has_vectors:
            with contextlib.suppress(RagError):
                if vectors_pending(self._files.require_db()):
                    tier = f"{tier} - {VECTORS_CATCHING_UP}"
        return tier

    @_serialised
    def search(self, query: str, *, top_k: int | None = None, timings: dict[str, float] | None = None) -> SearchResult:
        """Search the index: the ranking stages of `fiskai_rag.search._stages`, in order.

        Args:
            query: Free text; never interpreted as FTS5 syntax.
            top_k: How many hits (default 5, capped at 20, at least 1).
            timings: For benchmarks: each stage's seconds (by stage name, and `hits`) are added here.

        Returns:
            Hits best first; status `index_not_built` or `index_empty` instead of raising.

        Raises:
            EmbeddingDimensionError: The embeddings model now emits another dimension than the index.
            StoreCorruptError: The index file is damaged.
        """
        k = max(1, min(MAX_TOP_K, top_k if top_k is not None and top_k > 0 else DEFAULT_TOP_K))
        try:
            db = self._files.require_db()
        except IndexNotBuiltError:
            return SearchResult([], "index_not_built", self.tier())
        tier = self.tier()
        with corruption_guard(self.db_path):
            match = fts_query(query)
            if not match or not db.execute("SELECT EXISTS(SELECT 1 FROM chunks)").fetchall()[0][0]:
                return SearchResult([], "index_empty", tier)
            manifest = self._files.manifest
            vectors = self.embedder if manifest is not None and manifest.has_vectors else None
            if vectors is not None and vectors_pending(db):
                vectors = None  # part of the corpus has no vector yet (the tier says so): fusing would favour the rest
            run = SearchRun(db, query, match, k, self._sides, vectors, manifest.dimension if manifest else 0)
            hits = run_search(run, without=self.without_stages, timings=timings)
        if run.degraded is not None:
            if isinstance(self.embedder, StaticEmbedder):
                tier = f"{MODEL_DEGRADED}: {run.degraded})"
            else:
                tier = f"hybrid -> DEGRADED to lexical (embeddings unreachable: {run.degraded})"
        return SearchResult(hits, "ok", tier, run.degraded)

    @_serialised
    def context(
        self,
        query: str,
        *,
        budget: int,
        fmt: Literal["text", "json", "jsonl"] = "text",
        explain: bool = False,
        pins: Sequence[str] = (),
        exclude: Collection[str] = (),
        since: dt.date | None = None,
        until: dt.date | None = None,
        since_receipt: str | None = None,
        save_receipt: bool = False,
        today: dt.date | None = None,
        limit: int | None = None,
    ) -> Pack:
        """Build a context pack: the best few chunks for `query` under a hard token budget, with a receipt.

        Deterministic: the same index, inputs and day give byte-identical text. The pack starts from the
        hits `search` returns for the same words (so it carries what the top hits carry, in their order)
        and adds what its own scorer finds beyond them. See `fiskai_rag.pack._build` for the steps and `Pack` for what comes back.

        Args:
            query: Free text; may start or end with one temporal expression (`last week`, `2026-11`, ...).
            budget: The most tokens (UTF-8 bytes / 4, rounded up) the delivered text may take.
            fmt: `text` (one line per item, three receipt lines), `json` (indented) or `jsonl` (one line).
            explain: Include each item's reasons and integer contributions.
            pins: Exact citations to include before ranking (at most a third of the budget).
            exclude: Citations already delivered earlier in the same run; they are skipped.
            since: First day of the window (documents dated by front matter `date:`).
            until: Last day of the window.
            since_receipt: A saved receipt's input_digest: keep only chunks new or changed since it.
            save_receipt: Save this pack's manifest for later `since_receipt` calls.
            today: The day temporal expressions resolve against (default: the local date).
            limit: At most this many items (pins aside); None for as many as the budget holds.

        Returns:
            The pack; a missing index gives status `index_not_built` rather than an error.

        Raises:
            EmbeddingDimensionError: (a store with an embedder) the model now emits another dimension than
                the index, as `search` raises it.
            PackBudgetError: The budget cannot hold even the receipt and notice; `.minimum_budget` says what can.
            QueryWindowError: Two temporal expressions, or one with since/until.
            ReceiptNotFoundError: `since_receipt` names no saved receipt of this store and query.
            StoreCorruptError: The index file is damaged.
        """
        from fiskai_rag.pack._build import build_pack  # the pack path's modules load only when a pack is asked for

        try:
            db: Conn | None = self._files.require_db()
        except IndexNotBuiltError:
            db = None
        with corruption_guard(self.db_path):
            return build_pack(
                db,
                store_dir=self.directory,
                query=query,
                budget=budget,
                fmt=fmt,
                explain=explain,
                pins=pins,
                exclude=exclude,
                since=since,
                until=until,
                since_receipt=since_receipt,
                save_receipt=save_receipt,
                today=today,
                seed=self._seed_ids,
                limit=limit,
            )

    def _seed_ids(self, text: str) -> SeedHits:
        # A pack starts from what search would show for the same words (see `fiskai_rag.pack._build`).
        from fiskai_rag.pack._build import SeedHits

        result = self.search(text, top_k=MAX_TOP_K)
        manifest = self._files.manifest
        vectors = self.embedder is not None and manifest is not None and manifest.has_vectors
        return SeedHits(
            [(hit.chunk_id, hit.citation, hit.also) for hit in result.hits],
            vectors=vectors and result.degraded is None,
            degraded=result.degraded,
        )

    @_serialised
    def show(self, citation: str | Citation, *, base: str | os.PathLike[str] | None = None) -> Hit:
        """Resolve a citation to its chunk.

        Args:
            citation: `<path>#<ordinal>`; the path is a citation path (as search prints it), a document's
                absolute path, or (with `base`) a path relative to `base`.
            base: The folder a relative path is read against (a CLI passes its working directory).

        Raises:
            CitationError: The citation is malformed or matches no chunk.
            IndexNotBuiltError: There is no index yet.
        """
        parsed = citation if isinstance(citation, Citation) else Citation.parse(citation)
        db = self._files.require_db()
        with corruption_guard(self.db_path), db:
            cols = Columns.of(db)
            chunk_id = find_chunk(db, cols, parsed, base=None if base is None else os.fspath(base))
            row = chunk_rows(db, cols, [chunk_id]).get(chunk_id) if chunk_id is not None else None
        if row is None:
            raise CitationError(str(citation), "not_found")
        return Hit.of(row, 0.0)

    @_serialised
    def enumerate(self, query: str, *, limit: int | None = None, min_body_matches: int = 0) -> Enumeration:
        """Every document a match query selects (`fiskai_rag.search._enumerate` gives the syntax), not top-k.

        Returns:
            At most `limit` documents (default 200, at most 1000) with how many matched; status
            `index_not_built`, `corpus_empty` or `query_empty` instead of raising.
        """
        try:
            db = self._files.require_db()
        except IndexNotBuiltError:
            return Enumeration("index_not_built", [], 0, 0, limit or 0, min_body_matches)
        with corruption_guard(self.db_path), db:
            return enumerate_documents(db, query, limit=limit, min_body_matches=min_body_matches)

    @_serialised
    def sources(self) -> list[Source]:
        """Every indexed file, sorted by citation path; empty when nothing is indexed."""
        try:
            db = self._files.require_db()
        except IndexNotBuiltError:
            return []
        with corruption_guard(self.db_path):
            return list_sources(db)

    @_serialised
    def stats(self) -> StoreStats:
        """Counts, manifest and file sizes; zeros when the index is not built."""
        db = self._files.require_db() if self.built else None
        with corruption_guard(self.db_path):
            return store_stats(self.directory, db, self._files.manifest, vectors=self._files.vec_loaded)

    # -- writing -------------------------------------------------------------------------------------

    @_serialised
    def index(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        reconcile: bool = False,
        reindex: bool = False,
        dry_run: bool = False,
        progress: Progress | None = None,
        defer_vectors: bool = False,
    ) -> IndexStats:
        """Index files and directories incrementally (writer only).

        Args:
            paths: Roots to walk. A document is keyed by its resolved absolute path, so roots indexed
                from different folders never replace each other, and cited under its root folder's
                name (`docs/design.md#3`; see `Citation`).
            reconcile: Remove documents under the walked roots (and only there) whose files no longer exist.
            reindex: Empty the index first and rebuild everything (also after a model change).
            dry_run: Count what would be indexed and embedded; write nothing.
            progress: Called after each file with (done, total, key); with embeddings, once the
                file's batch is written, and first once with key "" to give the total.
            defer_vectors: Write the chunks lexically now and leave their vectors to `embed_pending`:
                the index is searchable (lexically, saying so) as soon as this returns.

        Returns:
            Counts of added, updated, skipped and removed files, chunks and embeddings.

        Raises:
            ManifestMismatchError: The embedder does not match the model the index was built with.
            EmbedderError: The embeddings server failed while indexing.
            PathsNotFoundError: None of `paths` exists (`.paths` names them).
            StoreCorruptError: The index file is damaged or holds another program's tables.
        """
        # Imported here: the indexer (hashing, walking, chunking) is the writer's business, and readers,
        # which agents and `knowledge search` open, start faster without it.
        from fiskai_rag.index._index import run_index

        db = self._files.writer()
        with corruption_guard(self.db_path):
            result = run_index(
                db,
                store_dir=str(self.directory),
                embedder=self.embedder,
                roots=[os.fspath(p) for p in paths],
                reconcile=reconcile,
                reindex=reindex,
                dry_run=dry_run,
                progress=progress,
                defer_vectors=defer_vectors,
            )
            manifest = self._files.manifest = read_manifest(db)
        if self.embedder is not None and manifest is not None and manifest.has_vectors:
            self._files.vec_loaded = True  # prepare_vector_tier loaded vec0 into this connection
        return result

    @_serialised
    def vectors_waiting(self) -> int:
        """How many chunks wait for their vectors (0 when none do or the index has no vector tier)."""
        db = self._files.require_db()
        with corruption_guard(self.db_path):
            if not vectors_pending(db):
                return 0
            from fiskai_rag.index._vectors import count_waiting

            return count_waiting(db)

    @_serialised
    def embed_pending(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Give every chunk an index run deferred its vector (writer only); returns how many were embedded.

        Each batch commits on its own, so an interrupted pass keeps what it did and the next call resumes.

        Raises:
            EmbedderError: The model failed.
            EmbeddingDimensionError: The model now emits another dimension than the index.
        """
        from fiskai_rag.index._vectors import embed_pending

        db = self._files.writer()
        manifest = self._files.manifest = read_manifest(db)
        if self.embedder is None or manifest is None or not manifest.has_vectors:
            return 0
        with corruption_guard(self.db_path):
            if not self._files.vec_loaded:
                from ._vec import load_vec

                load_vec(db)
                self._files.vec_loaded = True
            return embed_pending(db, self.embedder, manifest, progress)

    @_serialised
    def remove(self, path: str, *, base: str | os.PathLike[str] | None = None) -> bool:
        """Remove one document (writer only); True when it was indexed.

        Args:
            path: Its citation path (as `sources` lists it), its absolute path, or (with `base`) a path
                relative to `base`.
            base: The folder a relative path is read against.
        """
        db = self._files.writer()
        with corruption_guard(self.db_path), db:
            found = find_documents(db, Columns.of(db), path, base=None if base is None else os.fspath(base))
            if found:
                db.execute("DELETE FROM documents WHERE id = ?", (found[0][0],))
        return bool(found)

    @_serialised
    def reset(self) -> tuple[int, int]:
        """Delete every document, chunk, vector and the manifest, and shrink the file (writer only).

        A damaged index file is deleted and recreated empty.

        Returns:
            The (documents, chunks) counts that were removed.
        """
        files = self._files
        files.refuse_read_only()
        if files.damaged is not None:
            files.recreate()
            return 0, 0
        db = files.writer()
        with corruption_guard(self.db_path):
            documents = int(db.execute("SELECT count(*) FROM documents").fetchall()[0][0])
            chunks = int(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0])
            try:
                clear_index(db)
            except apsw.SQLError:
                # Typically a vector table whose module (sqlite-vec) is not installed here: start afresh.
                files.recreate()
                return documents, chunks
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        files.manifest = None
        return documents, chunks


def open_store(
    store_dir: str | os.PathLike[str],
    *,
    read_only: bool,
    embedder: Embedder | None = None,
    without_stages: Collection[str] = (),
) -> Store:
    """Open a knowledge index directory.

    Args:
        store_dir: The directory holding `knowledge.db`; a writer creates it (mode 0700).
        read_only: True for searching (agents, MCP): never locks, never writes, tolerates a missing
            index. False for the single writer: takes the cross-process writer lock first.
        embedder: Turns on the vector tier; None means lexical only.
        without_stages: Search ranking stages to switch off, by name (`SEARCH_STAGES`; for measuring
            what a stage does). Every stage runs by default.

    Returns:
        The open store; close it (or use it as a context manager).

    Raises:
        RagError: `without_stages` names a stage that does not exist.
        IndexLockedError: A writer is requested while another process writes the index.
        ManifestMismatchError: A reader's embedder does not match the model the index was built with.
        StoreCorruptError: A reader found a damaged index file (a writer defers this to allow `reset`).
    """
    store = Store(Path(store_dir), read_only=read_only, embedder=embedder, without_stages=without_stages)
    store._files.open()  # pyright: ignore[reportPrivateUsage]
    return store
