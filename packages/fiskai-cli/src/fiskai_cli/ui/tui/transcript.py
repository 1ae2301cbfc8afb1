"""The full-screen transcript as data: entries of a kind, folded or not, laid out as styled rows.

Pure Python (no prompt-toolkit), so the layout rules are tested without a terminal. Every text that a
model or a tool produced is sanitized (`fiskai_core.sanitize`) when the entry is made; styles come only
from the entry's kind and from line-level Markdown shapes, never from the text, so model text can
never open a style or an escape sequence: the screen shows it as characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from fiskai_core.sanitize import sanitize_for_display, sanitize_for_terminal

__all__ = ["Entry", "Kind", "Row", "Transcript", "entry"]

Kind = Literal["narration", "prompt", "thinking", "call", "result", "error", "meta", "warning", "answer", "denied"]

_FOLDABLE: dict[Kind, str] = {"thinking": "thinking", "result": "output", "error": "error output"}
_KEY: dict[Kind, str] = {"thinking": "z", "result": "Z", "error": "Z"}


@dataclass(frozen=True, slots=True)
class Row:
    """One display row: a trusted style name (`class:<kind>`) and sanitized text."""

    style: str
    text: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One transcript item; `head` is always shown, `body` is what folding hides."""

    kind: Kind
    head: str
    body: str = ""


def entry(kind: Kind, head: str, body: str = "") -> Entry:
    """An entry with its texts sanitized: one line for the head, escape-free lines for the body."""
    clean_head = sanitize_for_display(head).rstrip() if kind in ("narration", "answer") else sanitize_for_terminal(head)
    return Entry(kind, clean_head, sanitize_for_display(body).rstrip())


class Transcript:
    """The entries of a run and the two global fold modes (`z` thinking, `Z` tool output)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.fold_thinking = True
        self.fold_output = True

    def add(self, item: Entry) -> None:
        self.entries.append(item)

    def folded(self, kind: Kind) -> bool:
        if kind == "thinking":
            return self.fold_thinking
        return kind in ("result", "error") and self.fold_output

    def rows(self) -> list[Row]:
        """Every entry laid out as rows, folded bodies replaced by a one-line placeholder."""
        rows: list[Row] = []
        for item in self.entries:
            rows.extend(_layout(item, folded=self.folded(item.kind)))
        return rows

    def plain_text(self) -> str:
        """The whole transcript as plain text, nothing folded (what `y` copies)."""
        return "\n".join(row.text for item in self.entries for row in _layout(item, folded=False))

    def unfold_for(self, term: str) -> bool:
        """Unfold the kind whose folded body holds `term` (a search must find it); True when it did."""
        needle = term.casefold()
        for item in self.entries:
            if self.folded(item.kind) and needle in item.body.casefold():
                if item.kind == "thinking":
                    self.fold_thinking = False
                else:
                    self.fold_output = False
                return True
        return False


def _layout(item: Entry, *, folded: bool) -> Sequence[Row]:
    style = f"class:{item.kind}"
    if item.kind in ("narration", "answer"):
        return _markdown(item.head, answer=item.kind == "answer")
    prefix = {"prompt": "> ", "call": "-> ", "warning": "warning: ", "thinking": "~ ", "denied": "<- "}.get(
        item.kind, ""
    )
    rows = [Row(style, prefix + item.head)]
    if not item.body:
        return rows
    lines = item.body.splitlines()
    if folded:
        noun = _FOLDABLE.get(item.kind, "output")
        plural = "line" if len(lines) == 1 else "lines"
        rows.append(Row("class:fold", f"   + {len(lines)} {plural} of {noun} ({_KEY.get(item.kind, 'Z')} to expand)"))
        return rows
    rows.extend(Row(style, f"   {line}") for line in lines)
    return rows


def _markdown(text: str, *, answer: bool) -> list[Row]:
    """Line-level Markdown: headings, bullets, quotes and fenced code get their own trusted styles."""
    base = "class:answer" if answer else "class:narration"
    rows: list[Row] = []
    in_code = False
    for line in text.splitlines() or [""]:
        stripped = line.lstrip()
        if stripped.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            rows.append(Row("class:code", "    " + line))
        elif stripped.startswith("#"):
            rows.append(Row(base + " class:heading", stripped.lstrip("#").strip()))
        elif stripped.startswith(("- ", "* ", "+ ")):
            indent = line[: len(line) - len(stripped)]
            rows.append(Row(base, f"{indent}\N{BULLET} {_inline(stripped[2:])}"))
        elif stripped.startswith(">"):
            rows.append(Row("class:quote", "\N{BOX DRAWINGS LIGHT VERTICAL} " + _inline(stripped[1:].strip())))
        else:
            rows.append(Row(base, _inline(line)))
    return rows


def _inline(text: str) -> str:
    # Emphasis markers are dropped, not styled: a style per span would need parsing model text into markup.
    return text.replace("**", "").replace("__", "").replace("`", "")
