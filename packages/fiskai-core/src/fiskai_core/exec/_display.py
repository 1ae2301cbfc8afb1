"""How a command call is shown: display only, never what runs.

`command_line` is what runs (argv joined with spaces, no binary path, no quoting), `trace_line` is
that line made safe for a terminal and capped at 2000 runes, and `trace_line_short` additionally
elides the middle of every long value for a scrolling transcript. A confirm prompt and the executed
command always use the full argv (`fiskai_core.confirm.render_command_line` quotes it for approval).
"""

from __future__ import annotations

from collections.abc import Sequence

from fiskai_core.sanitize import elide_middle, sanitize_for_terminal

__all__ = ["TRACE_LINE_MAX_RUNES", "command_line", "trace_line", "trace_line_short"]

TRACE_LINE_MAX_RUNES = 2000
"""Cap of a sanitized trace line, in code points (`…` is appended when cut)."""


def command_line(argv: Sequence[str]) -> str:
    """The command line a person would type, without the binary: argv joined with single spaces.

    Args:
        argv: Command path plus argument tokens.

    Returns:
        The joined line (no quoting: argv never passes through a shell).
    """
    return " ".join(argv)


def trace_line(path: Sequence[str], argv: Sequence[str] | None) -> str:
    """The command line made safe for a terminal, or the command path when argv could not be built.

    Args:
        path: The command path words.
        argv: The full argv (path included), or `None` when the arguments were unusable.

    Returns:
        The sanitized single line, capped at `TRACE_LINE_MAX_RUNES` plus `…`.
    """
    line = command_line(path if argv is None else argv)
    return sanitize_for_terminal(line, TRACE_LINE_MAX_RUNES)


def trace_line_short(path: Sequence[str], argv: Sequence[str] | None) -> str:
    """Like `trace_line`, but every long value is elided in the middle (first 10 + `...` + last 6).

    Path words and flag names are kept. Before a lone `--`, a token starting with `-` and holding `=`
    has its value elided and a bare flag is kept; any other token, and every token after `--`, is
    elided whole.

    Args:
        path: The command path words.
        argv: The full argv (path included), or `None` when the arguments were unusable.

    Returns:
        The sanitized, elided single line, capped at `TRACE_LINE_MAX_RUNES` plus `…`.
    """
    if argv is None:
        return trace_line(path, None)
    tokens = list(argv[: len(path)])
    positional = False
    for token in argv[len(path) :]:
        # Sanitize each value before eliding it, so the cut never splits an escape sequence.
        clean = sanitize_for_terminal(token)
        if not positional and token == "--":
            positional = True
            tokens.append(token)
        elif not positional and token.startswith("-"):
            name, sep, value = clean.partition("=")
            tokens.append(f"{name}={elide_middle(value)}" if sep else clean)
        else:
            tokens.append(elide_middle(clean))
    return sanitize_for_terminal(command_line(tokens), TRACE_LINE_MAX_RUNES)
