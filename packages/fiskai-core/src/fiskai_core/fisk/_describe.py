"""How a fisk command tool is described and how a call to it is shown.

Descriptions (fisk-ai `Description` / `ModelDescription`): people see the short help; a model sees the
short and long help combined without repeating one that contains the other, then the command's tags,
reserved `ai:` tags included, so prompts and tool search can key off them.

Trace lines (`command_line`, `trace_line`, `trace_line_short`) are not fisk's own: every command
source's calls are shown the same way, so they live in `fiskai_core.exec` and are re-exported here.
"""

from __future__ import annotations

from fiskai_core.exec import TRACE_LINE_MAX_RUNES, command_line, trace_line, trace_line_short

from ._model import CmdModel

__all__ = [
    "TRACE_LINE_MAX_RUNES",
    "command_line",
    "human_description",
    "model_description",
    "trace_line",
    "trace_line_short",
]


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
