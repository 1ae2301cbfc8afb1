"""`/` and `n` on the full screen: find a term in the transcript's rows, case-insensitive, wrapping."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["find_row"]


def find_row(rows: Sequence[str], term: str, start: int) -> int | None:
    """The first row at or after `start` holding `term` (wrapping to the top); None when no row does."""
    if not term or not rows:
        return None
    needle = term.casefold()
    count = len(rows)
    for offset in range(count):
        row = (start + offset) % count
        if needle in rows[row].casefold():
            return row
    return None
