"""A probe, run only by test_shared_fixtures.py: one test that asks for the large shared data."""

from pathlib import Path


def test_reads_the_shared_data(shared_fixtures: Path) -> None:
    assert shared_fixtures.is_dir()
