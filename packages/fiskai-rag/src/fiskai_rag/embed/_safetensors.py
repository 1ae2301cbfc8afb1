"""The safetensors container, read without the `safetensors` package.

A file is 8 bytes of header length, a JSON header naming each tensor's dtype, shape and byte range, then
the data, which the callers memory-map.
"""

from __future__ import annotations

import json
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from fiskai_rag.errors import ModelError

__all__ = ["Tensor", "close_quietly", "map_file", "read_header"]

_MAX_HEADER = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Tensor:
    """One tensor: its dtype name (`F32`), shape, and absolute byte range in the file."""

    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int


def read_header(data: mmap.mmap, path: Path) -> tuple[dict[str, Tensor], int]:
    """Each tensor by name (absolute byte ranges in `data`) and where the data starts.

    Raises:
        ModelError: The header is malformed or a tensor lies outside the file.
    """
    if len(data) < 8:
        raise ModelError(f"{path} is not a safetensors file (shorter than its header)")
    (size,) = struct.unpack("<Q", data[:8])
    if size > _MAX_HEADER or 8 + size > len(data):
        raise ModelError(f"{path} is not a safetensors file (header length {size})")
    try:
        raw: Any = json.loads(bytes(data[8 : 8 + size]))
    except ValueError as err:
        raise ModelError(f"{path} has an unreadable safetensors header: {err}") from err
    if not isinstance(raw, dict):
        raise ModelError(f"{path} has an unreadable safetensors header")
    base = 8 + size
    tensors: dict[str, Tensor] = {}
    for name, entry in cast(dict[str, Any], raw).items():
        if name == "__metadata__" or not isinstance(entry, dict):
            continue
        spec = cast(dict[str, Any], entry)
        offsets = spec.get("data_offsets")
        shape = spec.get("shape")
        if not isinstance(offsets, list) or not isinstance(shape, list):
            raise ModelError(f"{path}: tensor {name!r} has no shape or offsets")
        first, last = (int(x) for x in cast(list[Any], offsets))
        dims = tuple(int(x) for x in cast(list[Any], shape))
        if not 0 <= first <= last or base + last > len(data):
            raise ModelError(f"{path}: tensor {name!r} lies outside the file (truncated download?)")
        tensors[name] = Tensor(str(spec.get("dtype")), dims, base + first, base + last)
    return tensors, base


def map_file(path: Path) -> mmap.mmap:
    """Memory-map `path` read-only.

    Raises:
        ModelError: It cannot be opened or mapped (missing, unreadable, empty).
    """
    try:
        with open(path, "rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise ModelError(f"cannot read {path}: {reason}") from err


def close_quietly(data: mmap.mmap) -> None:
    """Close a map unless numpy views still point into it (then the GC closes it with them)."""
    try:
        data.close()
    except BufferError:
        pass
