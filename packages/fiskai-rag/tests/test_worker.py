"""The helper thread search hands its pair queries to: one call at a time, errors raised at the caller."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from fiskai_rag.store import _worker
from fiskai_rag.store._worker import Worker, spare_core


def test_a_call_runs_in_the_workers_thread_and_returns_its_value() -> None:
    worker: Worker[str] = Worker(name="test-worker")
    try:
        for n in range(3):  # the same thread serves call after call
            worker.submit(lambda n=n: f"{threading.current_thread().name}:{n}")
            assert worker.result() == f"test-worker:{n}"
    finally:
        worker.stop()


def test_the_calls_exception_is_raised_by_result_and_the_worker_goes_on() -> None:
    worker: Worker[int] = Worker(name="test-worker")
    try:
        worker.submit(lambda: int("not a number"))
        with pytest.raises(ValueError, match="not a number"):
            worker.result()
        worker.submit(lambda: 7)
        assert worker.result() == 7
    finally:
        worker.stop()


def test_a_second_submit_before_the_result_is_refused() -> None:
    worker: Worker[int] = Worker(name="test-worker")
    release = threading.Event()
    try:
        worker.submit(lambda: 1 if release.wait(timeout=10) else 0)
        with pytest.raises(RuntimeError, match="collect its result first"):
            worker.submit(lambda: 2)
        release.set()
        assert worker.result() == 1
        with pytest.raises(RuntimeError, match="without a submitted call"):
            worker.result()
    finally:
        release.set()
        worker.stop()


def test_stop_waits_for_a_running_call_and_ends_the_thread() -> None:
    worker: Worker[int] = Worker(name="test-worker-stop")
    started, release = threading.Event(), threading.Event()
    ran: list[int] = []

    def call() -> int:
        started.set()
        release.wait(timeout=10)
        ran.append(1)
        return 1

    worker.submit(call)
    assert started.wait(timeout=10)
    release.set()
    worker.stop()
    assert ran == [1]
    assert not any(t.name == "test-worker-stop" for t in threading.enumerate())


def test_a_spare_core_is_one_the_load_average_leaves_beside_the_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    def four_cores(_pid: int) -> set[int]:
        return {0, 1, 2, 3}

    monkeypatch.setattr(os, "sched_getaffinity", four_cores)
    monkeypatch.setattr(_worker, "_PROC_STAT", "/nonexistent/stat")  # the load average decides
    monkeypatch.setattr(_worker, "_PROC_LOADAVG", "/nonexistent/loadavg")
    monkeypatch.setattr(_worker, "_own_share", lambda: 0.0)  # this process idle: the load is other jobs'
    for load, spare in ((0.5, True), (2.9, True), (3.0, False), (7.5, False)):
        monkeypatch.setattr(_worker, "_load_seen", [])  # the reading is kept for a second otherwise
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert spare_core() is spare, load
    # Read again only after a second: the machine's load is one reading for many searches.
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert spare_core() is False

    def unknown() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(_worker, "_load_seen", [])
    monkeypatch.setattr(os, "getloadavg", unknown)
    assert spare_core() is False  # without a reading the caller keeps the work


def test_the_callers_own_busy_core_does_not_count_against_a_spare_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # A reader searching without pause keeps one core busy itself: on two cores a load of 1 is then its
    # own, and the other core is free; with another job busy too (load 2) it is not.
    def two_cores(_pid: int) -> set[int]:
        return {0, 1}

    monkeypatch.setattr(os, "sched_getaffinity", two_cores)
    monkeypatch.setattr(_worker, "_PROC_STAT", "/nonexistent/stat")
    monkeypatch.setattr(_worker, "_PROC_LOADAVG", "/nonexistent/loadavg")
    monkeypatch.setattr(_worker, "_own_share", lambda: 1.0)
    for load, spare in ((1.0, True), (1.9, True), (2.0, False), (3.0, False)):
        monkeypatch.setattr(_worker, "_load_seen", [])
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert spare_core() is spare, load


def test_the_last_seconds_busy_ticks_decide_once_there_are_two_readings_not_the_minutes_load_average(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Issue 35: after an index on both cores the 1-minute load average stayed near 2 for a minute, so
    # the searches that followed ran their query vector serially (hybrid 2.5x lexical instead of 1.6x).
    stat = tmp_path / "stat"
    monkeypatch.setattr(_worker, "_PROC_STAT", str(stat))
    monkeypatch.setattr(_worker, "_PROC_LOADAVG", "/nonexistent/loadavg")
    monkeypatch.setattr(_worker, "_stat_seen", [])

    def two_of_three(_pid: int) -> set[int]:
        return {0, 2}  # cpu1 belongs to someone else: its ticks never count

    monkeypatch.setattr(os, "sched_getaffinity", two_of_three)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.4, 2.4, 2.4))  # just after the indexing
    monkeypatch.setattr(_worker, "_own_share", lambda: 1.0)  # this reader, searching without pause

    def ticks(busy0: int, idle0: int, busy2: int, idle2: int) -> None:
        # user nice system idle iowait irq softirq steal guest guest_nice, as Linux writes them
        stat.write_text(
            f"cpu  1 0 0 1 0 0 0 0 0 0\ncpu0 {busy0} 0 0 {idle0} 0 0 0 0 0 0\ncpu1 9999 0 0 0 0 0 0 0 0 0\n"
            f"cpu2 {busy2 // 2} 0 {busy2 - busy2 // 2} {idle2} 0 0 0 0 0 0\nintr 5 1 2\nctxt 7\n"
        )

    def reading() -> bool:
        monkeypatch.setattr(_worker, "_load_seen", [])
        return spare_core()

    ticks(1000, 1000, 1000, 1000)
    assert reading() is False  # the first reading has nothing to compare with: the load average decides
    ticks(1100, 1000, 1010, 1090)  # cpu0 busy (this reader), cpu2 idle for the last 100 ticks
    assert reading() is True
    ticks(1200, 1000, 1090, 1110)  # another job took 80% of cpu2: 1.8 cores busy, 0.8 not ours
    assert reading() is True
    ticks(1300, 1000, 1190, 1110)  # now all of it: no core spare
    assert reading() is False
    stat.write_text("cpu  1 0 0 1\ncpuX 5 0 0 5 0 0 0 0\n")  # not the format: the load average, no error
    assert reading() is False
    stat.unlink()  # unreadable: back to the load average
    assert reading() is False


def test_the_own_share_is_the_cpu_per_wall_second_since_the_last_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = {"wall": 100.0, "cpu": 5.0}
    monkeypatch.setattr(_worker, "_cpu_seen", [])
    monkeypatch.setattr(time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(time, "process_time", lambda: clock["cpu"])
    assert _worker._own_share() == 0.0  # nothing to compare with yet
    clock.update(wall=102.0, cpu=6.5)
    assert _worker._own_share() == 0.75
    clock.update(wall=103.0, cpu=8.5)  # two threads busy for the whole second
    assert _worker._own_share() == 2.0


def test_the_first_reading_counts_the_threads_runnable_now_not_the_minutes_load_average(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Right after an index on both cores the load average still says 2 for a minute (the bench's process
    # ran the first 80 of 206 searches' query vectors serially that way); the runnable count is now.
    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(_worker, "_PROC_STAT", "/nonexistent/stat")  # no ticks to compare: a first reading
    monkeypatch.setattr(_worker, "_PROC_LOADAVG", str(loadavg))
    monkeypatch.setattr(os, "getloadavg", lambda: (2.4, 2.4, 2.4))
    monkeypatch.setattr(_worker, "_own_share", lambda: 0.0)  # another process indexed on both cores till now

    def two_cores(_pid: int) -> set[int]:
        return {0, 1}

    monkeypatch.setattr(os, "sched_getaffinity", two_cores)
    for text, spare in (
        ("2.40 2.40 2.10 1/95 4242\n", True),  # the caller alone runs: the index has ended
        ("2.40 2.40 2.10 2/95 4242\n", False),  # one more thread wants a core: the other one
        ("2.40 2.40 2.10 5/95 4242\n", False),
        ("0.10 0.10 0.10\n", False),  # not this format: the load average decides
    ):
        loadavg.write_text(text)
        monkeypatch.setattr(_worker, "_load_seen", [])
        assert spare_core() is spare, text
    assert _worker.runnable() is None
    loadavg.write_text("0.00 0.00 0.00 3/95 1\n")
    assert _worker.runnable() == 3
