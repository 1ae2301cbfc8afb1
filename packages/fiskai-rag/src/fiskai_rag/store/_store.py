"""The Store: one knowledge index directory, opened as the single writer or as a reader."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Concatenate, Literal, ParamSpec, TypeVar

import apsw

from fiskai_rag.embed import Embedder, StaticEmbedder
from fiskai_rag.errors import (
    NOT_BUILT_TEXT,
    CitationError,
    EmbedderError,
    EmbeddingDimensionError,
    IndexNotBuiltError,
    ManifestMismatchError,
    RagError,
    Remedy,
    StoreCorruptError,
)
from fiskai_rag.search._burstiness import reweight
from fiskai_rag.search._distinct import distinct, with_copies
from fiskai_rag.search._knn import Background, VectorMatrix, load_matrix, numpy_available, vec0_nearest
from fiskai_rag.search._postings import HeldPostings
from fiskai_rag.search._proximity import RESCORE_POOL, PairSide, proximity
from fiskai_rag.search._search import (
    MAX_TOP_K,
    SEARCH_FANOUT,
    Hit,
    fts_query,
    fuse,
    hybrid_tier,
    hydrate,
    lexical,
    names_only,
    per_document,
    rank_fused,
)
from fiskai_rag.search._section import prefer_sections
from fiskai_rag.search._topk import PRUNE_MIN_CHUNKS, pruned_top

from ._citation import Citation
from ._db import (
    DB_NAME,
    FORMAT_VERSION,
    LOCK_NAME,
    Conn,
    Manifest,
    clear_index,
    corruption_guard,
    open_reader,
    open_writer,
    read_manifest,
)
from ._lock import WriterLock
from ._sql import Columns, chunk_rows, find_chunk, find_documents
from ._vec import load_vec, normalise, pack, vec_available

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Collection

    from fiskai_rag.index._index import IndexStats, Progress
    from fiskai_rag.pack._build import Pack

__all__ = ["DEFAULT_TOP_K", "SearchResult", "Source", "Store", "StoreStats", "open_store"]

DEFAULT_TOP_K = 5
_KNN_MMAP_BYTES = 512 * 1024 * 1024
_MAX_QUERY_BYTES = 8192
NOT_BUILT_NOTE = NOT_BUILT_TEXT
EMPTY_NOTE = "the knowledge index is empty or the query had no searchable terms"
DEGRADED_NOTE = "the embeddings server was unreachable, so this query used the lexical tier only"

MODEL_DEGRADED_NOTE = "the embedding model could not be loaded, so this query used the lexical tier only"
_MODEL_DEGRADED = "hybrid -> DEGRADED to lexical (embedding model unavailable"

Status = Literal["ok", "index_not_built", "index_empty"]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits best first, with a soft status instead of an exception for a missing or empty index."""

    hits: list[Hit]
    status: Status
    tier: str
    """`lexical (FTS5) - ...`, `hybrid (FTS5 + vectors, RRF|score blend) - ...`, or `hybrid -> DEGRADED ...`."""
    degraded: str | None = None
    """Why the vector tier was skipped for this query (the embeddings server failed), if it was."""

    @property
    def note(self) -> str | None:
        """One sentence for a model or an operator explaining a non-ok status or a degraded search."""
        if self.status == "index_not_built":
            return NOT_BUILT_NOTE
        if self.status == "index_empty":
            return EMPTY_NOTE
        if not self.degraded:
            return None
        return MODEL_DEGRADED_NOTE if self.tier.startswith(_MODEL_DEGRADED) else DEGRADED_NOTE


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

    def __init__(self, directory: Path, *, read_only: bool, embedder: Embedder | None) -> None:
        self.directory = directory
        self.db_path = directory / DB_NAME
        self.read_only = read_only
        self.embedder = embedder
        self._db: Conn | None = None
        self._lock: WriterLock | None = None
        self._manifest: Manifest | None = None
        self._damaged: StoreCorruptError | None = None
        self._vec_loaded = False
        self._mutex = threading.RLock()
        self._knn_db: Conn | None = None
        self._pairs = PairSide(self.db_path)
        self._postings = HeldPostings(self.db_path)
        self._searched = False
        """Whether a search has run: the pair worker serves only a store that searches again."""
        self._matrix: tuple[VectorMatrix, int] | None = None
        """Every vector in memory and the KNN connection's data_version it was read at (see _knn.py)."""
        self._matrix_loader: threading.Thread | None = None
        self._matrix_refused = False
        self._last_version: int | None = None
        self._closed = False
        self._dimension_checked = False

    # -- lifecycle -----------------------------------------------------------------------------------

    def _open(self) -> None:
        if self.read_only:
            if self.db_path.exists():
                self._db = open_reader(self.db_path)
                if self._db is not None:
                    self._load_manifest()
            return
        lock = WriterLock(self.directory / LOCK_NAME)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock.acquire()
        except OSError as err:
            raise RagError(f"cannot use knowledge store directory {self.directory}: {err.strerror or err}") from err
        self._lock = lock
        try:
            self._db = open_writer(self.db_path)
            self._load_manifest()
        except StoreCorruptError as err:
            self._damaged = err  # kept so that reset() can still repair the store
            self._db = None
        except BaseException:
            self.close()
            raise

    def _load_manifest(self) -> None:
        db = self._require_db()
        with corruption_guard(self.db_path):
            manifest = read_manifest(db)
        self._manifest = manifest
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
            self._vec_loaded = True
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

    @_serialised
    def close(self) -> None:
        """Close the database and release the writer lock; safe to call twice."""
        # A matrix or postings loader still running reads through its own connection and drops its result
        # once it sees the store closed; a process exiting does not wait for it (a daemon thread).
        self._closed = True
        self._matrix = None
        self._pairs.close()
        self._postings.close()
        for db in (db for db in (self._db, self._knn_db) if db is not None):
            db.close()
        self._db = self._knn_db = None
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _require_db(self) -> Conn:
        if self._damaged is not None:
            raise self._damaged
        if self._db is None and self.read_only and self.db_path.exists():
            self._db = open_reader(self.db_path)
            if self._db is not None:
                self._load_manifest()
        if self._db is None:
            raise IndexNotBuiltError(self.db_path)
        return self._db

    def _writer(self) -> Conn:
        if self.read_only:
            raise RagError("this store was opened read-only; open it with read_only=False to write")
        return self._require_db()

    # -- reading -------------------------------------------------------------------------------------

    @property
    def built(self) -> bool:
        """Whether the index file exists."""
        return self.db_path.exists()

    @_serialised
    def manifest(self) -> Manifest | None:
        """The pinned embedding manifest, or None before the first index run."""
        with contextlib.suppress(IndexNotBuiltError):
            self._require_db()
        return self._manifest

    @_serialised
    def tier(self) -> str:
        """Which search tier runs: `lexical (FTS5) - ...` or `hybrid (FTS5 + vectors, <fusion>) - ...`."""
        if self.embedder is None:
            return "lexical (FTS5) - no embeddings configured"
        manifest = self.manifest()
        dimension = manifest.dimension if manifest is not None else 0
        return hybrid_tier(self.embedder, dimension)

    @_serialised
    def search(self, query: str, *, top_k: int | None = None) -> SearchResult:
        """Search the index.

        Args:
            query: Free text; never interpreted as FTS5 syntax.
            top_k: How many hits (default 5, capped at 20, at least 1).

        Returns:
            Hits best first; status `index_not_built` or `index_empty` instead of raising.

        Raises:
            EmbeddingDimensionError: The embeddings model now emits another dimension than the index.
            StoreCorruptError: The index file is damaged.
        """
        k = max(1, min(MAX_TOP_K, top_k if top_k is not None and top_k > 0 else DEFAULT_TOP_K))
        try:
            db = self._require_db()
        except IndexNotBuiltError:
            return SearchResult([], "index_not_built", self.tier())
        tier = self.tier()
        with corruption_guard(self.db_path):
            match = fts_query(query)
            if not match or not db.execute("SELECT EXISTS(SELECT 1 FROM chunks)").fetchall()[0][0]:
                return SearchResult([], "index_empty", tier)
            degraded: str | None = None
            knn: Background[list[tuple[int, float]]] | list[tuple[int, float]] | None = None
            static = rank_fused(self.embedder)
            vectors_on = self.embedder is not None and self._manifest is not None and self._manifest.has_vectors
            # A query of bare names (`--port`) gives a contextual model nothing to read (see `names_only`).
            if vectors_on and (static or not names_only(query)):
                try:
                    blob = self._query_vector(query)  # before any transaction: a slow server holds nothing
                except EmbeddingDimensionError:
                    raise
                except EmbedderError as err:
                    degraded = str(err)
                else:
                    # A query vector of zeros (no token the model knows) ranks every chunk the same: its
                    # KNN order would be arbitrary noise, so the search stays lexical. The in-memory
                    # matrix answers in about 2 ms, less than starting a thread on a loaded machine;
                    # sqlite-vec's KNN runs on a second connection in a helper thread while this thread
                    # runs the FTS query: apsw releases the GIL inside SQLite, so the two sides overlap
                    # and a hybrid search costs about its slower side rather than the sum of both.
                    if blob is not None:
                        knn = self._knn_from_matrix(blob)
                        if knn is None:
                            knn = Background(functools.partial(self._knn, blob), name="fiskai-rag-knn")
            with db:
                lexical_ranked = self._rescored(db, match)
                if any(c.isdigit() for c in query):
                    # A question naming a version (`influxdb 3`, `v2`) prefers that version's document
                    # tree; only one with a digit can, so others never import the step.
                    from fiskai_rag.search._version import prefer_versions

                    lexical_ranked = prefer_versions(db, query, lexical_ranked)
                # A verbose question naming a documentation tree (`chronograf`) prefers its chunks.
                lexical_ranked = prefer_sections(db, query, lexical_ranked)
                if knn is None:
                    ranked = lexical_ranked
                else:
                    ranked = fuse(lexical_ranked, knn if isinstance(knn, list) else knn.result(), static=static)
                # Copies of a better-ranked section go before the per-document cap counts them.
                folded = distinct(db, ranked, k)
                ranked = per_document(db, folded.ranked, owners=folded.owners)[:k]
                # Rows a writer removed between the two sides' snapshots are skipped here.
                hits = with_copies(db, hydrate(db, ranked), folded)
            self._searched = True
        if degraded is not None:
            if isinstance(self.embedder, StaticEmbedder):
                tier = f"{_MODEL_DEGRADED}: {degraded})"
            else:
                tier = f"hybrid -> DEGRADED to lexical (embeddings unreachable: {degraded})"
        return SearchResult(hits, "ok", tier, degraded)

    def _rescored(self, db: Conn, match: str) -> list[tuple[int, float]]:
        """The best BM25 chunks re-scored by bursty words (`_burstiness`) and term proximity, best first.

        A large store scores only the chunks that can be among the best (`_topk`), or holds them all in
        memory once it searches again (`_postings`). From a store's second search on, without held
        postings, the pair queries may run in the pair worker beside the BM25 query (`PairSide`).
        """
        (size,) = db.execute("SELECT max(id) FROM chunks").fetchall()[0]  # about the store's size
        large = size is not None and int(size) >= PRUNE_MIN_CHUNKS
        # Held postings give the same rows in a tenth of the time: the pair queries then follow on the pool.
        held = self._postings.current(db, int(size or 0))
        top = held.top_of(db, match, RESCORE_POOL) if held is not None else None
        pairs = self._pairs.start(match, int(size or 0)) if self._searched and top is None else None
        try:
            if top is None:
                top = (pruned_top(db, match, RESCORE_POOL) if large else None) or lexical(db, match, RESCORE_POOL)
            weighted = reweight(db, match, top, held)
        except BaseException:
            if pairs is not None:  # collected, so the worker is free; this error is the one to report
                with contextlib.suppress(Exception):
                    pairs.result()
            raise
        return proximity(db, match, weighted, pairs.result() if pairs is not None else None)

    def _knn_connection(self) -> Conn:
        if self._knn_db is None:
            knn_db = open_reader(self.db_path)
            if knn_db is None:  # the file was replaced by an empty one since the search began
                raise IndexNotBuiltError(self.db_path)
            load_vec(knn_db)
            # A KNN reads every vector: through mmap SQLite skips copying each page into its cache
            # (measured on influxdata-docs, 39,854 x 256 dims: 17.9 -> 12.2 ms a query).
            knn_db.execute(f"PRAGMA mmap_size={_KNN_MMAP_BYTES}")
            self._knn_db = knn_db
        return self._knn_db

    def _data_version(self) -> int:
        # data_version changes whenever another connection commits: the matrix is valid only for the
        # version it was read at.
        with corruption_guard(self.db_path):
            return int(self._knn_connection().execute("PRAGMA data_version").fetchall()[0][0])

    def _knn_from_matrix(self, blob: bytes) -> list[tuple[int, float]] | None:
        """The KNN from the in-memory matrix when it is current; None when sqlite-vec must answer."""
        loaded = self._matrix
        if loaded is None:
            return None
        version = self._data_version()
        if loaded[1] != version:
            # The index changed: sqlite-vec answers, and the matrix is reloaded only after the next
            # search has seen the store quiet (an index run commits many times).
            self._matrix = None
            self._last_version = None
            return None
        self._last_version = version
        return loaded[0].nearest(blob, SEARCH_FANOUT)

    def _knn(self, blob: bytes) -> list[tuple[int, float]]:
        """sqlite-vec's KNN (in the helper thread); starts loading the matrix when the store is quiet."""
        version = self._data_version()
        if version == self._last_version:
            self._start_matrix_load(version)
        self._last_version = version
        with corruption_guard(self.db_path):
            return vec0_nearest(self._knn_connection(), blob, SEARCH_FANOUT)

    def _start_matrix_load(self, version: int) -> None:
        """Load every vector into memory in the background: this process searches again (see _knn.py).

        Called when two hybrid searches in a row saw the store unchanged, so a one-shot CLI search never
        loads it and a reader does not reload after every commit of an index run in progress.
        """
        loader = self._matrix_loader
        if self._matrix_refused or (loader is not None and loader.is_alive()) or not numpy_available():
            return
        manifest = self._manifest
        assert manifest is not None
        loader = threading.Thread(
            target=self._load_matrix, args=(version, manifest.dimension), name="fiskai-rag-vectors", daemon=True
        )
        self._matrix_loader = loader
        loader.start()

    def _load_matrix(self, version: int, dimension: int) -> None:
        try:
            db = open_reader(self.db_path)
            if db is None:
                return
            try:
                load_vec(db)
                matrix = load_matrix(db, dimension)
            finally:
                db.close()
        except Exception:  # noqa: BLE001  # any failure (damage, memory) leaves the KNN to sqlite-vec
            self._matrix_refused = True
            return
        if matrix is None:
            self._matrix_refused = True  # too small or too large to be worth holding
        elif not self._closed:
            # Read at a snapshot no older than `version`: if a commit slipped in between, the
            # connection's data_version has moved on and the next search drops this matrix.
            self._matrix = (matrix, version)

    def _query_vector(self, query: str) -> bytes | None:
        """The query's unit vector as vec0 stores it; None for a vector of zeros (nothing to rank by)."""
        embedder = self.embedder
        manifest = self._manifest
        assert embedder is not None and manifest is not None
        raw = query.encode()[:_MAX_QUERY_BYTES].decode(errors="ignore")
        vectors = embedder.embed([embedder.query_prefix + raw])
        if len(vectors) != 1 or not vectors[0]:
            raise EmbedderError("the embeddings server returned no vector for the query")
        if len(vectors[0]) != manifest.dimension:
            raise EmbeddingDimensionError(
                f'embedding dimension does not match the index: model "{embedder.model}" now emits dimension '
                f"{len(vectors[0])} but the index was built at {manifest.dimension}"
            )
        if not any(vectors[0]):
            return None
        return pack(normalise(vectors[0]))

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
            db: Conn | None = self._require_db()
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
            )

    def _seed_ids(self, text: str) -> list[tuple[int, str, tuple[str, ...]]]:
        # A pack starts from what search would show for the same words (see `fiskai_rag.pack._build`).
        return [(hit.chunk_id, hit.citation, hit.also) for hit in self.search(text, top_k=MAX_TOP_K).hits]

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
        db = self._require_db()
        with corruption_guard(self.db_path), db:
            cols = Columns.of(db)
            chunk_id = find_chunk(db, cols, parsed, base=None if base is None else os.fspath(base))
            row = chunk_rows(db, cols, [chunk_id]).get(chunk_id) if chunk_id is not None else None
        if row is None:
            raise CitationError(str(citation), "not_found")
        return Hit.of(row, 0.0)

    @_serialised
    def sources(self) -> list[Source]:
        """Every indexed file, sorted by citation path; empty when nothing is indexed."""
        try:
            db = self._require_db()
        except IndexNotBuiltError:
            return []
        with corruption_guard(self.db_path):
            cols = Columns.of(db)
            indexed = "d.indexed_ns" if cols.cite == "d.cite" else "NULL"
            rows = db.execute(
                f"SELECT {cols.cite}, d.path, d.chunk_count, {indexed}, d.mtime_ns FROM documents d ORDER BY 1"
            ).fetchall()
        return [
            Source(str(cite), str(path), int(count), None if when is None else int(when), int(mtime_ns))
            for cite, path, count, when, mtime_ns in rows
        ]

    @_serialised
    def stats(self) -> StoreStats:
        """Counts, manifest and file sizes; zeros when the index is not built."""
        documents = chunks = vectors = 0
        built = self.built
        if built:
            db = self._require_db()
            with corruption_guard(self.db_path):
                documents = int(db.execute("SELECT count(*) FROM documents").fetchall()[0][0])
                chunks = int(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0])
                if self._vec_loaded and db.execute("SELECT 1 FROM sqlite_master WHERE name='chunks_vec'").fetchall():
                    vectors = int(db.execute("SELECT count(*) FROM chunks_vec").fetchall()[0][0])
        wal = self.db_path.with_name(DB_NAME + "-wal")
        return StoreStats(
            directory=self.directory,
            db_path=self.db_path,
            built=built,
            documents=documents,
            chunks=chunks,
            vectors=vectors,
            manifest=self._manifest,
            db_bytes=_size(self.db_path),
            wal_bytes=_size(wal),
            modified_ns=max(_mtime(self.db_path), _mtime(wal)) if built else None,
        )

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

        db = self._writer()
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
            )
            self._manifest = read_manifest(db)
        if self.embedder is not None and self._manifest is not None and self._manifest.has_vectors:
            self._vec_loaded = True  # prepare_vector_tier loaded vec0 into this connection
        return result

    @_serialised
    def remove(self, path: str, *, base: str | os.PathLike[str] | None = None) -> bool:
        """Remove one document (writer only); True when it was indexed.

        Args:
            path: Its citation path (as `sources` lists it), its absolute path, or (with `base`) a path
                relative to `base`.
            base: The folder a relative path is read against.
        """
        db = self._writer()
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
        if self.read_only:
            raise RagError("this store was opened read-only; open it with read_only=False to write")
        if self._damaged is not None:
            self._recreate()
            return 0, 0
        db = self._writer()
        with corruption_guard(self.db_path):
            documents = int(db.execute("SELECT count(*) FROM documents").fetchall()[0][0])
            chunks = int(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0])
            try:
                clear_index(db)
            except apsw.SQLError:
                # Typically a vector table whose module (sqlite-vec) is not installed here: start afresh.
                self._recreate()
                return documents, chunks
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._manifest = None
        return documents, chunks

    def _recreate(self) -> None:
        """Replace the index file with a new empty one (the writer lock is held throughout)."""
        if self._db is not None:
            self._db.close()
            self._db = None
        for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"):
            with contextlib.suppress(FileNotFoundError):
                (self.directory / name).unlink()
        self._damaged = None
        self._db = open_writer(self.db_path)
        self._manifest = None


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


def open_store(store_dir: str | os.PathLike[str], *, read_only: bool, embedder: Embedder | None = None) -> Store:
    """Open a knowledge index directory.

    Args:
        store_dir: The directory holding `knowledge.db`; a writer creates it (mode 0700).
        read_only: True for searching (agents, MCP): never locks, never writes, tolerates a missing
            index. False for the single writer: takes the cross-process writer lock first.
        embedder: Turns on the vector tier; None means lexical only.

    Returns:
        The open store; close it (or use it as a context manager).

    Raises:
        IndexLockedError: A writer is requested while another process writes the index.
        ManifestMismatchError: A reader's embedder does not match the model the index was built with.
        StoreCorruptError: A reader found a damaged index file (a writer defers this to allow `reset`).
    """
    store = Store(Path(store_dir), read_only=read_only, embedder=embedder)
    store._open()  # pyright: ignore[reportPrivateUsage]
    return store
