"""`fiskai run`'s presentation and credential flags, and their environment forms.

Each flag has the environment variable of the Go agent's (`NO_TUI`, `VERBOSE`, `NO_COLOR`, `TOOL_OUTPUT`,
`HTTP_DEBUG`, `ANTHROPIC_API_KEY_FILE`); a flag on the command line wins over its variable. `NO_COLOR`
follows no-color.org: any non-empty value turns colour off. `TOOL_OUTPUT` also takes the Go agent's
boolean (`1`/`true` is `full`, `0`/`false` is `folded`), as does `HTTP_DEBUG` (`1`/`true` writes
`http-debug.log` in the working directory; any other value names the file).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
from typing_extensions import override

from fiskai_cli.ui.line_events import ToolOutput

__all__ = ["HTTP_DEBUG_DEFAULT", "ToolOutputChoice", "http_debug_file", "no_color", "read_api_key_file", "tool_output"]

HTTP_DEBUG_DEFAULT = "http-debug.log"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_MAX_KEY_BYTES = 64 * 1024


class ToolOutputChoice(click.Choice[str]):
    """`folded`, `full` or `none`; from `TOOL_OUTPUT` also the Go agent's boolean."""

    def __init__(self) -> None:
        super().__init__(["folded", "full", "none"])

    @override
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value).strip().lower()
        if text in _TRUE:
            return "full"
        if text in _FALSE:
            return "folded"
        return super().convert(text, param, ctx)


def tool_output(value: str) -> ToolOutput:
    """The checked choice as its literal type."""
    if value == "full":
        return "full"
    if value == "none":
        return "none"
    return "folded"


def no_color(flag: bool) -> bool:
    """`--no-color`, or a non-empty `NO_COLOR` (no-color.org: its value does not matter)."""
    return flag or bool(os.environ.get("NO_COLOR"))


def http_debug_file(flag: Path | None) -> Path | None:
    """`--http-debug FILE`, else `HTTP_DEBUG` (a boolean, or the file's name), else None."""
    if flag is not None:
        return flag
    value = os.environ.get("HTTP_DEBUG", "").strip()
    if not value or value.lower() in _FALSE:
        return None
    return Path(HTTP_DEBUG_DEFAULT if value.lower() in _TRUE else value)


def read_api_key_file(path: Path) -> str:
    """The API key in `path`, trailing whitespace dropped.

    Raises:
        click.ClickException: the file cannot be read, is empty, or is not a short text file.
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_KEY_BYTES + 1)
    except OSError as err:
        raise click.ClickException(f'--api-key-file "{path}": {err.strerror or err}') from err
    if len(data) > _MAX_KEY_BYTES:
        raise click.ClickException(f'--api-key-file "{path}" is over 64 KiB; it should hold only the API key')
    try:
        key = data.decode("utf-8").rstrip()
    except UnicodeDecodeError:
        raise click.ClickException(
            f'--api-key-file "{path}" is not UTF-8 text; it should hold only the API key'
        ) from None
    if not key:
        raise click.ClickException(f'--api-key-file "{path}" is empty; write the API key into it')
    if "\n" in key or "\r" in key:
        raise click.ClickException(f'--api-key-file "{path}" holds more than one line; it should hold only the API key')
    return key
