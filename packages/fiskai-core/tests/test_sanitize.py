"""Terminal sanitization: escapes stripped before truncation, controls neutralized."""

from __future__ import annotations

import pytest

from fiskai_core.sanitize import elide_middle, sanitize_for_display, sanitize_for_terminal, truncate_runes


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("a\x1b[2J\x1b[1;1Hb", "ab"),
        ("\x1b]0;title\x07x", "x"),
        ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),
        ("\x1b(Bplain\x1bc", "plain"),
        ("\x9b31mc1\x9d0;t\x9cend", "c1end"),
        ("tab\there\r\nnew\x00\x7f\x85x", "tab here new x"),
        ("  many   spaces \n", "many spaces"),
        ("\x1b]unterminated osc", ""),
    ],
)
def test_sanitize_for_terminal_strips_sequences_and_controls(text: str, clean: str) -> None:
    assert sanitize_for_terminal(text) == clean


def test_sanitize_for_terminal_strips_before_truncating() -> None:
    text = "\x1b[31m" + "a" * 10
    assert sanitize_for_terminal(text, 5) == "aaaaa…"
    assert sanitize_for_terminal("abc", 3) == "abc"


def test_sanitize_for_display_keeps_newlines_and_tabs() -> None:
    assert sanitize_for_display("a\tb\n\x1b[1mc\rd\x07") == "a\tb\nc d "


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        ("invoice\u202efdp.exe", "invoice<U+202E>fdp.exe"),
        ("\u2066rm\u2069 \u200e\u200f\u061c", "<U+2066>rm<U+2069> <U+200E><U+200F><U+061C>"),
        ("zero\u200bwidth\ufeff", "zero<U+200B>width<U+FEFF>"),
        ("a\u2028b\u2029c", "a<U+2028>b<U+2029>c"),
        ("hidden\U000e0041\U000e0042", "hidden<U+E0041><U+E0042>"),
        ("family \U0001f468\u200d\U0001f467 and \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", None),
    ],
)
def test_bidi_and_invisible_format_characters_are_shown_not_obeyed(text: str, clean: str | None) -> None:
    # Shown as <U+XXXX>, so the text keeps its stored order and the operator sees what it carried;
    # the joiners that emoji and Persian words need are left alone.
    assert sanitize_for_terminal(text) == (clean if clean is not None else text)
    assert sanitize_for_display(text) == (clean if clean is not None else text)


def test_every_hostile_kind_at_once_leaves_only_printable_text() -> None:
    hostile = "a\x1b]52;c;aGVsbG8=\x07b\x9b2Jc\x07d\u202ee\x1bPq\x1b\\f"
    assert sanitize_for_terminal(hostile) == "abc d<U+202E>ef"
    assert sanitize_for_display("x\n" + hostile) == "x\nabc d<U+202E>ef"


def test_truncate_and_elide_count_code_points() -> None:
    assert truncate_runes("日本語テキスト", 3) == "日本語…"
    assert elide_middle("é" * 19) == "é" * 19
    assert elide_middle("0123456789" + "x" * 10 + "abcdef") == "0123456789...abcdef"
