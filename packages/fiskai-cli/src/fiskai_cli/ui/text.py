"""Plain-text tables and key/value sections.

Deliberately not rich: `info` and `session list` must start fast and pipe cleanly, and a fixed-width
table of short cells needs nothing more than padding.

Every cell, value and clipped text passes through `fiskai_core.sanitize.sanitize_for_terminal`: they
hold names, prompts and descriptions that a model, a tool, a peer, a journal or a configuration wrote,
and an escape sequence or a bidi control in one must not reach the terminal (the rule is in that module).
`json_text` is the same promise for `--format json` documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from fiskai_core.sanitize import INVISIBLE, sanitize_for_terminal

__all__ = ["clip", "items", "json_text", "table"]

# What `json.dumps(ensure_ascii=False)` leaves raw but a terminal would act on: C1 controls, DEL, and the
# bidi and invisible format characters. Each can only stand inside a JSON string, where `\uXXXX` means it.
_JSON_RAW = re.compile(rf"[\x7f-\x9f]|{INVISIBLE.pattern}")


def clip(text: str, limit: int) -> str:
    """`text` sanitized onto one line, cut to `limit` characters with `...` when longer."""
    line = sanitize_for_terminal(text)
    return line if len(line) <= limit else line[: max(limit - 3, 0)] + "..."


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, indent: int = 2) -> str:
    """A left-aligned table with a header row; the last column is not padded; every cell sanitized."""
    rows = [[sanitize_for_terminal(cell) for cell in row] for row in rows]
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
    """`key  value` lines with the values aligned (sanitized onto one line each)."""
    width = max((len(key) for key, _ in pairs), default=0)
    return "\n".join(f"{' ' * indent}{key.ljust(width)}  {sanitize_for_terminal(value)}" for key, value in pairs)


def json_text(document: object) -> str:
    """`document` as indented JSON that is safe on a terminal and means exactly the same to a parser.

    `ensure_ascii=False` keeps names readable, and JSON already escapes C0 controls (so ESC and BEL);
    the C1 controls and the bidi and invisible format characters it would leave raw are escaped too.
    """
    text = json.dumps(document, indent=2, ensure_ascii=False)
    return _JSON_RAW.sub(lambda match: _json_escape(match.group()), text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    # Outside the BMP, JSON spells a character as its UTF-16 surrogate pair.
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
