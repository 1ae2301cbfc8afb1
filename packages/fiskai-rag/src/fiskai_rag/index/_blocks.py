"""Markdown lines to blocks: front matter, ATX and setext headings, fences, indented code, breaks.

One pass over a document's lines (`scan`) that follows CommonMark's block rules for the constructs
chunking cares about; `_chunk` packs what it finds into chunks under heading breadcrumbs. The tests
check it against markdown-it-py's headings and fences on real documentation.
"""

from __future__ import annotations

__all__ = ["CODE", "LIST_MARKERS", "PROSE", "Item", "front_matter", "is_list_item", "normalise", "scan"]

LIST_MARKERS = ("- ", "* ", "+ ")
_STRUCTURAL = frozenset(" \t#~=-*_+0123456789")
"""First characters that may open a heading, fence, list, break, setext underline or indented code."""
_OPENERS = frozenset("`~#=-*_+0123456789")
"""First non-blank characters of a line that may open or close a block inside an open paragraph."""

PROSE = 0
CODE = -1
Item = tuple[str, int]
"""What the scanner finds, `(text, kind)`: a prose block (`PROSE`), code kept whole even when oversized
(`CODE`), or a heading (its level, 1-6). Plain tuples: influxdata-docs has 97k blocks, and a slots
dataclass took 0.43 us to build where a tuple takes 0.04 us."""


def normalise(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def front_matter(lines: list[str]) -> tuple[int, str, str]:
    """Skip YAML (`---`) or TOML (`+++`) front matter; return the first body line, any title and any date."""
    if not lines or lines[0].rstrip() not in ("---", "+++"):
        return 0, "", ""
    opener = lines[0].rstrip()
    closers = ("---", "...") if opener == "---" else ("+++",)
    for end in range(1, len(lines)):
        if lines[end].rstrip() in closers:
            fields = lines[1:end]
            return end + 1, _front_matter_value(fields, "title"), _front_matter_date(fields)
    return 0, "", ""  # an unclosed opener is a thematic break, not front matter


def _front_matter_value(lines: list[str], name: str) -> str:
    for line in lines:
        if name not in line:
            continue  # cheaper than the partition below, whose key must equal `name`
        key, sep, value = line.partition(":" if ":" in line else "=")
        if sep and key.strip() == name and line[:1] not in (" ", "\t"):
            return value.strip().strip("\"'").strip()
    return ""


def _front_matter_date(lines: list[str]) -> str:
    """The `date:` value cut to `YYYY-MM-DD` when it starts with a real calendar day, else `""`."""
    value = _front_matter_value(lines, "date")[:10]
    if len(value) != 10 or value[4] != "-" or value[7] != "-" or not value.replace("-", "").isdigit():
        return ""
    year, month, day = int(value[:4]), int(value[5:7]), int(value[8:])
    if not 1 <= month <= 12 or not 1 <= day <= _month_days(year, month):
        return ""
    return value


def _month_days(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _indent(line: str) -> int:
    rest = line.lstrip(" ")
    if rest[:1] != "\t":
        return len(line) - len(rest)
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _fence_opener(stripped: str) -> str | None:
    if stripped[:3] not in ("```", "~~~"):
        return None
    char = stripped[0]
    run = len(stripped) - len(stripped.lstrip(char))
    if char == "`" and "`" in stripped[run:]:
        return None  # backtick info strings may not contain backticks: this is inline code
    return char * run


def _atx(stripped: str) -> tuple[int, str] | None:
    level = len(stripped) - len(stripped.lstrip("#"))
    if level == 0 or level > 6:
        return None
    rest = stripped[level:]
    if rest and rest[0] not in " \t":
        return None
    text = rest.strip()
    closing = text.rstrip("#")
    if closing != text and (not closing or closing[-1] in " \t"):
        text = closing.strip()
    return level, text


def _is_thematic_break(stripped: str) -> bool:
    compact = stripped.replace(" ", "").replace("\t", "")
    return len(compact) >= 3 and compact[0] in "-*_" and compact == compact[0] * len(compact)


def is_list_item(stripped: str) -> bool:
    if stripped.startswith(LIST_MARKERS) or stripped in ("-", "*", "+"):
        return True
    digits = len(stripped) - len(stripped.lstrip("0123456789"))
    return 0 < digits <= 9 and stripped[digits : digits + 1] in (".", ")")


# One pass over the lines keeps every block rule (fences, indented code, setext, front matter) in one place;
# splitting it would scatter the state they share.
def scan(lines: list[str], start: int) -> list[Item]:  # noqa: C901
    """Blocks and headings in document order (a list: cheaper than a generator here).

    Every line takes the first of these that applies, cheapest and most common first: a blank line, a
    line of prose or a list item at column 0, a line inside an open paragraph that can neither open nor
    close a block, and only then the rules of every block. A fence's code is searched for its closing
    line with a substring test before any copy of a line.

    Tried (same chunks, byte for byte): scanning offsets into the text instead of a list of lines, with
    one regex taking each run of paragraph lines and one the code up to its closing fence, was slower
    (same run, best of 9 / 5 on a loaded machine: generated 1k corpus 49 -> 68 ms, influxdata-docs 431
    -> 562 ms): the regex reads every character of a run, where `split` and the per-line tests look at
    few. Taking each run of prose lines in an inner
    loop gained nothing (paragraphs are a few lines).
    """
    out: list[Item] = []
    emit = out.append
    para: list[str] = []
    in_list = False
    i = start
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line:
            if para:
                emit(("\n".join(para), PROSE))
                para = []
            i += 1
            continue
        first = line[0]
        if first not in _STRUCTURAL and (first != "`" or line[:3] != "```"):
            # Most lines: at column 0, a character that starts no block structure (a letter, `>`, `|`,
            # `[`, `<`, a lone backtick of inline code ...) means prose.
            if not para:
                in_list = False
            para.append(line)
            i += 1
            continue
        if (first == "-" or first == "*") and line[1:2] == " " and line[2:3] not in ("-", "*", "_", " ", ""):
            # List items at column 0 (not thematic breaks such as `- - -`).
            in_list = True
            para.append(line)
            i += 1
            continue
        if line.isspace():
            if para:
                emit(("\n".join(para), PROSE))
                para = []
            i += 1
            continue
        stripped = line.strip()
        first = stripped[0]
        if para and first not in _OPENERS:
            # An indented line of an open paragraph or list item: no fence, heading, underline, break or
            # list item starts with this character, and indented code never interrupts a paragraph.
            para.append(line)
            i += 1
            continue
        rest = line.lstrip(" ")
        indent = len(line) - len(rest) if rest[:1] != "\t" else _indent(line)
        if indent >= 4 and not para and not in_list:
            # Indented code: runs until a non-blank line indented less than four columns.
            end = i + 1
            last = i
            while end < n and (not lines[end].strip() or _indent(lines[end]) >= 4):
                if lines[end].strip():
                    last = end
                end += 1
            emit(("\n".join(lines[i : last + 1]), CODE))
            i = last + 1
            continue
        fence = _fence_opener(stripped) if first in "`~" else None
        if fence is not None:
            if para:
                emit(("\n".join(para), PROSE))
                para = []
            fence_char = fence[0]
            end = n
            for at in range(i + 1, n):
                closing = lines[at]
                # `in` first: a C substring search rules out most lines of the code without a copy.
                if fence in closing:
                    closing = closing.lstrip()
                    if closing.startswith(fence) and not closing.strip().lstrip(fence_char):
                        end = at
                        break
            emit(("\n".join(lines[i : end + 1]), CODE))
            i = end + 1
            in_list = in_list and indent > 0
            continue
        heading = _atx(stripped) if first == "#" and indent < 4 else None
        if heading is not None:
            if para:
                emit(("\n".join(para), PROSE))
                para = []
            in_list = False
            if heading[1]:
                emit((heading[1], heading[0]))
            i += 1
            continue
        if para and first in "=-" and indent < 4 and not in_list and stripped == first * len(stripped):
            # Setext underline: the open paragraph becomes the heading text.
            text = " ".join(p.strip() for p in para)
            para = []
            emit((text, 1 if first == "=" else 2))
            i += 1
            continue
        if first in "-*_" and indent < 4 and stripped.count(first) >= 3 and _is_thematic_break(stripped):
            if para:
                emit(("\n".join(para), PROSE))
                para = []
            in_list = False
            i += 1
            continue
        if indent < 4:
            if first in "-*+0123456789" and is_list_item(stripped):
                in_list = True
            elif indent == 0 and not para:
                in_list = False
        para.append(line)
        i += 1
    if para:
        emit(("\n".join(para), PROSE))
    return out
