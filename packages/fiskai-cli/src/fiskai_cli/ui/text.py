"""Plain-text tables and key/value sections.

Deliberately not rich: `info` and `session list` must start fast and pipe cleanly, and a fixed-width
table of short cells needs nothing more than padding.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["clip", "items", "table"]


def clip(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with `...` when longer."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: max(limit - 3, 0)] + "..."


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, indent: int = 2) -> str:
    """A left-aligned table with a header row; the last column is not padded."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    pad = " " * indent

    def line(cells: Sequence[str]) -> str:
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(cells[:-1])]
        return (pad + "  ".join([*padded, cells[-1]])).rstrip()

    return "\n".join([line([h.upper() for h in headers]), *(line(row) for row in rows)])


def items(pairs: Sequence[tuple[str, str]], *, indent: int = 2) -> str:
    """`key  value` lines with the values aligned."""
    width = max((len(key) for key, _ in pairs), default=0)
    return "\n".join(f"{' ' * indent}{key.ljust(width)}  {value}" for key, value in pairs)
