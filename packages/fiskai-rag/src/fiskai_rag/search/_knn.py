"""The vector side of a hybrid search: sqlite-vec's KNN, or the same exact KNN over an in-memory matrix.

sqlite-vec answers a KNN by reading every vector through SQLite and keeping its top k with a selection
that costs k passes over each block: on influxdata-docs (38,631 x 256 float32) 10-19 ms a query, most
of an in-process hybrid search's extra cost. A long-lived process (an MCP server, an agent, `knowledge
eval`) searches many times, so once two hybrid searches in a row have seen the store unchanged, the
store loads every vector into a numpy matrix in a background thread, and from then on answers the KNN
with one matrix-vector product: the same exact nearest neighbours (squared L2 as |x|^2 - 2 x.q + |q|^2,
ties to the smaller id) in 2-3 ms (up to 7 ms when other processes compete for memory bandwidth: 40 MB
does not stay in a CPU cache between searches). A one-shot CLI search never pays for numpy (about 200
ms to import) or the load (about 0.3 s): it searches once, through sqlite-vec. The matrix is dropped as
soon as another connection commits to the store (`PRAGMA data_version`) and reloaded once the store is
quiet again, so a reader never ranks by vectors an index run changed.

Memory: 4 bytes x dimensions per chunk (measured +60 MB RSS with numpy for 38,631 x 256); stores
larger than `MATRIX_MAX_BYTES` keep sqlite-vec, and so do stores smaller than `MATRIX_MIN_VECTORS`
(where sqlite-vec is already about a millisecond) unless numpy is already imported: an in-process model
imports it, and beside its query vector the small matrix still saves half a millisecond a search.
"""

from __future__ import annotations

import contextvars
import functools
import importlib.util
import math
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from fiskai_rag.errors import EmbedderError, EmbeddingDimensionError, IndexNotBuiltError
from fiskai_rag.store._db import Conn, corruption_guard, open_reader
from fiskai_rag.store._vec import load_vec, normalise, pack
from fiskai_rag.store._worker import Worker, spare_core

from ._fusion import SEARCH_FANOUT

if TYPE_CHECKING:
    from pathlib import Path

    import numpy.typing as npt

    from fiskai_rag.embed import Embedder

__all__ = [
    "MATRIX_MAX_BYTES",
    "MATRIX_MIN_VECTORS",
    "Background",
    "VectorMatrix",
    "VectorSide",
    "load_matrix",
    "query_vector",
    "vec0_nearest",
]

MATRIX_MIN_VECTORS = 8192
"""Below this many vectors sqlite-vec's KNN costs about a millisecond: not worth importing numpy for.

A process that has numpy already (an in-process model's) holds even a small store's matrix: on 838
chunks of influxdata-docs with all-MiniLM-L6-v2-int8, the hybrid search's `vectors` stage went from
1.55 to 1.10 ms p50 and the whole search from 5.04 to 4.44 ms (lexical 2.69 ms), 400 searches each."""
MATRIX_MAX_BYTES = 512 * 1024 * 1024
"""Above this the matrix would cost more memory than a search process should hold; sqlite-vec answers."""

_KNN_MMAP_BYTES = 512 * 1024 * 1024
_MAX_QUERY_BYTES = 8192

_T = TypeVar("_T")


class Background(Generic[_T]):
    """One call run in a helper thread; `result()` waits for it and re-raises its exception.

    A bare thread rather than `concurrent.futures`, whose import pulls in `logging` (8-16 ms of a CLI
    search that runs one KNN and exits). The call runs in a copy of the caller's context, so whatever the
    caller keeps in context variables (a tracing span an embedder hangs its own under) holds there too.
    """

    def __init__(self, call: Callable[[], _T], *, name: str) -> None:
        self._call = call
        self._context = contextvars.copy_context()
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._context.run(self._call)
        except BaseException as err:  # noqa: BLE001  # handed to the caller of result()
            self._error = err

    def result(self) -> _T:
        """The call's return value (after waiting for it), or its exception raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # pyright: ignore[reportReturnType]  # set whenever no error was raised


def vec0_nearest(db: Conn, blob: bytes, limit: int) -> list[tuple[int, float]]:
    """Chunk ids and L2 distances of the `limit` nearest vectors through sqlite-vec, nearest first."""
    return [
        (int(chunk_id), float(distance))
        for chunk_id, distance in db.execute(
            "SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (blob, limit),
        )
    ]


def numpy_available() -> bool:
    """Whether numpy can be imported (the `semantic` extra), without importing it."""
    return importlib.util.find_spec("numpy") is not None


class VectorMatrix:
    """Every vector of a store in memory: exact nearest neighbours by one matrix-vector product."""

    def __init__(self, ids: npt.NDArray[Any], matrix: npt.NDArray[Any]) -> None:
        import numpy as np

        self._np = np
        self.ids = ids
        self.matrix = matrix
        # |x|^2 per row, in float64 so the distance's cancellation error stays far below float32 rounding.
        self._norms = np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def nearest(self, blob: bytes, limit: int) -> list[tuple[int, float]]:
        """Chunk ids and L2 distances of the `limit` nearest vectors, nearest first (ties: smaller id)."""
        np = self._np
        count = len(self)
        if count == 0 or limit <= 0:
            return []
        query = np.frombuffer(blob, dtype=np.float32)
        if query.shape[0] != self.matrix.shape[1]:
            raise ValueError(f"query has {query.shape[0]} dims, the matrix {self.matrix.shape[1]}")
        # einsum, not `@`: OpenBLAS's threads spin against other work on a loaded machine (a 40k x 256
        # product measured 8 ms p50 through BLAS against 1.9 ms through einsum's single-threaded loop).
        dots = np.einsum("ij,j->i", self.matrix, query)
        squared = self._norms - 2.0 * dots.astype(np.float64) + float(np.dot(query, query))
        take = min(limit, count)
        if take < count:
            # Everything at the cut-off distance goes in too, so that ties are broken by id below and
            # not by argpartition's arbitrary order.
            candidates = np.argpartition(squared, take - 1)[:take]
            cut = squared[candidates].max()
            candidates = np.flatnonzero(squared <= cut)
        else:
            candidates = np.arange(count)
        order = candidates[np.lexsort((self.ids[candidates], squared[candidates]))][:take]
        return [(int(self.ids[i]), math.sqrt(max(0.0, float(squared[i])))) for i in order]


def load_matrix(db: Conn, dimension: int) -> VectorMatrix | None:
    """Read every vector of `chunks_vec` into a matrix; None when the store is too small or too large.

    Args:
        db: A connection with vec0 loaded; read in one transaction (one snapshot).
        dimension: The manifest's dimension.
    """
    with db:
        (count,) = db.execute("SELECT count(*) FROM chunks").fetchall()[0]
        total = int(count)
        if total * dimension * 4 > MATRIX_MAX_BYTES:
            return None
        if total < MATRIX_MIN_VECTORS and "numpy" not in sys.modules:
            return None  # decided before importing numpy: a small store's process never pays for it
        import numpy as np

        # Streamed row by row into numpy's own (64-byte aligned) buffer: no list of 40k blobs beside
        # the matrix, and aligned vector loads in the product (a view into one joined bytes object,
        # whose data starts 32 bytes into its allocation, measured 14.3 against 7.7 ms p50).
        ids = np.empty(total, dtype=np.int64)
        matrix = np.empty((total, dimension), dtype=np.float32)
        flat = memoryview(matrix.data).cast("B")
        width = dimension * 4
        filled = 0
        for chunk_id, blob in db.execute("SELECT chunk_id, embedding FROM chunks_vec"):
            if filled == total or not isinstance(blob, bytes) or len(blob) != width:
                return None  # not one float32 vector of the manifest's dimension per chunk: sqlite-vec
            ids[filled] = chunk_id
            flat[filled * width : (filled + 1) * width] = blob
            filled += 1
    if filled < total:
        ids, matrix = ids[:filled].copy(), matrix[:filled].copy()
    return VectorMatrix(ids, matrix)


def query_vector(embedder: Embedder, dimension: int, query: str) -> bytes | None:
    """The query's unit vector as vec0 stores it; None for a vector of zeros (nothing to rank by).

    Raises:
        EmbedderError: The embedder failed or returned no vector (the search degrades to lexical).
        EmbeddingDimensionError: The model now emits another dimension than the index's.
    """
    raw = query.encode()[:_MAX_QUERY_BYTES].decode(errors="ignore")
    vectors = embedder.embed([embedder.query_prefix + raw])
    if len(vectors) != 1 or not vectors[0]:
        raise EmbedderError("the embeddings server returned no vector for the query")
    if len(vectors[0]) != dimension:
        raise EmbeddingDimensionError(
            f'embedding dimension does not match the index: model "{embedder.model}" now emits dimension '
            f"{len(vectors[0])} but the index was built at {dimension}"
        )
    if not any(vectors[0]):
        return None
    return pack(normalise(vectors[0]))


class VectorSide:
    """The KNN of one store's searches: the in-memory matrix when it is current, else sqlite-vec.

    sqlite-vec runs on a second read connection in a helper thread while the search's own connection
    runs the FTS query (apsw releases the GIL inside SQLite, so a hybrid search costs about its slower
    side). The matrix loads in the background once two searches in a row saw the store unchanged, so a
    one-shot CLI search never loads it and a reader does not reload after every commit of an index run.
    """

    def __init__(self, db_path: Path) -> None:
        self._db_path = db_path
        self._db: Conn | None = None
        self.matrix: tuple[VectorMatrix, int] | None = None
        """Every vector in memory and the KNN connection's data_version it was read at."""
        self.loader: threading.Thread | None = None
        """The thread loading the matrix, once one was started."""
        self._refused = False
        self._last_version: int | None = None
        self._closed = False
        self._worker: Worker[Any] | None = None

    def nearest(self, blob: bytes, dimension: int) -> list[tuple[int, float]] | Background[list[tuple[int, float]]]:
        """The nearest chunks: at once from the matrix, or sqlite-vec's KNN started in a helper thread.

        The matrix answers in about 2 ms, less than starting a thread on a loaded machine. With no core
        spare (`spare_core`) sqlite-vec answers here too: the thread would only wait to be scheduled, and
        `Thread.start` waits with it (at load 6, 838 chunks: a hybrid search 9.8 -> 8.6 ms p50).
        """
        found = self._from_matrix(blob)
        if found is not None:
            return found
        if not spare_core():
            return self._vec0(blob, dimension)
        return Background(functools.partial(self._vec0, blob, dimension), name="fiskai-rag-knn")

    def nearest_here(self, blob: bytes, dimension: int) -> list[tuple[int, float]]:
        """`nearest` answered in the calling thread (the worker beside the search, or with no core spare)."""
        found = self._from_matrix(blob)
        return found if found is not None else self._vec0(blob, dimension)

    def beside(self, call: Callable[[], _T]) -> Worker[_T]:
        """Start `call` (a query's vector and its KNN) in this side's worker thread, in the caller's context.

        A thread that stays, not one per search: `Thread.start` waits until the new thread runs, which
        on a loaded machine held the search itself for milliseconds. The context is copied so a tracing
        span the caller holds stays the parent of the embedder's own. Collect the result before the next.
        """
        worker = self._worker
        if worker is None:
            worker = self._worker = Worker(name="fiskai-rag-query-vector")
        worker.submit(functools.partial(contextvars.copy_context().run, call))
        return cast("Worker[_T]", worker)

    def close(self) -> None:
        """Drop the matrix and close the KNN connection; a load in progress drops its result."""
        self._closed = True
        self.matrix = None
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def _connection(self) -> Conn:
        if self._db is None:
            db = open_reader(self._db_path)
            if db is None:  # the file was replaced by an empty one since the search began
                raise IndexNotBuiltError(self._db_path)
            load_vec(db)
            # A KNN reads every vector: through mmap SQLite skips copying each page into its cache
            # (measured on influxdata-docs, 39,854 x 256 dims: 17.9 -> 12.2 ms a query).
            db.execute(f"PRAGMA mmap_size={_KNN_MMAP_BYTES}")
            self._db = db
        return self._db

    def _data_version(self) -> int:
        # data_version changes whenever another connection commits: the matrix is valid only for the
        # version it was read at.
        with corruption_guard(self._db_path):
            return int(self._connection().execute("PRAGMA data_version").fetchall()[0][0])

    def _from_matrix(self, blob: bytes) -> list[tuple[int, float]] | None:
        """The KNN from the in-memory matrix when it is current; None when sqlite-vec must answer."""
        loaded = self.matrix
        if loaded is None:
            return None
        version = self._data_version()
        if loaded[1] != version:
            # The index changed: sqlite-vec answers, and the matrix is reloaded only after the next
            # search has seen the store quiet (an index run commits many times).
            self.matrix = None
            self._last_version = None
            return None
        self._last_version = version
        return loaded[0].nearest(blob, SEARCH_FANOUT)

    def _vec0(self, blob: bytes, dimension: int) -> list[tuple[int, float]]:
        """sqlite-vec's KNN (in the helper thread); starts loading the matrix when the store is quiet."""
        version = self._data_version()
        if version == self._last_version:
            self._start_load(version, dimension)
        self._last_version = version
        with corruption_guard(self._db_path):
            return vec0_nearest(self._connection(), blob, SEARCH_FANOUT)

    def _start_load(self, version: int, dimension: int) -> None:
        """Load every vector into memory in the background: this process searches again."""
        loader = self.loader
        if self._refused or (loader is not None and loader.is_alive()) or not numpy_available():
            return
        loader = threading.Thread(target=self._load, args=(version, dimension), name="fiskai-rag-vectors", daemon=True)
        self.loader = loader
        loader.start()

    def _load(self, version: int, dimension: int) -> None:
        try:
            db = open_reader(self._db_path)
            if db is None:
                return
            try:
                load_vec(db)
                matrix = load_matrix(db, dimension)
            finally:
                db.close()
        except Exception:  # noqa: BLE001  # any failure (damage, memory) leaves the KNN to sqlite-vec
            self._refused = True
            return
        if matrix is None:
            self._refused = True  # too small or too large to be worth holding
        elif not self._closed:
            # Read at a snapshot no older than `version`: if a commit slipped in between, the
            # connection's data_version has moved on and the next search drops this matrix.
            self.matrix = (matrix, version)
