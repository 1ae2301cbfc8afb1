"""Make model-influenced text safe to show on an operator's terminal.

A model chooses tool arguments, questions and options; a tool, a peer, a journal or a configuration
supplies names and output. Printed raw, an escape sequence in them could move the cursor, clear the
screen, retitle the window or write the clipboard, and a bidi control could show a command line in an
order other than the one that runs. One rule, applied by every print path of the CLI:

1. Escape sequences are removed whole: CSI (`ESC [` parameters, intermediates, final byte), OSC and the
   other string controls (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _`, up to BEL or ST, or to the end
   of the text when unterminated), any other `ESC <intermediates> <final>`, and the 8-bit C1 forms
   (U+009B CSI, U+009D OSC, U+0090/98/9E/9F strings).
2. Every other control character (C0, DEL, C1 U+0080 to U+009F, so BEL too) becomes a space; newline
   and tab survive where the layout keeps lines (`sanitize_for_display`).
3. Bidi and invisible format characters (`INVISIBLE`: U+061C, U+200E/F, U+202A-E, U+2066-9 and the
   other U+206x, U+200B, U+2060-4, U+00AD, U+180E, U+FEFF, U+FFF9-B, the tag characters
   U+E0000-E007F, and the separators U+2028/9) are shown as a visible `<U+202E>`: the text stays in
   the order it is stored, and the operator sees that it carried one.

Two variants, as in fisk-ai (which has rules 1 and 2 for 7-bit sequences only):

* `sanitize_for_terminal`: one line. The rule above, then runs of whitespace collapse to one space,
  then the result is capped at `max_runes` code points plus `…`. Escapes go first so a cut never
  leaves half a sequence behind.
* `sanitize_for_display`: newlines and tabs survive, nothing is collapsed or capped (for viewers that
  wrap and scroll).

An argv shown for approval is quoted by `fiskai_core.confirm.render_command_line` instead, which writes
the same characters as `$'\\u202e'` escapes so the line stays exact.

This module does not redact secrets or neutralize UI markup; callers that render markup do that.
"""

from __future__ import annotations

import re

__all__ = [
    "ELLIPSIS",
    "INVISIBLE",
    "elide_middle",
    "sanitize_for_display",
    "sanitize_for_terminal",
    "truncate_runes",
    "visible_format_controls",
]

ELLIPSIS = "…"
"""Appended by `truncate_runes` when it cuts text."""

_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"  # CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|\Z)"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"  # other escapes, e.g. ESC ( B or ESC c
    r"|\x1b",  # a lone or malformed ESC
)
INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000e0000-\U000e007f]"
)
"""Bidi controls, invisible format characters and the Unicode line/paragraph separators (rule 3)."""
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DISPLAY_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ELIDE_HEAD = 10
_ELIDE_TAIL = 6
_ELIDE_MARK = "..."


def truncate_runes(text: str, max_runes: int) -> str:
    """Cap `text` at `max_runes` code points, appending `…` when anything was cut.

    Args:
        text: The text; already sanitized if it is going to a terminal.
        max_runes: The cap, in code points (Go runes).

    Returns:
        `text` unchanged when short enough, else its first `max_runes` code points plus `…`.
    """
    if len(text) <= max_runes:
        return text
    return text[:max_runes] + ELLIPSIS


def sanitize_for_terminal(text: str, max_runes: int | None = None) -> str:
    """Strip escapes and controls, fold to one line and optionally cap the length.

    Args:
        text: Model-influenced text.
        max_runes: Cap in code points after sanitizing (`…` appended when cut); `None` for no cap.

    Returns:
        Plain single-line text.
    """
    text = _CONTROLS.sub(" ", visible_format_controls(_ESCAPES.sub("", text)))
    text = " ".join(text.split())
    return text if max_runes is None else truncate_runes(text, max_runes)


def sanitize_for_display(text: str) -> str:
    """Strip escapes and controls but keep newlines and tabs; no collapsing, no cap.

    Args:
        text: Model-influenced text.

    Returns:
        Text safe to place in a wrapping, scrolling viewer.
    """
    return _DISPLAY_CONTROLS.sub(" ", visible_format_controls(_ESCAPES.sub("", text)))


def visible_format_controls(text: str) -> str:
    """Show each bidi or invisible format character (`INVISIBLE`) as `<U+XXXX>`, leaving the rest alone.

    Args:
        text: Text whose escape sequences, if it goes to a terminal, are handled separately.

    Returns:
        `text` with every such character replaced by its visible form.
    """
    return INVISIBLE.sub(_code_point, text)


def _code_point(match: re.Match[str]) -> str:
    return f"<U+{ord(match.group()):04X}>"


def elide_middle(text: str) -> str:
    """Shorten a long value to its first 10 and last 6 code points around `...`.

    Values up to 19 code points (10 + 3 + 6) are returned unchanged, so similar values that share a
    prefix stay distinguishable by their tail.

    Args:
        text: The value.

    Returns:
        The value, elided in the middle when long.
    """
    if len(text) <= _ELIDE_HEAD + len(_ELIDE_MARK) + _ELIDE_TAIL:
        return text
    return text[:_ELIDE_HEAD] + _ELIDE_MARK + text[-_ELIDE_TAIL:]
