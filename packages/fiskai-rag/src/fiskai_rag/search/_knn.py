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
smaller than `MATRIX_MIN_VECTORS` (where sqlite-vec is already about a millisecond) or larger than
`MATRIX_MAX_BYTES` keep sqlite-vec.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fiskai_rag.store._db import Conn

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["MATRIX_MAX_BYTES", "MATRIX_MIN_VECTORS", "Background", "VectorMatrix", "load_matrix", "vec0_nearest"]

MATRIX_MIN_VECTORS = 8192
"""Below this many vectors sqlite-vec's KNN costs about a millisecond: not worth numpy's memory."""
MATRIX_MAX_BYTES = 512 * 1024 * 1024
"""Above this the matrix would cost more memory than a search process should hold; sqlite-vec answers."""

_T = TypeVar("_T")


class Background(Generic[_T]):
    """One call run in a helper thread; `result()` waits for it and re-raises its exception.

    A bare thread rather than `concurrent.futures`, whose import pulls in `logging` (8-16 ms of a CLI
    search that runs one KNN and exits).
    """

    def __init__(self, call: Callable[[], _T], *, name: str) -> None:
        self._call = call
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._call()
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
        if total < MATRIX_MIN_VECTORS or total * dimension * 4 > MATRIX_MAX_BYTES:
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
