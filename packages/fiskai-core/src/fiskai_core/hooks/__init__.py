"""Hooks: policy in front of (and after) tool calls, prompts and model calls.

`Hooks` holds the eight points of reference 7.1 as typed async callables, for embedders; `CommandHook`
is one `harness.hooks` command. The chain functions run one point's hooks in order and collect every
decision in `Decisions`, which the run journals.
"""

from ._api import (
    Abort,
    Allow,
    ControlHook,
    Deny,
    HookPoint,
    Hooks,
    ModelCall,
    ModelReply,
    PromptSubmit,
    ReplaceOutput,
    RewritePrompt,
    RewriteTool,
    RunEnd,
    RunStart,
    ToolOutput,
    ToolUse,
    TurnEnd,
    hook_name,
)
from ._chain import Decisions, control, decision_line, post_tool_use, pre_tool_use, user_prompt_submit
from ._command import CommandHook

__all__ = [
    "Abort",
    "Allow",
    "CommandHook",
    "ControlHook",
    "Decisions",
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
    "control",
    "decision_line",
    "hook_name",
    "post_tool_use",
    "pre_tool_use",
    "user_prompt_submit",
]
