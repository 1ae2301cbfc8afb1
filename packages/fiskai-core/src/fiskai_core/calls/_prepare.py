"""Step one of a call: decode once, refuse what is not an object, let the tool plan it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from fiskai_core.errors import ArgumentsError, MissingArgumentsError
from fiskai_core.tools import CallPlan, Tool, ToolArguments, ToolResult, parse_arguments, trigger_tag

__all__ = ["Refusal", "ToolCall", "argv_digest", "prepare_call"]

RefusalKind = Literal["invalid", "missing", "denied"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A call that stops before any gate: the model gets `result`, nothing runs."""

    result: ToolResult
    kind: RefusalKind
    """`missing`: required parameters are absent; `invalid`: anything else about the arguments; `denied`: a
    `pre_tool_use` hook refused it."""
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A call ready for the gate and for running: everything decided about it before anyone is asked."""

    tool: Tool
    plan: CallPlan
    gate_tag: str | None
    """The tag that puts it behind the confirm gate, or None when it runs ungated."""
    digest: str
    """SHA-256 of `gate_argv`: what journals and audit lines keep instead of the values."""

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.tool.name

    @property
    def argv(self) -> tuple[str, ...] | None:
        """The exact command line the call runs (binary first), or None for a tool that runs none."""
        return self.plan.argv

    @property
    def gate_argv(self) -> tuple[str, ...]:
        """What an approval and a rule are about: the argv, else the name and the canonical arguments."""
        return _gate_argv(self.tool, self.plan)

    @property
    def display(self) -> str:
        """The call as one terminal-safe line."""
        return self.plan.display

    @property
    def display_short(self) -> str:
        """The same with long values elided."""
        return self.plan.display_short or self.plan.display


def prepare_call(
    tool: Tool, arguments: ToolArguments | str | bytes | None, *, confirm_tags: Collection[str] = ()
) -> ToolCall | Refusal:
    """Prepare one call of `tool`.

    Args:
        tool: The tool the model named.
        arguments: The model's JSON text (decoded here, the one time), or arguments a transport already
            decoded with numbers kept (`fiskai_core.tools.arguments_from_value`). Empty text is `{}`.
        confirm_tags: `harness.confirm_tags`, tags that gate like `ai:confirm`.

    Returns:
        The prepared call, or the refusal the model gets instead.
    """
    try:
        decoded = arguments if isinstance(arguments, ToolArguments) else parse_arguments(arguments)
        if decoded.null:
            # fisk reads `null` as `{}`, but a model that sends it sent no object: running the command with
            # no arguments would be a guess.
            raise ArgumentsError(
                f"arguments for tool {json.dumps(tool.name)} must be a JSON object, got null; nothing was run"
            )
        plan = tool.plan(decoded)
    except MissingArgumentsError as err:
        return Refusal(result=ToolResult(output=str(err), is_error=True), kind="missing", missing=err.missing)
    except ArgumentsError as err:
        return Refusal(result=ToolResult(output=str(err), is_error=True), kind="invalid")
    digest = argv_digest(_gate_argv(tool, plan))
    return ToolCall(tool=tool, plan=plan, gate_tag=trigger_tag(tool.tags, confirm_tags), digest=digest)


def _gate_argv(tool: Tool, plan: CallPlan) -> tuple[str, ...]:
    if plan.argv is not None:
        return plan.argv
    if plan.gate_argv is not None:
        return plan.gate_argv
    return (tool.name, plan.arguments.json(sort_keys=True))


def argv_digest(argv: Sequence[str]) -> str:
    """A SHA-256 hex digest of an argv, for journals and audit lines that must not hold the values."""
    encoded = json.dumps(list(argv), ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return hashlib.sha256(encoded).hexdigest()
