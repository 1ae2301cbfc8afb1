"""A source's command bound to its binary as a `Tool`: plan (check, render) and invoke (run).

A plan is made once per call, from arguments decoded once (`fiskai_core.calls`): required parameters
first, then values against the advertised schema (for a schema that is not strict, only keys the model
was not shown), then the source renders the argv (its trust boundary: no value can become an option),
and an argv holding a NUL byte is refused (no process can receive it). What is approved is that argv,
and invoking the plan runs exactly it, with no shell, no stdin and the scrubbed environment. Every
outcome is a `ToolResult`; only cancellation propagates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from fiskai_core._gojson import go_quote
from fiskai_core.errors import ArgumentsError, CommandError
from fiskai_core.tools import CallContext, CallPlan, ToolArguments, ToolResult, check_arguments

from ._display import trace_line, trace_line_short
from ._env import tool_env
from ._run import run_argv
from ._source import SourceCommand, ToolSource

__all__ = ["EFFECT_ID_ENV", "MAX_COMMAND_CHARS", "CommandTool", "capped_command_line", "command_tools"]

MAX_COMMAND_CHARS = 4096
"""Cap of a result's `command` field, so five 120 KB values cannot make a 600 KB result."""
EFFECT_ID_ENV = "FISKAI_EFFECT_ID"
"""The variable a command finds its call's stable effect id in (an idempotency key)."""
_KEPT_VALUE_HEAD = 96
_KEPT_VALUE_TAIL = 32


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandTool:
    """One command of a tool source bound to the binary that runs it. Satisfies `Tool`."""

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
    def summary(self) -> str:
        """The short description for people (`info`, `tools list`)."""
        return self.spec.description

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        """The advertised schema; shared, never mutate it."""
        return self.spec.input_schema

    def plan(self, arguments: ToolArguments) -> CallPlan:
        """Check the call and render its exact argv (binary first).

        Raises:
            MissingArgumentsError: required parameters are absent.
            ArgumentsError: the values do not fit the schema, cannot become an argv, or hold a NUL byte.
        """
        check_arguments(self.name, self.spec.input_schema, arguments, strict=self.spec.strict_schema)
        tail = self.spec.build_argv(arguments)
        if any("\x00" in token for token in tail):
            # fisk's ArgsFromJSON copies a NUL through, but no process can receive one in its argv.
            raise ArgumentsError(
                f"building command line for {go_quote(self.spec.command)}: a value contains a NUL byte "
                "(\\u0000), which no command line can carry; remove it and call again"
            )
        return CallPlan(
            arguments=arguments,
            argv=(self.app_path, *tail),
            display=trace_line(self.spec.path, tail),
            display_short=trace_line_short(self.spec.path, tail),
        )

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        """Run the planned argv; every outcome is a result."""
        argv = plan.argv
        if argv is None:  # a plan this tool did not make
            return ToolResult(output=f"tool {go_quote(self.name)} was handed a call it did not plan", is_error=True)
        env = {**self.env, EFFECT_ID_ENV: context.effect_id} if context.effect_id else self.env
        try:
            outcome = await run_argv(list(argv), env=env, cwd=self.work_dir, timeout=self.timeout)
        except CommandError as err:
            return ToolResult(output=str(err), is_error=True)
        return ToolResult(
            output=outcome.output,
            command=capped_command_line(argv[1:]),
            exit_code=outcome.exit_code,
            truncated=outcome.truncated,
        )


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
