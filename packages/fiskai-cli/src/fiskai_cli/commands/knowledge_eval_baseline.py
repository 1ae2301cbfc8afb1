"""Stored baselines for `fiskai knowledge eval`: write a run's figures, and hold a later run to them.

A baseline is a small JSON file::

    {"format": 1, "suite": "cisi", "figures": {"ndcg_at_10": 0.393, ...,
     "answers.keyword.in_top_5": 0.909, "answers.keyword.in_pack_1500": 0.818, ...},
     "bm25": {"ndcg_at_10": 0.339, ...}}

Every figure under `figures` is held: a run regresses when one of them is lower than stored by more than
the tolerance, or is missing (a figure cannot silently drop out). `bm25` is kept for the record (plain FTS5
BM25 measured in the same run) and is not compared: it is the floor, not the thing under test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import click

from fiskai_rag.eval import EvalReport, KindFigures

__all__ = ["compare_with_baseline", "figures_of", "save_baseline"]

_FORMAT = 1


def figures_of(report: EvalReport, answers: Sequence[KindFigures], top: int, budget: int) -> dict[str, float]:
    """A run's figures under their stored names: rank metrics, then each kind's answer rates."""
    figures = {"ndcg_at_10": report.ndcg, "mrr_at_10": report.mrr, f"recall_at_{report.k}": report.recall}
    for row in answers:
        figures[f"answers.{row.kind}.in_top_{top}"] = row.in_hits
        figures[f"answers.{row.kind}.in_pack_{budget}"] = row.in_pack
    return {name: round(value, 4) for name, value in figures.items()}


def save_baseline(path: Path, figures: dict[str, float], *, suite: str, bm25: dict[str, float] | None) -> None:
    """Write `figures` (and the BM25 floor's, for the record) to `path`.

    Raises:
        click.ClickException: the file cannot be written.
    """
    document = {"format": _FORMAT, "suite": suite, "figures": figures, "bm25": bm25}
    try:
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    except OSError as err:
        raise click.ClickException(f'cannot write the baseline "{path}": {err.strerror or err}') from err


def compare_with_baseline(path: Path, figures: dict[str, float], *, suite: str, tolerance: float) -> list[str]:
    """One line per figure of the baseline at `path` that this run misses by more than `tolerance`.

    Raises:
        click.ClickException: the file is unreadable, not a baseline, or was saved for another suite.
    """
    stored = _read(path)
    if stored["suite"] != suite:
        raise click.ClickException(
            f'the baseline "{path}" was saved for the suite {stored["suite"]!r}, not {suite!r}; pass that suite\'s '
            "baseline, or save one with --save-baseline"
        )
    misses: list[str] = []
    for name, before in cast("dict[str, float]", stored["figures"]).items():
        now = figures.get(name)
        if now is None:
            misses.append(f"{name} is in the baseline {path} but this run did not measure it")
        elif now < before - tolerance:
            misses.append(f"{name} {now:.3f} is below the baseline's {before:.3f} (tolerance {tolerance:.3f})")
    return misses


def _read(path: Path) -> dict[str, object]:
    try:
        document: object = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise click.ClickException(f'cannot read the baseline "{path}": {err.strerror or err}') from err
    except ValueError as err:
        raise click.ClickException(
            f'the baseline "{path}" is not JSON ({err}); save it again with --save-baseline'
        ) from err
    fields = cast("dict[str, object]", document) if isinstance(document, dict) else {}
    figures = fields.get("figures")
    valid = (
        fields.get("format") == _FORMAT
        and isinstance(fields.get("suite"), str)
        and isinstance(figures, dict)
        and all(
            isinstance(name, str) and isinstance(value, (int, float)) and not isinstance(value, bool)
            for name, value in cast("dict[object, object]", figures).items()
        )
    )
    if not valid:
        raise click.ClickException(
            f'"{path}" is not a knowledge eval baseline (format {_FORMAT}); save one with --save-baseline'
        )
    return fields
