"""The full-screen transcript's layout: styles come from the entry's kind only, folding, Markdown shapes."""

from __future__ import annotations

import os

import pytest

from fiskai_cli.ui.chat import End, Help, Send, Unknown, resolve
from fiskai_cli.ui.tui.capture import StderrCapture
from fiskai_cli.ui.tui.transcript import Row, Transcript, entry


def test_model_text_cannot_carry_an_escape_sequence_or_choose_a_style() -> None:
    transcript = Transcript()
    transcript.add(entry("narration", "ok \x1b[2J\x1b]0;pwned\x07 <b>class:error</b>"))
    transcript.add(entry("call", "cluster node drain \x1b[31mn1\nsecond line"))
    rows = transcript.rows()
    assert all("\x1b" not in row.text and "\x07" not in row.text for row in rows)
    # The sequences are gone entirely (the title text too); markup-looking text stays plain characters.
    assert rows[0] == Row("class:narration", "ok  <b>class:error</b>")
    assert [row.style for row in rows] == ["class:narration", "class:call"]
    assert "\n" not in rows[1].text  # a call is one line, whatever the model put in it


def test_tool_output_and_thinking_are_folded_until_toggled() -> None:
    transcript = Transcript()
    transcript.add(entry("thinking", "planning", "planning\nstep one\nstep two"))
    transcript.add(entry("result", "<- (exit 0)", "n1 up\nn2 up"))
    folded = [row.text for row in transcript.rows()]
    assert folded == [
        "~ planning",
        "   + 3 lines of thinking (z to expand)",
        "<- (exit 0)",
        "   + 2 lines of output (Z to expand)",
    ]
    transcript.fold_output = False
    assert [row.text for row in transcript.rows()][2:] == ["<- (exit 0)", "   n1 up", "   n2 up"]
    transcript.fold_thinking = False
    assert "   step two" in [row.text for row in transcript.rows()]


def test_narration_markdown_shapes_get_their_own_styles() -> None:
    transcript = Transcript()
    transcript.add(entry("narration", "## Nodes\n- **n1** is up\n```\nraw `code`\n```\n> quoted"))
    assert transcript.rows() == [
        Row("class:narration class:heading", "Nodes"),
        Row("class:narration", "\N{BULLET} n1 is up"),
        Row("class:code", "    raw `code`"),
        Row("class:quote", "\N{BOX DRAWINGS LIGHT VERTICAL} quoted"),
    ]


@pytest.mark.parametrize(
    ("typed", "action"),
    [
        ("  ", None),
        ("status?", Send("status?")),
        ("//etc", Send("/etc")),
        ("/clear", Send("", reset=True, notice="context cleared")),
        ("/CLEAR list\nthe nodes", Send("list\nthe nodes", reset=True, notice="context cleared")),
        ("/redo", Send("first prompt", reset=True, notice="restarting with the original prompt")),
        ("/quit", End()),
        ("/help", Help()),
        ("/drop table", Unknown("/drop")),
    ],
)
def test_slash_commands_are_resolved_before_anything_is_sent(typed: str, action: object) -> None:
    assert resolve(typed, "first prompt") == action


def test_stderr_is_held_while_captured_and_written_after(capfd: pytest.CaptureFixture[str]) -> None:
    # File-descriptor level, as a C library or a child process would write (pytest's capfd replaces
    # sys.stderr with its own object, which is not fd 2).
    with StderrCapture():
        os.write(2, b"from a library\n")
        assert capfd.readouterr().err == ""
    assert capfd.readouterr().err == "from a library\n"
