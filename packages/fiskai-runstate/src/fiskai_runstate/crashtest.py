"""A crash harness for the file backend: a child journals a scripted run, a parent SIGKILLs it.

The child (`python -m fiskai_runstate.crashtest DIR RUN_ID TURNS`) resumes the run from whatever the
journal holds, the way the agent loop does (fold, finish the pending batch, continue from the next
iteration), and prints each sequence number once its append has returned, which is the moment the
journal promises durability. The parent (`kill_cycles`) reads a random number of those reports, kills
the child with SIGKILL, and checks that every reported record is on disk, the journal is a prefix of the
script, fold succeeds, and the high-water mark counts every reported record but none the journal lacks (a
mark ahead of the journal would refuse the resume); then it starts the next child, which must continue the
run without `force`.

Used by the test suite (20 kills) and `bench/journal_soak.py` (200 kills). POSIX only.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from .file import FileJournalStore
from .high_water import read_mark
from .records import Record, TerminalRecord
from .state import fold
from .testing import sample_meta, sample_turn

__all__ = ["CrashReport", "child_main", "kill_cycles", "scripted_records"]


def scripted_records(run_id: str, turns: int) -> list[Record]:
    """The whole scripted run: meta, `turns` tool turns, a completed terminal record."""
    records = [Record(seq=1, payload=sample_meta(run_id))]
    for iteration in range(turns):
        records += sample_turn(run_id, seq=len(records) + 1, iteration=iteration)
    records.append(Record(seq=len(records) + 1, payload=TerminalRecord(reason="completed")))
    return records


async def _journal(directory: Path, run_id: str, turns: int) -> None:
    store = FileJournalStore(directory)
    script = scripted_records(run_id, turns)
    out = sys.stdout
    if not (directory / f"{run_id}.json").exists():
        journal = await store.create(sample_meta(run_id))
        out.write("1\n")
        out.flush()
    else:
        journal = await store.open(run_id)
    try:
        state = fold(await store.load(run_id))
        # Resume as the agent loop does: finish the in-flight batch, then continue from the next iteration.
        if state.pending is not None:
            unresolved = {i.tool_use_id for i in state.intents_without_results}
            for use_id in state.pending.unanswered:
                base = 2 + 3 * state.pending.iteration
                steps = [] if use_id in unresolved else [script[base]]  # the intent, unless already durable
                steps.append(script[base + 1])  # the result
                for record in steps:
                    await journal.append(record)
                    out.write(f"{record.seq}\n")
                    out.flush()
        start = 2 + 3 * state.next_iteration
        for record in script[start - 1 :]:
            if record.seq <= journal.last_seq:
                continue
            await journal.append(record)
            out.write(f"{record.seq}\n")
            out.flush()
    finally:
        await journal.aclose()


def child_main(argv: list[str] | None = None) -> None:
    """Entry point of the child process: `DIR RUN_ID TURNS`."""
    directory, run_id, turns = argv if argv is not None else sys.argv[1:]
    anyio.run(_journal, Path(directory), run_id, int(turns))


@dataclass(slots=True)
class CrashReport:
    """What `kill_cycles` saw."""

    kills: int = 0
    """Children killed with SIGKILL."""
    reported: int = 0
    """Appends the children reported as durable, over all cycles."""
    lost: int = 0
    """Reported appends missing from the journal afterwards (must be 0)."""
    problems: list[str] = field(default_factory=lambda: [])
    """Descriptions of anything wrong: lost records, a journal that diverges from the script, a failed fold."""
    records: int = 0
    """Records in the finished journal."""
    completed: bool = False
    """The final child finished the run and fold reports it completed."""


def _check(directory: Path, run_id: str, script: list[Record], reported: set[int], report: CrashReport) -> None:
    records = anyio.run(FileJournalStore(directory).load, run_id)
    present = {r.seq for r in records}
    missing = sorted(reported - present)
    report.lost += len(missing)
    if missing:
        report.problems.append(f"after kill {report.kills}: reported seqs {missing} are missing")
    if records != script[: len(records)]:
        report.problems.append(f"after kill {report.kills}: the journal diverges from the script")
    if records:
        fold(records)
    mark = read_mark(FileJournalStore(directory).mark_path(run_id))
    if not isinstance(mark, int) or not max(reported, default=0) <= mark <= len(records):
        report.problems.append(
            f"after kill {report.kills}: high-water mark {mark!r} outside [{max(reported, default=0)}, {len(records)}]"
        )
    report.records = len(records)


def kill_cycles(
    directory: Path, run_id: str, *, turns: int, kills: int, seed: int, max_reports: int = 40
) -> CrashReport:
    """SIGKILL `kills` children at random points, then let one finish; check the journal after each.

    Args:
        directory: The runs directory.
        run_id: The run to journal.
        turns: Tool turns in the script (3 records each); large enough that `kills` cycles do not finish it.
        kills: How many children to kill.
        seed: Seed of the random kill points, for a reproducible failure.
        max_reports: A child is killed after 1 to `max_reports` reports.

    Returns:
        The report; `lost == 0`, no `problems` and `completed` mean the journal kept its promise.
    """
    rng = random.Random(seed)
    script = scripted_records(run_id, turns)
    report = CrashReport()
    command = [sys.executable, "-m", "fiskai_runstate.crashtest", str(directory), run_id, str(turns)]
    while report.kills < kills:
        reported: set[int] = set()
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
            assert child.stdout is not None
            wanted = rng.randint(1, max_reports)
            while len(reported) < wanted:
                line = child.stdout.readline()
                if not line:
                    break
                reported.add(int(line))
            finished = len(reported) < wanted
            if not finished:
                child.send_signal(signal.SIGKILL)
            rest, errors = child.communicate()
            reported.update(int(x) for x in rest.split())
            if not finished:
                report.kills += 1
            elif child.returncode != 0:
                report.problems.append(f"child failed with {child.returncode}: {errors.decode()[-500:]}")
                return report
        report.reported += len(reported)
        _check(directory, run_id, script, reported, report)
        if finished:
            break
    final = subprocess.run(command, capture_output=True, check=False)
    if final.returncode != 0:
        report.problems.append(f"final child failed with {final.returncode}: {final.stderr.decode()[-500:]}")
        return report
    records = anyio.run(FileJournalStore(directory).load, run_id)
    report.records = len(records)
    report.completed = records == script and fold(records).completed
    if not report.completed:
        report.problems.append("the final journal is not the complete script")
    return report


if __name__ == "__main__":
    child_main()
