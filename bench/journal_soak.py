"""Soak the file journal's crash safety: SIGKILL a journaling child 200 times at random points.

Run: uv run python bench/journal_soak.py [--kills 200] [--turns 1500] [--seed N]

After every kill, every append the child reported as durable must be in the journal, the journal must be
a prefix of the scripted run, and fold must succeed; the next child resumes and continues, and a last
child finishes the run. Prints `lost: 0` when the journal kept its promise; exits 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from fiskai_runstate.crashtest import kill_cycles


def main() -> None:
    parser = argparse.ArgumentParser(description="SIGKILL a journaling child at random points.")
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument(
        "--turns",
        type=int,
        default=None,
        help="tool turns in the scripted run (3 records each); default 14 per kill, so no child finishes early",
    )
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    # A kill comes after 1 to 40 reports (about 22 records with the ones drained after the kill), so
    # 42 records per kill leaves the run unfinished until the last kill.
    turns = args.turns if args.turns is not None else 14 * args.kills

    with tempfile.TemporaryDirectory(prefix="journal-soak-", dir=os.environ.get("BENCH_DIR")) as tmp:
        start = time.perf_counter()
        report = kill_cycles(Path(tmp), "soak", turns=turns, kills=args.kills, seed=args.seed)
        elapsed = time.perf_counter() - start

    print(f"seed: {args.seed}")
    print(f"kills: {report.kills}")
    print(f"appends reported durable: {report.reported}")
    print(f"records in the finished journal: {report.records} (script: {2 + 3 * turns})")
    print(f"resumed to completion: {'yes' if report.completed else 'no'}")
    print(f"elapsed: {elapsed:.1f} s")
    for problem in report.problems:
        print(f"problem: {problem}")
    print(f"lost: {report.lost}")
    if report.lost or report.problems or not report.completed or report.kills != args.kills:
        sys.exit(1)


if __name__ == "__main__":
    main()
