"""One BLAS thread for a small forward pass: a query's few tokens gain nothing from a second thread.

numpy's OpenBLAS splits every matrix product over all cores. For a query of a dozen tokens each product
is tiny, and when another process is busy on a core the split waits for it. A warm all-MiniLM-L6-v2
query, median of 30, three runs each (2 cores): idle, one thread 12.3-12.8 ms against two 7.4-7.9 ms;
one core busy, 12.4-13.2 against 15.7-22.7 ms; both cores busy, 19.3-21.2 against 16.7, 23.8 and
432 ms. One thread costs 5 ms on an idle machine and removes the tail a busy one gives an agent's tool
call. Indexing's large batches keep every thread.

OpenBLAS reads its thread count at load time only, so the count is changed through its own C API,
found by name in the loaded library (numpy's wheels ship `scipy_openblas`; other builds export the
plain names). Where no OpenBLAS is found (another BLAS, another platform), `one_thread` does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Callable, Generator
from typing import cast

__all__ = ["one_thread"]

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads")
_lock = threading.RLock()
_Api = tuple[Callable[[int], object], Callable[[], int]]
_api: _Api | None | bool = False  # False: not looked up yet; None: none found


def _loaded_openblas() -> list[str]:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return []
    return sorted({line.split(None, 5)[-1] for line in lines if "openblas" in line.lower() and "/" in line})


def _find() -> _Api | None:
    for path in _loaded_openblas():
        try:
            library = ctypes.CDLL(path)  # already loaded by numpy: this is the same instance
        except OSError:
            continue
        setter = next((getattr(library, n) for n in _SETTERS if hasattr(library, n)), None)
        getter = next((getattr(library, n) for n in _GETTERS if hasattr(library, n)), None)
        if setter is not None and getter is not None:
            setter.argtypes = [ctypes.c_int]
            getter.restype = ctypes.c_int
            return cast("Callable[[int], object]", setter), cast("Callable[[], int]", getter)
    return None


@contextlib.contextmanager
def one_thread() -> Generator[None]:
    """Run the block's BLAS calls on one thread, then restore the count (numpy must be imported)."""
    global _api
    with _lock:
        if _api is False:
            _api = _find()
        api = _api
    if not isinstance(api, tuple):
        yield
        return
    setter, getter = api
    with _lock:  # the count is process-wide: concurrent small passes share one switch
        before = int(getter())
        setter(1)
        try:
            yield
        finally:
            setter(before)
