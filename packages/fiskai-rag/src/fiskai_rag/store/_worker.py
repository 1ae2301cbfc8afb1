"""A helper thread that stays: one call at a time, handed over with two locks.

A search runs part of its SQL beside the main query (apsw releases the GIL while SQLite steps). Starting
a thread for that costs about 0.55 ms a search on the 2-core development machine (`Thread.start` waits
for the new thread to run); handing a call to a thread that waits on a lock costs about 0.06 ms. Locks,
not `queue`, which would add an import to every CLI search.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Worker", "runnable", "spare_core"]

_T = TypeVar("_T")


class Worker(Generic[_T]):
    """Runs one call at a time in a daemon thread of its own; `result()` waits for it.

    Not for concurrent use: the caller (a store, under its lock) submits, then collects the result
    before it submits again.
    """

    def __init__(self, name: str) -> None:
        self._posted = threading.Lock()
        self._posted.acquire()
        self._finished = threading.Lock()
        self._finished.acquire()
        self._call: Callable[[], _T] | None = None
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._busy = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self._posted.acquire()
            call = self._call
            if call is None:
                return  # stopped
            try:
                self._value = call()
            except BaseException as err:  # noqa: BLE001  # handed to the caller of result()
                self._error = err
            self._finished.release()

    def submit(self, call: Callable[[], _T]) -> None:
        """Start `call` in the worker's thread."""
        if self._busy:
            raise RuntimeError("Worker.submit while a call is running: collect its result first")
        self._call, self._value, self._error, self._busy = call, None, None, True
        self._posted.release()

    def result(self) -> _T:
        """The submitted call's return value (after waiting for it), or its exception raised here."""
        if not self._busy:
            raise RuntimeError("Worker.result without a submitted call")
        self._finished.acquire()
        self._busy = False
        value, error = self._value, self._error
        self._value = self._error = None
        if error is not None:
            raise error
        return value  # pyright: ignore[reportReturnType]  # set whenever no error was raised

    def stop(self) -> None:
        """End the thread once it is idle (a running call is waited for)."""
        if self._busy:
            self._finished.acquire()
            self._busy = False
        self._call = None
        self._posted.release()
        self._thread.join()


_LOAD_TTL_S = 1.0
_load_seen: list[tuple[float, bool]] = []
"""The last reading: (when, spare)."""
_cpu_seen: list[tuple[float, float]] = []
"""This process's CPU clock at the last reading: (wall, cpu seconds)."""


def _own_share() -> float:
    """The cores this process kept busy since the last reading (all its threads; 0 at the first)."""
    now, cpu = time.monotonic(), time.process_time()
    before = _cpu_seen[0] if _cpu_seen else None
    _cpu_seen[:] = [(now, cpu)]
    if before is None or now <= before[0]:
        return 0.0
    return max(0.0, (cpu - before[1]) / (now - before[0]))


_PROC_STAT = "/proc/stat"
_stat_seen: list[tuple[int, int]] = []
"""The allowed cores' (busy, total) clock ticks at the last reading, from /proc/stat."""


def _busy_cores(cores: set[int]) -> float | None:
    """How many of `cores` were busy since the last reading (every process's work), or None.

    None at the first reading, or where /proc/stat cannot be read (not Linux): then `spare_core` reads
    the threads runnable now, or the load average. Unlike the load average, a 1-minute decaying mean,
    this sees the last second: a process that has just indexed on both cores searches with a spare core
    as soon as the indexing stops, where the load average kept saying "busy" for a minute and the search
    ran its query vector serially.
    """
    try:
        with open(_PROC_STAT, "rb") as stat:
            text = stat.read(65536)
    except OSError:
        return None
    busy = total = 0
    try:
        for line in text.split(b"\n"):
            if not line.startswith(b"cpu") or line[3:4] == b" ":
                if busy or total:
                    break  # the per-core lines are together; what follows is not about cores
                continue
            name, *ticks = line.split()
            if int(name[3:]) not in cores or len(ticks) < 8:
                continue
            user, nice, system, idle, iowait, irq, softirq, steal = (int(t) for t in ticks[:8])
            busy += user + nice + system + irq + softirq + steal
            total += user + nice + system + irq + softirq + steal + idle + iowait
    except ValueError:  # not the format this reads: a search must not fail over it
        return None
    before = _stat_seen[0] if _stat_seen else None
    _stat_seen[:] = [(busy, total)]
    if before is None or total <= before[1]:
        return None
    return len(cores) * (busy - before[0]) / (total - before[1])


_PROC_LOADAVG = "/proc/loadavg"


def runnable() -> int | None:
    """Threads running or waiting for a CPU right now, the caller's included (Linux), or None where unknown.

    The fourth field of /proc/loadavg (`0.52 0.58 0.59 1/95 12345`: runnable/existing). One instant is
    a noisy sample, but unlike the 1-minute load average it does not remember work that has just ended:
    in the bench's process, the first 80 of 206 hybrid searches after its index ran their query vector
    serially while the average still counted the index (`spare_core`'s first reading).
    """
    try:
        with open(_PROC_LOADAVG, "rb") as handle:
            return int(handle.read(256).split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def spare_core() -> bool:
    """Whether a helper thread would likely find a core of its own, read at most once a second.

    True when the cores busy since the last reading (`_busy_cores`; at the first, the threads runnable
    right now, `runnable`; where neither can be read, the 1-minute load average), less what this
    process itself kept busy, are fewer than the cores this process may use minus the one its caller
    runs on. A helper pays only when it runs on a core nobody else wants: on the 2-core development
    machine the BM25 query of an influxdata-docs question and its pair queries took 5.7 ms side by side
    against 8.3 ms one after the other (the other core idle), but with another job busy on one core,
    interleaved with the pool path, questions took 9.27 against 9.09 ms (load 2.1) and 10.5 against
    10.7 ms (load 1.5), for 1.0-1.3 ms more CPU a search.

    The process's own share is subtracted because a reader searching without pause (an agent's burst,
    the benchmarks) holds the load average near 1 by itself, which read as "no spare core" while the
    other core sat idle: the generated 103k-chunk store's whole questions took 31 ms against 24 ms at
    669db13 that way (the pair queries after the BM25 query instead of beside it).
    """
    now = time.monotonic()
    if _load_seen and now - _load_seen[0][0] < _LOAD_TTL_S:
        return _load_seen[0][1]
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    cores = len(allowed)
    own = min(_own_share(), float(cores))  # read every time: the next reading's share starts here
    load = _busy_cores(allowed)
    if load is None:
        running = runnable()
        if running is not None:
            # An instant: the caller itself is left out, and this process's other threads running now
            # do hold a core.
            own, load = 0.0, float(max(0, running - 1))
        else:
            try:
                load = os.getloadavg()[0]
            except OSError:
                load = float("inf")  # unknown: stay on the caller's thread
    spare = load - own < cores - 1
    _load_seen[:] = [(now, spare)]
    return spare
