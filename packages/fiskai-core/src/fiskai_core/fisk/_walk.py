"""The command tree of a fisk application as a list of tool specifications.

Walk rules (fisk-ai `ApplicationTools`): commands are visited depth first in model order; a hidden
command is skipped with its whole subtree; a command with sub-commands is a group (recursed, never a
tool); every other command is a leaf and becomes one `CommandSpec`, named by its path joined with `_`.
Top-level app args (apps without commands) give no tools.

A `CommandSpec` is a pure value: what the tool is called, how it is described, which schema it
advertises and which global flags it carries. Executing it (binary, environment, output capture) is
built on top of it elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from fiskai_core._gojson import go_quote
from fiskai_core.errors import ArgumentsError, IntrospectionError
from fiskai_core.tools._arguments import ToolArguments, parse_arguments
from fiskai_core.tools._tags import MAX_TOOL_NAME_LENGTH

from ._args import build_argv
from ._describe import human_description, model_description, trace_line, trace_line_short
from ._globals import applicable_globals, merge_global_flags, resolve_global_flags
from ._model import ApplicationModel, CmdModel, FlagModel
from ._schema import derived_command_schema

__all__ = ["MAX_TOOL_NAME_LENGTH", "CommandSpec", "SchemaSource", "walk_commands"]

SchemaSource = Literal["fisk", "derived"]
"""`fisk`: the command's own precomputed `restricted_schema`; `derived`: built from a v0.8 model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandSpec:
    """One runnable leaf command, ready to be offered as a tool."""

    name: str
    """The tool name: the command path joined with `_` (`cluster_node_drain`)."""
    path: tuple[str, ...]
    """The command path words, as passed before the arguments on the command line."""
    cmd: CmdModel
    """The leaf's model (flags, args, schemas)."""
    tags: tuple[str, ...]
    """The command's tags in declaration order, reserved `ai:` tags included."""
    description: str
    """For people: the help, else the long help."""
    model_description: str
    """For models: combined help and long help, then `Tags: ...`."""
    input_schema: dict[str, JsonValue]
    """The advertised JSON schema. The introspected `restricted_schema` object itself when no globals
    apply (shared: never mutate it), else a merged deep copy, else a derived schema."""
    schema_source: SchemaSource
    global_flags: tuple[FlagModel, ...] = ()
    """Exposed application global flags this command carries (those its own names do not shadow)."""

    @property
    def command(self) -> str:
        """The command path as typed, words separated by spaces (`cluster node drain`)."""
        return " ".join(self.path)

    @property
    def strict_schema(self) -> bool:
        """True for fisk's own schema (values are checked against it); False for a derived one (keys only)."""
        return self.schema_source == "fisk"

    def build_argv(self, arguments: ToolArguments) -> list[str]:
        """The argv for a decoded call: path, global flag tokens, then the command's own tokens.

        Args:
            arguments: The call, from `fiskai_core.exec.parse_arguments`.

        Returns:
            The argv without the binary.

        Raises:
            ArgumentsError: The arguments cannot become an argv; the message is fisk-ai's.
        """
        return build_argv(self.path, self.cmd, self.global_flags, arguments)

    def argv(self, raw: str | bytes | None) -> list[str]:
        """`build_argv` for the model's raw JSON (`None`, empty and `null` mean `{}`).

        Raises:
            ArgumentsError: The arguments do not decode or cannot become an argv; the message is fisk-ai's.
        """
        return self.build_argv(parse_arguments(raw, command=self.command))

    def trace_line(self, raw: str | bytes | None) -> str:
        """The call as a sanitized command line (the command path when the arguments are unusable).

        Args:
            raw: The model's JSON arguments.

        Returns:
            The display line, capped at 2000 runes.
        """
        return trace_line(self.path, self._argv_or_none(raw))

    def trace_line_short(self, raw: str | bytes | None) -> str:
        """Like `trace_line` with long values elided in the middle.

        Args:
            raw: The model's JSON arguments.

        Returns:
            The display line.
        """
        return trace_line_short(self.path, self._argv_or_none(raw))

    def _argv_or_none(self, raw: str | bytes | None) -> list[str] | None:
        try:
            return self.argv(raw)
        except ArgumentsError:
            return None


def walk_commands(
    app: ApplicationModel | None,
    *,
    global_flags: Sequence[str] = (),
    require_schema: bool = False,
    refused: list[str] | None = None,
) -> list[CommandSpec]:
    """Turn every runnable leaf of an application into a `CommandSpec`, depth first in model order.

    The binary, not the model, names its commands, but a name still becomes an argv word and a tool
    name, so a command whose name is not a plain word (empty, `--help`, `../../etc`, a newline, or
    anything but ASCII letters, digits, `-` and `_`, not starting with `-` or `_`), whose tool name is
    over `MAX_TOOL_NAME_LENGTH`, or whose tool name an earlier command already has, is refused (with
    its subtree, for a group).

    Args:
        app: The introspected application.
        global_flags: The `global_flags` allowlist; required app flags are exposed regardless.
        require_schema: Refuse leaves without a precomputed `restricted_schema` (fisk-ai's behavior)
            instead of deriving one.
        refused: When given, one line per refused command is appended, saying which and why.

    Returns:
        The specs; empty for an application without commands.

    Raises:
        IntrospectionError: `app` is None, or `require_schema` and a leaf has no schema.
        ConfigError: A `global_flags` entry is unknown, hidden or a framework flag.
    """
    if app is None:
        raise IntrospectionError("application model is nil")
    exposed = resolve_global_flags(app, global_flags)
    reasons: list[str] = [] if refused is None else refused
    specs: list[CommandSpec] = []
    seen: set[str] = set()
    for path, cmd in _leaves(app.commands, (), reasons):
        name = "_".join(path)
        if name in seen:
            reasons.append(
                f"command {go_quote(' '.join(path))} was skipped: an earlier command already has the tool name "
                f"{go_quote(name)}"
            )
            continue
        if len(name) > MAX_TOOL_NAME_LENGTH:
            reasons.append(
                f"command {go_quote(' '.join(path))} was skipped: its tool name is longer than "
                f"{MAX_TOOL_NAME_LENGTH} characters"
            )
            continue
        seen.add(name)
        specs.append(_spec(path, cmd, exposed, require_schema=require_schema))
    return specs


"""The longest tool name model APIs accept (Anthropic: `^[a-zA-Z0-9_-]{1,128}$`)."""
_COMMAND_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def _leaves(
    commands: Sequence[CmdModel], prefix: tuple[str, ...], refused: list[str]
) -> Iterator[tuple[tuple[str, ...], CmdModel]]:
    for cmd in commands:
        if cmd.hidden:
            continue
        path = (*prefix, cmd.name)
        if _COMMAND_WORD.fullmatch(cmd.name) is None:
            shown = go_quote(" ".join(prefix)) + " sub-command " if prefix else ""
            refused.append(
                f"command {shown}{go_quote(cmd.name)} was skipped: a command name must be a plain word of ASCII "
                "letters, digits, '-' and '_' that does not start with '-' or '_'"
            )
            continue
        if cmd.commands:
            yield from _leaves(cmd.commands, path, refused)
        else:
            yield path, cmd


def _spec(path: tuple[str, ...], cmd: CmdModel, exposed: Sequence[FlagModel], *, require_schema: bool) -> CommandSpec:
    schema_source: SchemaSource
    if cmd.restricted_schema is not None:
        schema, schema_source = cmd.restricted_schema, "fisk"
    elif require_schema:
        raise IntrospectionError(
            f"command {go_quote(' '.join(path))} has no precomputed schema; introspect the application with a "
            "current fisk"
        )
    else:
        schema, schema_source = derived_command_schema(cmd), "derived"
    globals_ = applicable_globals(exposed, cmd)
    return CommandSpec(
        name="_".join(path),
        path=path,
        cmd=cmd,
        tags=tuple(cmd.tags),
        description=human_description(cmd),
        model_description=model_description(cmd),
        input_schema=merge_global_flags(schema, globals_) if globals_ else schema,
        schema_source=schema_source,
        global_flags=globals_,
    )
