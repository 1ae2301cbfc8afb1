"""An imported MCP tool: a `fiskai_core.tools.Tool` like any other, so it takes the one call path.

What the gate sees: the tool's tags say whether it asks first (`ai:confirm`, from the entry's `confirm`
and the server's annotations) and whether a call cut off by a crash may be sent again (`ai:idempotent`,
only when the server says `idempotentHint: true`). Approvals and rules match on `gate_argv`: the name,
then one `--json.path=value` token per value of the arguments (an array repeats its path, so a rule's
`--paths=/tmp/**` must match every element), keys in the order the model wrote them. A key character
outside letters, digits, `_` and `-` is written `%XX`, so no key can pose as a path or a value, and no
rule can name it except through `...`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from fiskai_core.confirm import render_command_line
from fiskai_core.errors import MissingArgumentsError
from fiskai_core.tools import (
    TAG_CONFIRM,
    TAG_IDEMPOTENT,
    CallContext,
    CallPlan,
    DecodedValue,
    JsonNumber,
    ToolArguments,
    ToolResult,
    missing_required,
    missing_required_message,
)

__all__ = ["McpTool", "ToolCaller", "gate_argv", "needs_confirmation", "tool_tags"]

ToolCaller = Callable[[str, ToolArguments], Awaitable[ToolResult]]
"""Calls a tool by its name on the server; every outcome is a result (the connection's `call`)."""

_KEY_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def needs_confirmation(
    confirm: Literal["all", "destructive", "none"], *, read_only: bool | None, destructive: bool | None
) -> bool:
    """Whether an imported tool asks the operator first under the entry's `confirm`."""
    if confirm == "all":
        return True
    if confirm == "none":
        return False
    return read_only is not True or destructive is True


def _key(key: str) -> str:
    return "".join(ch if ch in _KEY_SAFE else "".join(f"%{b:02X}" for b in ch.encode()) for ch in key) or "%"


def _scalar(value: DecodedValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, JsonNumber):
        return value.text
    return json.dumps(value)


def _flatten(path: str, value: DecodedValue, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append(f"--{path}={{}}")
        for key, item in value.items():
            _flatten(f"{path}.{_key(key)}", item, out)
    elif isinstance(value, list):
        if not value:
            out.append(f"--{path}=[]")
        for item in value:
            _flatten(path, item, out)
    else:
        out.append(f"--{path}={_scalar(value)}")


def gate_argv(name: str, arguments: Mapping[str, DecodedValue]) -> tuple[str, ...]:
    """What approvals and rules match on for a call of `name` (see the module docs)."""
    out: list[str] = [name]
    for key, value in arguments.items():
        _flatten(_key(key), value, out)
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class McpTool:
    """A tool of an `mcp_clients` server, under its final name `<alias>_<tool>`."""

    name: str
    remote_name: str
    """The tool's own name on the server."""
    server: str
    """The `mcp_clients` entry's name."""
    alias: str = ""
    """The entry's effective alias, the prefix of `name`."""
    description: str
    input_schema: Mapping[str, JsonValue]
    tags: Sequence[str] = ()
    caller: ToolCaller
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None

    @property
    def confirmed(self) -> bool:
        """Asks the operator before each call (unless a rule or a session approval covers it)."""
        return TAG_CONFIRM in self.tags

    def plan(self, arguments: ToolArguments) -> CallPlan:
        """Check required parameters, so an operator is never asked about a broken call.

        The server checks the values against its own schema.
        """
        missing = missing_required(self.input_schema, arguments)
        if missing:
            message = missing_required_message(self.name, self.input_schema, missing)
            raise MissingArgumentsError(message, missing=tuple(missing))
        argv = gate_argv(self.name, arguments.values)
        display = render_command_line(argv)
        return CallPlan(arguments=arguments, display=display, gate_argv=argv)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        """Send the call to the server; its reply, a protocol error or a lost connection is a result."""
        return await self.caller(self.remote_name, plan.arguments)


def tool_tags(
    confirm: Literal["all", "destructive", "none"],
    *,
    read_only: bool | None,
    destructive: bool | None,
    idempotent: bool | None,
) -> tuple[str, ...]:
    """The tags an imported tool carries: what the gate and the crash rules read."""
    tags: list[str] = []
    if needs_confirmation(confirm, read_only=read_only, destructive=destructive):
        tags.append(TAG_CONFIRM)
    if idempotent is True:
        tags.append(TAG_IDEMPOTENT)
    return tuple(tags)
