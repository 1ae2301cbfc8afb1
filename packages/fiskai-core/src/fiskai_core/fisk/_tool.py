"""A runnable fisk command as a `Tool`: schema check, argv, safe execution, result.

The one path from a model's JSON arguments to a running process. In order: arguments that violate
the command's fisk schema come back as an error result naming every problem (nothing runs); then
fisk's ArgsFromJSON rules build the argv (the trust boundary: values are single `--name=value` tokens
or positionals after `--`, so no value can become an option); then the binary runs from that argv with
no shell, no stdin and the scrubbed environment. Every outcome is a `ToolResult`; only cancellation
propagates.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from fiskai_core.errors import ArgumentsError, CommandError
from fiskai_core.tools import ToolResult

from ._env import tool_env
from ._exec import run_argv
from ._load import Application
from ._validate import missing_required, validate_arguments
from ._walk import CommandSpec

__all__ = ["CommandTool", "command_tools"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandTool:
    """One fisk leaf command bound to the binary that runs it."""

    spec: CommandSpec
    app_path: str
    """The binary, as resolved when the application was introspected."""
    env: Mapping[str, str]
    """The scrubbed environment every call runs with (see `tool_env`)."""
    work_dir: str | None = None
    timeout: float | None = None
    """Seconds before the process group is killed; `None` leaves it to the caller's cancellation."""

    @property
    def name(self) -> str:
        """The tool name: the command path joined with `_`."""
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

    def schema_problems(self, arguments: str | bytes | None) -> list[str]:
        """What in `arguments` violates the command's fisk schema (empty when it fits).

        Only a schema fisk itself computed is enforced: a schema derived from a v0.8 model knows no
        value kinds, and rejecting `3` for a flag it can only call a string would mislead the model.
        """
        if self.spec.schema_source != "fisk":
            return []
        return validate_arguments(self.spec.input_schema, arguments)

    def command_argv(self, arguments: str | bytes | None) -> list[str]:
        """The exact argv `execute` runs for `arguments`, binary first (what an operator approves).

        Raises:
            ArgumentsError: The arguments cannot become an argv.
        """
        return [self.app_path, *self.spec.argv(arguments)]

    def missing_required(self, arguments: str | bytes | None) -> list[str]:
        """The required parameters `arguments` leaves out, in schema order."""
        return missing_required(self.spec.input_schema, arguments)

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """Check, render and run one call; every outcome is a result."""
        problems = self.schema_problems(arguments)
        if problems:
            listed = "; ".join(problems)
            return ToolResult(
                text=f"arguments for tool {self.name!r} do not match its schema: {listed}. "
                "Nothing was run; correct the arguments and call again.",
                is_error=True,
            )
        try:
            argv = self.spec.argv(arguments)
        except ArgumentsError as err:
            return ToolResult(text=str(err), is_error=True)
        try:
            outcome = await run_argv([self.app_path, *argv], env=self.env, cwd=self.work_dir, timeout=self.timeout)
        except CommandError as err:
            return ToolResult(text=str(err), is_error=True)
        body: dict[str, object] = {"command": " ".join(argv), "exit_code": outcome.exit_code, "output": outcome.output}
        if outcome.truncated:
            body["truncated"] = True
        return ToolResult(text=json.dumps(body, ensure_ascii=False, separators=(",", ":")), exit_code=outcome.exit_code)


def command_tools(
    application: Application,
    *,
    strip_env: Iterable[str] = (),
    work_dir: str | None = None,
    tool_timeout: float | None = None,
) -> list[CommandTool]:
    """Bind the application's selected commands to its binary as runnable tools.

    Args:
        application: From `load_application`.
        strip_env: Extra credential variables to remove from every call's environment.
        work_dir: The folder commands run in; the current one when None.
        tool_timeout: Seconds a call may run before its process group is killed.
    """
    env = tool_env(strip=tuple(strip_env), work_dir=work_dir)
    return [
        CommandTool(spec=spec, app_path=application.path, env=env, work_dir=work_dir, timeout=tool_timeout)
        for spec in application.selected
    ]
