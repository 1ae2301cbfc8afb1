"""The eight hook points (reference 7.1) as typed events and decisions, for embedders and hook commands alike.

A hook is an async callable from its point's event to a decision. Points and what they can do:

| point                | event          | decisions                          |
| -------------------- | -------------- | ---------------------------------- |
| `run_start`          | `RunStart`     | `Allow`, `Abort`                   |
| `user_prompt_submit` | `PromptSubmit` | `Allow`, `Deny`, `RewritePrompt`   |
| `pre_model_call`     | `ModelCall`    | `Allow`, `Abort`                   |
| `post_model_call`    | `ModelReply`   | `Allow`, `Abort` (not durable)     |
| `pre_tool_use`       | `ToolUse`      | `Allow`, `Deny`, `RewriteTool`     |
| `post_tool_use`      | `ToolOutput`   | `Allow`, `ReplaceOutput`           |
| `turn_end`           | `TurnEnd`      | `Allow`, `Abort`                   |
| `run_end`            | `RunEnd`       | nothing (the answer is ignored)    |

Hooks of one point run in order; the first `Deny` or `Abort` wins, and a rewrite is what the next hook
sees. `pre_tool_use` fires before argument validation and the confirm gate; the gate still fires when
the original or the rewritten tool is gated, so a hook can add a gate but never strip one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "Abort",
    "Allow",
    "ControlHook",
    "Deny",
    "HookPoint",
    "Hooks",
    "ModelCall",
    "ModelReply",
    "PromptSubmit",
    "ReplaceOutput",
    "RewritePrompt",
    "RewriteTool",
    "RunEnd",
    "RunStart",
    "ToolOutput",
    "ToolUse",
    "TurnEnd",
    "hook_name",
]

HookPoint = Literal[
    "run_start",
    "user_prompt_submit",
    "pre_model_call",
    "post_model_call",
    "pre_tool_use",
    "post_tool_use",
    "turn_end",
    "run_end",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStart:
    identity: str
    session_id: str = ""
    resumed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSubmit:
    prompt: str
    session_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCall:
    iteration: int
    messages: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelReply:
    iteration: int
    stop_reason: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUse:
    tool: str
    arguments: Mapping[str, Any]
    tool_use_id: str = ""
    session_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput:
    tool: str
    arguments: Mapping[str, Any]
    output: str
    is_error: bool = False
    exit_code: int | None = None
    tool_use_id: str = ""
    session_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnd:
    turn: int
    answer: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunEnd:
    reason: str
    error: str = ""


@dataclass(frozen=True, slots=True)
class Allow:
    """Go on unchanged."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse (the tool call or the prompt); `reason` is what the model (or the operator) is told."""

    reason: str


@dataclass(frozen=True, slots=True)
class Abort:
    """End the run with an error naming `reason`."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteTool:
    """Call `tool` (None: the same) with `arguments` (None: the same) instead."""

    tool: str | None = None
    arguments: Mapping[str, Any] | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ReplaceOutput:
    """What the model, the journal and telemetry see as the call's output."""

    output: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class RewritePrompt:
    prompt: str
    reason: str = ""


RunStartHook: TypeAlias = Callable[[RunStart], Awaitable[Allow | Abort]]
PromptHook: TypeAlias = Callable[[PromptSubmit], Awaitable[Allow | Deny | RewritePrompt]]
ModelCallHook: TypeAlias = Callable[[ModelCall], Awaitable[Allow | Abort]]
ModelReplyHook: TypeAlias = Callable[[ModelReply], Awaitable[Allow | Abort]]
PreToolHook: TypeAlias = Callable[[ToolUse], Awaitable[Allow | Deny | RewriteTool]]
PostToolHook: TypeAlias = Callable[[ToolOutput], Awaitable[Allow | ReplaceOutput]]
TurnEndHook: TypeAlias = Callable[[TurnEnd], Awaitable[Allow | Abort]]
RunEndHook: TypeAlias = Callable[[RunEnd], Awaitable[object]]
ControlHook: TypeAlias = Callable[[Any], Awaitable[Allow | Abort]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Hooks:
    """The hooks installed for a run, per point, in the order they run."""

    run_start: tuple[RunStartHook, ...] = ()
    user_prompt_submit: tuple[PromptHook, ...] = ()
    pre_model_call: tuple[ModelCallHook, ...] = ()
    post_model_call: tuple[ModelReplyHook, ...] = ()
    pre_tool_use: tuple[PreToolHook, ...] = ()
    post_tool_use: tuple[PostToolHook, ...] = ()
    turn_end: tuple[TurnEndHook, ...] = ()
    run_end: tuple[RunEndHook, ...] = ()


def hook_name(hook: object) -> str:
    """How a journal names a hook: its `name` attribute (a command's), else its function name."""
    name = getattr(hook, "name", None)
    if isinstance(name, str) and name:
        return name
    return str(getattr(hook, "__qualname__", type(hook).__name__))
