"""Speed of the run journal's file backend, each figure against a floor measured in the same run.

Run: uv run python bench/journal.py [--rounds 7] [--appends 400]

Targets (issue 3, "Speed"): appends per second with fsync >= 0.8x a bare write+fsync loop on the same
filesystem; load and fold of a 10,000-record journal <= 100 ms. Medians over interleaved rounds, so the
journal and its floor see the same disk and the same neighbours. Each append also rewrites the run's
high-water mark (issue 36): the journal without it runs as a fourth writer, and the mark update is timed
alone, as done (a pwrite) and as it would cost fsynced.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.to_thread

from fiskai_runstate import FileJournalStore, Record, encode_record, fold
from fiskai_runstate.file import _load_path  # timed alone, without an event loop around them
from fiskai_runstate.high_water import write_mark
from fiskai_runstate.testing import sample_meta, sample_turn


def _records(run_id: str, count: int) -> list[Record]:
    records = [Record(seq=1, payload=sample_meta(run_id))]
    iteration = 0
    while len(records) < count:
        records += sample_turn(run_id, seq=len(records) + 1, iteration=iteration, output="x" * 200)
        iteration += 1
    return records[:count]


_BLOCK = 20
"""Appends per block; the writers alternate block by block so disk noise hits them alike."""


async def _append_round(base: Path, round_no: int, records: list[Record]) -> tuple[list[float], ...]:
    """Seconds of every append: the bare floor, the journal, the floor with a worker-thread hop, and the
    journal without its high-water mark (what the mark costs an append).

    Each append is timed on its own so the medians are medians of appends: a single fsync stalled behind
    another process's disk flush then moves a median by one sample instead of skewing a total.
    """
    lines = [encode_record(r) + b"\n" for r in records]
    bare_fd = os.open(base / f"bare-{round_no}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    thread_fd = os.open(base / f"thread-{round_no}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    store = FileJournalStore(base / "runs")
    journal = await store.create(sample_meta(f"append-{round_no}"))
    unmarked = await store.create(sample_meta(f"unmarked-{round_no}"))
    mark_fd, unmarked._mark_fd = unmarked._mark_fd, None  # the same journal with its mark switched off
    if mark_fd is not None:
        os.close(mark_fd)

    def write_fsync(fd: int, line: bytes) -> None:
        os.write(fd, line)
        os.fsync(fd)

    spent: tuple[list[float], ...] = ([], [], [], [])
    clock = time.perf_counter
    try:
        for block, first in enumerate(range(0, len(records), _BLOCK)):
            chunk = range(first, min(first + _BLOCK, len(records)))
            # Rotate who goes first: whoever follows another writer's fsyncs may wait on a shared commit.
            for writer in (*range(block % 4, 4), *range(block % 4)):
                times = spent[writer]
                for i in chunk:
                    start = clock()
                    if writer == 0:
                        write_fsync(bare_fd, lines[i])
                    elif writer == 1:
                        await journal.append(records[i])
                    elif writer == 2:
                        await anyio.to_thread.run_sync(write_fsync, thread_fd, lines[i])
                    else:
                        await unmarked.append(records[i])
                    times.append(clock() - start)
    finally:
        await journal.aclose()
        await unmarked.aclose()
        os.close(bare_fd)
        os.close(thread_fd)
    return spent


def _mark_costs(base: Path, count: int) -> tuple[list[float], list[float]]:
    """Seconds of each high-water mark update as an append does it (pwrite), and as it would cost fsynced."""
    fd = os.open(base / "mark.hwm", os.O_RDWR | os.O_CREAT, 0o600)
    spent: tuple[list[float], list[float]] = ([], [])
    clock = time.perf_counter
    try:
        for n in range(count):
            for sync, times in ((False, spent[0]), (True, spent[1])):
                start = clock()
                write_mark(fd, n, sync=sync)
                times.append(clock() - start)
    finally:
        os.close(fd)
    return spent


def _timed(action: Callable[[], object]) -> tuple[float, float]:
    """Wall and process-CPU milliseconds; CPU time shows the cost when the machine is shared.

    The result stays alive until the clocks stop, so freeing it is not billed to the operation.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    elapsed = (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000
    del result
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description="Speed of the run journal file backend.")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--appends", type=int, default=300)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="journal-bench-", dir=os.environ.get("BENCH_DIR")) as tmp:
        base = Path(tmp)
        appended = _records("append", args.appends + 1)[1:]
        lines = [encode_record(r) for r in appended]
        bare: list[float] = []
        journal: list[float] = []
        threaded: list[float] = []
        no_mark: list[float] = []
        for round_no in range(args.rounds):
            floor, ours, hop, unmarked = anyio.run(_append_round, base, round_no, appended)
            bare += floor
            journal += ours
            threaded += hop
            no_mark += unmarked
        mark, mark_synced = _mark_costs(base, args.appends)
        bare = [1 / t for t in bare]
        journal = [1 / t for t in journal]
        threaded = [1 / t for t in threaded]
        no_mark = [1 / t for t in no_mark]

        big = _records("big", 10_000)
        runs = base / "runs"
        journal_file = runs / "big.json"
        journal_file.write_bytes(b"".join(encode_record(r) + b"\n" for r in big))
        store = FileJournalStore(runs)
        loaded = anyio.run(store.load, "big")
        assert loaded == big
        load_wall: list[float] = []
        load_cpu: list[float] = []
        fold_wall: list[float] = []
        fold_cpu: list[float] = []
        floor_wall: list[float] = []
        for _ in range(args.rounds):
            wall, cpu = _timed(lambda: _load_path(journal_file, "big"))
            load_wall.append(wall)
            load_cpu.append(cpu)
            wall, cpu = _timed(lambda: fold(loaded))
            fold_wall.append(wall)
            fold_cpu.append(cpu)
            floor_wall.append(_timed(lambda: [json.loads(x) for x in journal_file.read_bytes().splitlines()])[0])
        journal_mib = journal_file.stat().st_size / 2**20

    med = statistics.median
    size = sum(len(line) for line in lines) / len(lines)
    print(
        f"file journal on {tempfile.gettempdir()}, {args.rounds} rounds; appends: median of "
        f"{len(journal)} single appends per writer, interleaved in blocks of {_BLOCK}; loads: median of rounds"
    )
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus; wall time unless marked cpu")
    print()
    print(f"{'measure':<46}{'fiskai':>13}{'floor':>13}{'ratio':>8}  target")
    ratio = med(journal) / med(bare)
    print(
        f"{f'appends/s, {args.appends} x ~{size:.0f} B, write+fsync':<46}"
        f"{med(journal):>11,.0f}/s{med(bare):>11,.0f}/s{ratio:>7.2f}x  >= 0.80x {'ok' if ratio >= 0.8 else 'MISSED'}"
    )
    print(
        f"{'  floor with a worker-thread hop per append':<46}{'':>13}{med(threaded):>11,.0f}/s"
        f"{med(threaded) / med(bare):>7.2f}x  (why appends run inline)"
    )
    print(
        f"{'  the journal without its high-water mark':<46}{med(no_mark):>11,.0f}/s{'':>13}"
        f"{med(journal) / med(no_mark):>7.2f}x  (with / without: what the mark costs)"
    )
    print(
        f"{'  high-water mark per append (pwrite)':<46}{med(mark) * 1e6:>10.1f} us{1e6 / med(journal):>10.1f} us"
        f"{med(mark) * med(journal):>7.3f}x  (floor: one whole append)"
    )
    print(
        f"{'  the same mark fsynced (not done)':<46}{med(mark_synced) * 1e6:>10.1f} us{1e6 / med(journal):>10.1f} us"
        f"{med(mark_synced) * med(journal):>7.2f}x  (why the mark is not fsynced per append)"
    )
    print(
        f"{f'load 10,000 records ({journal_mib:.1f} MiB)':<46}{med(load_wall):>10.1f} ms{med(floor_wall):>10.1f} ms"
        f"{med(load_wall) / med(floor_wall):>7.2f}x  (floor: read + json.loads per line)"
    )
    print(f"{'  cpu':<46}{med(load_cpu):>10.1f} ms")
    print(f"{'fold 10,000 records':<46}{med(fold_wall):>10.1f} ms")
    print(f"{'  cpu':<46}{med(fold_cpu):>10.1f} ms")
    total = med(load_wall) + med(fold_wall)
    total_cpu = med(load_cpu) + med(fold_cpu)
    print(
        f"{'load + fold 10,000 records':<46}{total:>10.1f} ms{'':>13}{'':>8}  <= 100 ms {'ok' if total <= 100 else 'MISSED'}"
    )
    print(f"{'  cpu':<46}{total_cpu:>10.1f} ms{'':>13}{'':>8}  <= 100 ms {'ok' if total_cpu <= 100 else 'MISSED'}")


if __name__ == "__main__":
    main()
