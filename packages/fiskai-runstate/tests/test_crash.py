"""Crash harness: SIGKILL a journaling child at random points; nothing acknowledged is ever lost."""

from __future__ import annotations

from pathlib import Path

from fiskai_runstate.crashtest import kill_cycles


def test_sigkill_at_random_points_loses_no_acknowledged_record_and_resume_completes(tmp_path: Path) -> None:
    """Steps:
    1. A child journals a scripted 300-turn run (more than 20 kills can reach) and reports each durable append.
    2. The parent SIGKILLs it after a random number of reports, 20 times, resuming each time.
    3. After each kill: every reported record is present, the journal is a prefix of the script, fold works.
    4. A last child finishes the run: the journal is the whole script and fold reports it completed.
    """
    report = kill_cycles(tmp_path, "crash-run", turns=300, kills=20, seed=20261129)
    assert report.problems == []
    assert (report.kills, report.lost) == (20, 0)
    assert report.reported >= 20
    assert report.completed
    assert report.records == 2 + 3 * 300
