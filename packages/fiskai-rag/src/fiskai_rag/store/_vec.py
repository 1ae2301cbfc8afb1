"""sqlite-vec for the vector tier (the `vector` extra), loaded without importing `sqlite_vec`.

Importing the `sqlite_vec` package costs 15-30 ms because it imports the stdlib `sqlite3`; the loadable
`vec0` library sits beside its `__init__`, so locating the package spec is enough and keeps the search
path fast. Every connection, reader or writer, loads the extension itself.
"""

from __future__ import annotations

import importlib.util
import math
import os
from array import array
from collections.abc import Sequence

import apsw

from fiskai_rag.errors import VectorExtensionError

from ._db import Conn

__all__ = ["load_vec", "normalise", "pack", "vec_available"]

_INSTALL_HINT = "the vector tier needs sqlite-vec: pip install 'fiskai-rag[vector]'"


def _vec0_path() -> str | None:
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(spec.submodule_search_locations[0], "vec0")


def vec_available() -> bool:
    """Whether the sqlite-vec package is installed (it may still fail to load)."""
    return _vec0_path() is not None


def load_vec(db: Conn) -> str:
    """Load vec0 into a connection.

    Args:
        db: The connection that will read or write `chunks_vec`.

    Returns:
        The `vec_version()` of the loaded extension.

    Raises:
        VectorExtensionError: sqlite-vec is not installed or its library will not load.
    """
    path = _vec0_path()
    if path is None:
        raise VectorExtensionError(_INSTALL_HINT)
    try:
        db.enable_load_extension(True)
        db.load_extension(path)
    except apsw.Error as err:
        raise VectorExtensionError(f"cannot load sqlite-vec from {path}: {err}") from err
    finally:
        db.enable_load_extension(False)
    return str(db.execute("SELECT vec_version()").fetchall()[0][0])


def normalise(vector: Sequence[float]) -> list[float]:
    """Scale a vector to unit L2 length; a zero vector is returned unchanged."""
    # hypot is exact-rounded like fsum of squares, and runs in C: it was most of a static model's
    # per-chunk Python cost when indexing.
    norm = math.hypot(*vector)
    if norm == 0.0:
        return [float(x) for x in vector]
    return [x / norm for x in vector]


def pack(vector: Sequence[float]) -> bytes:
    """Encode a vector as the native float32 blob vec0 stores."""
    return array("f", vector).tobytes()
