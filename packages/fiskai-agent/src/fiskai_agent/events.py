"""The Events seam: how a run reports what it does. The loop never draws anything.

A UI (the line UI, the full-screen UI, a log sink, a test recorder) implements `Events`. Every callback
is called from the run's own task, one at a time, in the order things happen, and must not block for
long or raise (an exception from a callback ends the run as an internal error). Subclass `NullEvents`
to implement only the callbacks you need.

Order within one iteration: `llm_request` (verbose runs only), `message`, then per tool call either
`tool_call` and `tool_result`, or an `Advisory` (unknown tool, missing parameters, denied by the gate)
and no call/result pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from fiskai_agent.llm import Message, Response
from fiskai_core.confirm import GateDecision

__all__ = [
    "Advisory",
    "AdvisoryKind",
    "Events",
    "NullEvents",
    "Presentation",
    "ResumeInfo",
    "RunInfo",
    "ToolKind",
    "ToolResultTrace",
    "ToolTrace",
]

AdvisoryKind = Literal[
    "hitl_no_terminal",
    "confirm_no_terminal",
    "confirm_tag_unmatched",
    "confirm_denied",
    "unknown_tool",
    "missing_required",
    "journal_terminal",
    "resume_paused_turn",
    "resume_forced",
    "intent_rerun",
    "intent_declined",
    "memory_index",
    "tool_search_unsupported",
    "tool_search_disabled",
    "capabilities_reduced",
    "capabilities_fallback",
    "tool_finder",
    "tool_not_loaded",
    "knowledge_index_absent",
    "tool_calls_capped",
    "hook_denied",
    "config_renamed_key",
    "mcp_tools_changed",
    "session_rotate",
    "reasoning_effort_dropped",
    "pii_redacted",
    "pii_withheld",
]
"""Stable tokens for structured sinks; the `message` of an `Advisory` is the line a UI prints."""

Presentation = Literal["command", "remote", "self_rendered", "traced"]
"""How a tool call is shown: a command line; a remote call naming its agent; only when verbose (the
ask_human tools draw their own prompt); or a one-line trace whose result is not shown (memory, knowledge)."""

ToolKind = Literal["application", "builtin", "remote", "custom", "mcp", "unknown"]
"""Accounting bucket of a tool call."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Advisory:
    """Something the operator should know that does not stop the run."""

    kind: AdvisoryKind
    message: str
    """One line, ready to print after `warning: `."""
    name: str = ""
    """The tool, tag or session the advisory is about, when there is one."""
    count: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    """What the run starts with (emitted once, after setup, before the first model call)."""

    model: str
    provider: str
    app_tools: int
    """Tools from the wrapped application."""
    total_tools: int
    """Every tool the model can call (built-ins, remote and custom included; the harness's `find_tools` not)."""
    deferred_tools: int
    """Tools the model finds through tool search instead of receiving up front."""
    thinking: bool
    tool_search: bool
    prompt_cache: bool
    capabilities_note: str
    """Why a capability is off (empty when all are on)."""
    tool_finder: bool = False
    """Deferred tools are reached through the client-side `find_tools` tool (the server has no tool search)."""
    capabilities: str = ""
    """Why the capabilities are what they are (`prompt cache set in llm.capabilities; auto: <model> is a
    Claude model`)."""
    confirm_tools: int
    """Tools behind the confirm gate."""
    confirm_tags: tuple[str, ...]
    session_id: str | None
    """The checkpointed session, if any."""
    resumed: bool
    new_session: bool
    """A fresh checkpoint was created (the UI prints `checkpointing session "<id>"`)."""
    no_application: bool
    """The agent wraps no application: built-in, remote and MCP server tools only."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeInfo:
    """The restored conversation of a resumed session (emitted after `starting`)."""

    run_id: str
    messages: tuple[Message, ...]
    next_iteration: int
    pending_calls: int
    """Tool calls of the last turn still to run before the next model call."""
    forced_changes: tuple[str, ...]
    """Configuration changes `force` accepted, one line each (`model: a -> b`)."""
    interactive: bool = False
    """A chat session: the UI shows the restored conversation before the input opens."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolTrace:
    """A tool call about to run (after the required-parameter check and the gate)."""

    tool_use_id: str
    name: str
    display: str
    """The full sanitized line: the exact command line for a command tool, a one-line trace for others."""
    display_short: str
    """The same with long values elided (for a scrolling transcript)."""
    presentation: Presentation
    kind: ToolKind
    agent: str = ""
    """The peer agent of a remote tool."""
    gate: GateDecision | None = None
    """The confirm gate's decision that let the call run (`None` when the tool is not gated): its
    `channel` and `rule` say whether a persisted rule or an earlier "for the session" allowed it, and which."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultTrace:
    """A tool call that finished."""

    tool_use_id: str
    name: str
    presentation: Presentation
    kind: ToolKind
    output: str
    """The tool_result content the model receives (unsanitized: sanitize before printing)."""
    is_error: bool
    exit_code: int | None = None


class Events(Protocol):
    """What a run reports. See the module docstring for the calling contract."""

    def warn(self, advisory: Advisory) -> None:
        """An advisory (see `AdvisoryKind`)."""
        ...

    def starting(self, info: RunInfo) -> None:
        """Setup finished; the loop starts."""
        ...

    def resumed(self, info: ResumeInfo) -> None:
        """A session was restored (after `starting`)."""
        ...

    def llm_request(self, summary: str) -> None:
        """A model call is about to be made (verbose runs only): `"<preview>" (msgs=<n>, <size>)`."""
        ...

    def message(self, response: Response, terminal: bool) -> None:
        """The model answered. `terminal` marks the final answer (or a truncated reply that ends the run)."""
        ...

    def tool_call(self, trace: ToolTrace) -> None:
        """A tool is about to run."""
        ...

    def tool_result(self, trace: ToolResultTrace) -> None:
        """A tool finished."""
        ...

    def panicked(self, error: BaseException, traceback: str) -> None:
        """An internal error ended the run (a bug, not a model or tool failure)."""
        ...

    def session_rotated(self, previous: str, current: str) -> None:
        """A checkpointed chat's `/clear` moved to session `current`; `previous` ended suspended, resumable."""
        ...


class NullEvents:
    """An `Events` that ignores everything; subclass it to handle only some callbacks."""

    def warn(self, advisory: Advisory) -> None:
        """Ignore."""

    def starting(self, info: RunInfo) -> None:
        """Ignore."""

    def resumed(self, info: ResumeInfo) -> None:
        """Ignore."""

    def llm_request(self, summary: str) -> None:
        """Ignore."""

    def message(self, response: Response, terminal: bool) -> None:
        """Ignore."""

    def tool_call(self, trace: ToolTrace) -> None:
        """Ignore."""

    def tool_result(self, trace: ToolResultTrace) -> None:
        """Ignore."""

    def panicked(self, error: BaseException, traceback: str) -> None:
        """Ignore."""

    def session_rotated(self, previous: str, current: str) -> None:
        """Ignore."""
