"""How a fisk command tool is described and how a call to it is shown.

Descriptions (fisk-ai `Description` / `ModelDescription`): people see the short help; a model sees the
short and long help combined without repeating one that contains the other, then the command's tags,
reserved `ai:` tags included, so prompts and tool search can key off them.

Trace lines are display only: `command_line` is what runs (argv joined with spaces, no binary path, no
quoting), `trace_line` is that line made safe for a terminal and capped at 2000 runes, and
`trace_line_short` additionally elides the middle of every long value for a scrolling transcript. A
confirm prompt and the executed command always use the full line.
"""

from __future__ import annotations

from collections.abc import Sequence

from fiskai_core.sanitize import elide_middle, sanitize_for_terminal

from ._model import CmdModel

__all__ = [
    "TRACE_LINE_MAX_RUNES",
    "command_line",
    "human_description",
    "model_description",
    "trace_line",
    "trace_line_short",
]

TRACE_LINE_MAX_RUNES = 2000
"""Cap of a sanitized trace line, in code points (`…` is appended when cut)."""


def human_description(cmd: CmdModel) -> str:
    """The plain description for people (`info`, tables): the help, else the long help.

    Args:
        cmd: The command.

    Returns:
        `help`, or `help_long` when `help` is empty.
    """
    return cmd.help or cmd.help_long


def _model_help(short: str, long: str) -> str:
    if not short:
        return long
    if not long:
        return short
    if short in long:
        return long
    if long in short:
        return short
    return f"{short}\n\n{long}"


def model_description(cmd: CmdModel) -> str:
    """The description sent to a model (and MCP, and the a2a card).

    Args:
        cmd: The command.

    Returns:
        Short and long help combined (only the longer when one contains the other), then
        `Tags: a, b` after a blank line when the command has tags (alone when there is no help).
    """
    text = _model_help(cmd.help, cmd.help_long)
    if not cmd.tags:
        return text
    tag_line = "Tags: " + ", ".join(cmd.tags)
    return f"{text}\n\n{tag_line}" if text else tag_line


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
