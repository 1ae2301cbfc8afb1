"""Where a setting came from: the file's label, its path and the line of every key.

Every config error goes through `Origin.error`, so they all share one shape:
`<file>:<line>: <key.path>: <problem>; <fix>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fiskai_core.errors import ConfigError

__all__ = ["KeyPath", "Origin", "format_path"]

KeyPath = tuple[str | int, ...]
"""A key's location: mapping keys as strings, sequence positions as ints."""


def format_path(path: KeyPath) -> str:
    """Render `("remote_tools", 0, "name")` as `remote_tools[0].name`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


@dataclass(frozen=True, slots=True, kw_only=True)
class Origin:
    """The source of one parsed configuration."""

    label: str
    """How errors name the file (the path as given, or the `source` of a string)."""
    path: Path | None = None
    lines: Mapping[KeyPath, int] = field(default_factory=dict[KeyPath, int])
    """1-based line of each key (for a sequence item, of the item)."""

    def line_of(self, path: KeyPath) -> int | None:
        """The line of `path`, or of its nearest ancestor present in the file (a missing key has none)."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None

    def where(self, path: KeyPath = (), *, line: int | None = None) -> str:
        """`agent.yaml:12`, or just `agent.yaml` when no line is known."""
        found = line if line is not None else self.line_of(path)
        return f"{self.label}:{found}" if found is not None else self.label

    def error(self, path: KeyPath, message: str, *, line: int | None = None, exact: bool = False) -> ConfigError:
        """Build the one-line error for the setting at `path`.

        Args:
            path: the key the error is about (`()` for the whole file).
            message: the problem and its fix.
            line: the line to name, when not the line of `path`.
            exact: `message` is the original's exact wording; the key path is then prefixed only when
                the message does not already name it, so those messages read unchanged.
        """
        dotted = format_path(path)
        if dotted and not (exact and dotted in message):
            message = f"{dotted}: {message}"
        return ConfigError(f"{self.where(path, line=line)}: {message}")
