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


def test_truncate_and_elide_count_code_points() -> None:
    assert truncate_runes("日本語テキスト", 3) == "日本語…"
    assert elide_middle("é" * 19) == "é" * 19
    assert elide_middle("0123456789" + "x" * 10 + "abcdef") == "0123456789...abcdef"
