"""A source's command bound to its binary as a `Tool`: decode, check, render, run, result.

The one path from a model's JSON arguments to a running process, whatever the tool source. In order:
the arguments are decoded once (`parse_arguments`, the trust-boundary entry); values that violate the
advertised schema come back as an error result naming every problem (for a schema that is not strict,
only keys the model was not shown); the source renders the argv (its trust boundary: no value can
become an option); an argv holding a NUL byte is refused (no process can receive it); then the binary
runs from that argv with no shell, no stdin and the scrubbed environment. Every outcome is a
`ToolResult`; only cancellation propagates.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from fiskai_core._gojson import go_quote
from fiskai_core.errors import ArgumentsError, CommandError
from fiskai_core.tools import ToolResult
from fiskai_core.tools._validate import keys_only_schema, missing_required, validate_arguments

from ._arguments import ToolArguments, parse_arguments
from ._env import tool_env
from ._run import run_argv
from ._source import SourceCommand, ToolSource

__all__ = ["MAX_COMMAND_CHARS", "CommandTool", "capped_command_line", "command_tools"]

MAX_COMMAND_CHARS = 4096
"""Cap of a result's `command` field, so five 120 KB values cannot make a 600 KB result."""
_KEPT_VALUE_HEAD = 96
_KEPT_VALUE_TAIL = 32


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandTool:
    """One command of a tool source bound to the binary that runs it.

    Satisfies `Tool`, `Confirmable` and `ArgumentValidator`.
    """

    spec: SourceCommand
    """The command as its source describes it (for fisk, a `fiskai_core.fisk.CommandSpec`)."""
    app_path: str
    """The binary, as resolved when the source was loaded."""
    env: Mapping[str, str]
    """The scrubbed environment every call runs with (see `tool_env`)."""
    work_dir: str | None = None
    timeout: float | None = None
    """Seconds before the process group is killed; `None` leaves it to the caller's cancellation."""

    @property
    def name(self) -> str:
        """The tool name (for fisk, the command path joined with `_`)."""
        return self.spec.name

    @property
    def tags(self) -> Sequence[str]:
        """The command's tags in declaration order."""
        return self.spec.tags

    @property
    def description(self) -> str:
        """The description a model reads (help, long help, then `Tags: ...`)."""
        return self.spec.model_description

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        """The advertised schema; shared, never mutate it."""
        return self.spec.input_schema

    def missing_required(self, arguments: str | bytes | None) -> list[str]:
        """The required parameters a call leaves out, in schema order (the agent runner's pre-check)."""
        return missing_required(self.spec.input_schema, arguments)

    def command_argv(self, arguments: str | bytes | None) -> list[str]:
        """The exact argv `execute` would run, binary first (what a confirmation prompt shows).

        Raises:
            ArgumentsError: The arguments do not decode, do not fit the schema, cannot become an argv,
                or hold a NUL byte; `execute` returns the same text as an error result.
        """
        return [self.app_path, *self._argv(arguments)]

    def schema_problems(self, arguments: str | bytes | None) -> list[str]:
        """What in `arguments` violates the advertised schema (empty when it fits or does not decode).

        A strict schema (fisk's own) is enforced whole. One that is not (derived from a fisk v0.8 model,
        which knows no value kinds: rejecting `3` for a flag it can only call a string would mislead the
        model) has only its keys enforced: what the model was shown wins, so a hidden flag the schema
        leaves out is refused although fisk's ArgsFromJSON would accept it.
        """
        try:
            decoded = parse_arguments(arguments)
        except ArgumentsError:
            return []
        return self._problems(decoded)

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """Check, render and run one call; every outcome is a result."""
        try:
            argv = self._argv(arguments)
        except ArgumentsError as err:
            return ToolResult(text=str(err), is_error=True)
        try:
            outcome = await run_argv([self.app_path, *argv], env=self.env, cwd=self.work_dir, timeout=self.timeout)
        except CommandError as err:
            return ToolResult(text=str(err), is_error=True)
        body: dict[str, object] = {
            "command": capped_command_line(argv),
            "exit_code": outcome.exit_code,
            "output": outcome.output,
        }
        if outcome.truncated:
            body["truncated"] = True
        return ToolResult(text=json.dumps(body, ensure_ascii=False, separators=(",", ":")), exit_code=outcome.exit_code)

    def _problems(self, decoded: ToolArguments) -> list[str]:
        schema = self.spec.input_schema if self.spec.strict_schema else keys_only_schema(self.spec.input_schema)
        return validate_arguments(schema, decoded)

    def _argv(self, arguments: str | bytes | None) -> list[str]:
        decoded = parse_arguments(arguments, command=self.spec.command)
        problems = self._problems(decoded)
        if problems:
            raise ArgumentsError(
                f"arguments for tool {go_quote(self.name)} do not match its schema: {'; '.join(problems)}. "
                "Nothing was run; correct the arguments and call again."
            )
        argv = self.spec.build_argv(decoded)
        if any("\x00" in token for token in argv):
            # fisk's ArgsFromJSON copies a NUL through, but no process can receive one in its argv.
            raise ArgumentsError(
                f"building command line for {go_quote(self.spec.command)}: a value contains a NUL byte "
                "(\\u0000), which no command line can carry; remove it and call again"
            )
        return argv


def command_tools(
    source: ToolSource,
    *,
    strip_env: Iterable[str] = (),
    pass_env: Iterable[str] = (),
    work_dir: str | None = None,
    tool_timeout: float | None = None,
) -> list[CommandTool]:
    """Bind a source's selected commands to its binary as runnable tools.

    Args:
        source: For fisk, the `Application` from `fiskai_core.fisk.load_application`.
        strip_env: Further variables to remove from every call's environment: exact names, or a prefix
            ending in `*` (`MYCORP_*`); see `tool_env`.
        pass_env: Exact names exempt from the default credential list (`harness.environment.pass`).
        work_dir: The folder commands run in; the current one when None.
        tool_timeout: Seconds a call may run before its process group is killed.
    """
    env = tool_env(strip=tuple(strip_env), passthrough=tuple(pass_env), work_dir=work_dir)
    return [
        CommandTool(spec=command, app_path=source.path, env=env, work_dir=work_dir, timeout=tool_timeout)
        for command in source.selected
    ]


def capped_command_line(argv: Sequence[str], limit: int = MAX_COMMAND_CHARS) -> str:
    """The argv joined with spaces, bounded: long values elided in their middle, then the line if needed.

    A flag keeps its `--name=` and both ends of its value, so every argument stays visible in order
    unless there are so many that even the elided line exceeds `limit`; then the middle of the line
    goes, with a marker that says how much.

    Args:
        argv: Command path plus argument tokens.
        limit: The most characters kept (plus one marker).

    Returns:
        The line, at most about `limit` characters.
    """
    line = " ".join(argv)
    if len(line) <= limit:
        return line
    line = " ".join(_elide_token(token) for token in argv)
    if len(line) <= limit:
        return line
    cut = len(line) - limit
    head = limit // 2
    return f"{line[:head]}...[{cut} characters elided]...{line[head + cut :]}"


def _elide_token(token: str) -> str:
    name, sep, value = token.partition("=") if token.startswith("--") else ("", "", token)
    if len(value) <= _KEPT_VALUE_HEAD + _KEPT_VALUE_TAIL + 40:
        return token
    elided = len(value) - _KEPT_VALUE_HEAD - _KEPT_VALUE_TAIL
    return f"{name}{sep}{value[:_KEPT_VALUE_HEAD]}...[{elided} characters elided]...{value[-_KEPT_VALUE_TAIL:]}"
