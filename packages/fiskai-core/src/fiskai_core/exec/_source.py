"""What a tool source provides: commands described as tools, and an argv for each decoded call.

A tool source is a kind of program whose commands fiskai offers to a model: today fisk applications
(`fiskai_core.fisk`, which introspects a binary with `--fisk-introspect`); Python CLIs are next. A
source only describes and renders. How a command then runs (no shell, no stdin, its own process
group, credentials stripped, output capped) is `fiskai_core.exec`, the same for every source:
`fiskai_core.exec.running.command_tools(source)` binds a source's commands to its binary as `Tool`s, which
every driver (agent, MCP, A2A) consumes without knowing the source.

A second source is a new package beside `fiskai_core/fisk/` with an object satisfying `ToolSource`;
neither the fisk code nor the drivers change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from pydantic import JsonValue

if TYPE_CHECKING:
    # Only a type here: importing the tools package at run time would load it for every agent.yaml read.
    from fiskai_core.tools._arguments import ToolArguments

__all__ = ["SourceCommand", "ToolSource"]


class SourceCommand(Protocol):
    """One command of a source, described for a model and able to render a call as an argv.

    Pure: nothing here runs a process. Implementations are immutable values shared between calls.
    It is also a `fiskai_core.tools.Selectable`, so `select_tools` applies to it.
    """

    @property
    def name(self) -> str:
        """The tool name (for fisk, the command path joined with `_`); ASCII letters, digits, `-`, `_`."""
        ...

    @property
    def tags(self) -> Sequence[str]:
        """Tags in declaration order, reserved `ai:` tags included."""
        ...

    @property
    def path(self) -> Sequence[str]:
        """The command path words, passed right after the binary (`("cluster", "node", "drain")`)."""
        ...

    @property
    def command(self) -> str:
        """The command path as a person types it, words separated by spaces (`cluster node drain`)."""
        ...

    @property
    def description(self) -> str:
        """The short description for people (`info`, `tools list`)."""
        ...

    @property
    def model_description(self) -> str:
        """The description a model reads (ending with `Tags: ...` when the command has tags)."""
        ...

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        """The JSON Schema the model is shown (an object schema). Never mutate it."""
        ...

    @property
    def strict_schema(self) -> bool:
        """Whether `input_schema` states the value kinds the command's own parser enforces.

        True: a call's values are checked against it before anything runs. False (a schema guessed
        from less information): only its keys are, so a key the model was not shown is still refused.
        """
        ...

    def build_argv(self, arguments: ToolArguments) -> list[str]:
        """The argv for one call, without the binary: command path words, then argument tokens.

        The trust boundary of the source: no model-supplied value may become an option or a separate
        word before the source's end-of-options marker. Values are not type-checked here.

        Raises:
            ArgumentsError: The arguments cannot become an argv; the message says why, for the model.
        """
        ...


class ToolSource(Protocol):
    """A program whose selected commands become tools."""

    @property
    def path(self) -> str:
        """The absolute path of the binary every command runs."""
        ...

    @property
    def selected(self) -> Sequence[SourceCommand]:
        """The commands a model may call, after `ai:deny` and include/exclude, in a stable order."""
        ...
