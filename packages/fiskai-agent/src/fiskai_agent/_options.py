"""What a caller hands `run` and what it gets back.

The caller (the CLI's harness, the composition root) resolves configuration, builds the tool set and the
gate, opens the stores and picks the events sink; the run receives them ready to use and owns none of
the resources it did not open itself (it closes only the provider it created).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from fiskai_agent._tool_updates import ToolUpdates
from fiskai_agent.events import Advisory, Events, NullEvents
from fiskai_agent.llm import Provider, ProviderSettings
from fiskai_core.config import LLMSettings
from fiskai_core.confirm import ConfirmGate
from fiskai_core.hooks import Hooks
from fiskai_core.prompter import DenyPrompter
from fiskai_core.tools import ToolSet
from fiskai_runstate import Store as SessionStore

if TYPE_CHECKING:
    from fiskai_core.pii import PiiMode

__all__ = [
    "FollowUp",
    "NextPrompt",
    "RunControl",
    "RunOptions",
    "RunResult",
    "RunStats",
    "SessionOptions",
    "StopReason",
]

StopReason = Literal["completed", "suspended", "error", "budget", "max_iterations"]
"""Why a run ended (the journal's terminal reasons)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionOptions:
    """Checkpointing: journal a new session, or resume one.

    A fresh checkpoint uses `name` or a generated id; `resume_id` resumes (the prompt comes from the
    session); `force` accepts configuration drift on resume (never a provider change).
    """

    store: SessionStore
    checkpoint: bool = False
    name: str | None = None
    resume_id: str | None = None
    force: bool = False
    follow_up: str = ""
    """A conversation's next turn (a served prompt with a conversation token): on resume, once the last
    turn's unfinished calls are settled, this text is the next user turn."""
    agent: str = ""
    """The agent's identity, journaled in a new session's meta record (`session search --identity`)."""
    caller: str = ""
    """Who asked (a served prompt's claimed sender), journaled likewise (`session search --caller`)."""
    prompt_hooks: tuple[dict[str, Any], ...] = ()
    """Set by `run`: what the `user_prompt_submit` hooks decided about the prompt (or `follow_up`) this run
    starts with, journaled with it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FollowUp:
    """The operator's next turn in a chat (reference 6.6)."""

    text: str
    """Sent as the next user turn; empty asks again."""
    reset: bool = False
    """Forget the conversation first (`/clear`, `/restart`); honoured only by runs without a journal,
    whose messages are not checkpointed (a journaled chat keeps its context)."""


NextPrompt = Callable[[str], Awaitable["FollowUp | None"]]
"""Asked at each turn boundary of a chat with how the turn ended (`""`, or the error of a turn that
failed or hit the iteration cap); returns the next turn, or None to end the run."""


class RunControl:
    """Lets the caller steer a running run from outside its task (a signal handler, another task).

    `request_suspend()` ends a checkpointed run cleanly at the next loop boundary (never mid-tool) with
    reason `suspended`; on a run without a journal it is ignored. `abort()` cancels the run at once: the
    tool in flight is killed, a checkpointed run journals a terminal `error`, and `run` returns with
    reason `error`. Both are safe to call from a signal handler running in the event loop thread.
    """

    def __init__(self) -> None:
        self._suspend = False
        self._aborted = False
        self._scope: anyio.CancelScope | None = None

    @property
    def suspend_requested(self) -> bool:
        """Whether `request_suspend` was called."""
        return self._suspend

    @property
    def aborted(self) -> bool:
        """Whether `abort` was called."""
        return self._aborted

    def request_suspend(self) -> None:
        """Stop at the next loop boundary (checkpointed runs only)."""
        self._suspend = True

    def abort(self) -> None:
        """Cancel the run now."""
        self._aborted = True
        if self._scope is not None:
            self._scope.cancel()

    def _attach(self, scope: anyio.CancelScope) -> None:
        self._scope = scope
        if self._aborted:
            scope.cancel()


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """Everything one run needs, built by the caller (the CLI's harness, a test, an embedder).

    The tools arrive as a set, ready to run (the application's commands, peers' tools, the built-ins the
    configuration enables), and the gate arrives built (who is asked, which rules apply); the run decides
    only what depends on the model server: which tools to defer, and how.
    """

    prompt: str
    """The operator's request (empty means `assist the user`); ignored on resume, which restores it."""
    identity: str = ""
    """The agent's identity: an interactive run's turn spans are `invoke_agent <identity>` (reference 6.2)."""
    llm: LLMSettings
    """`llm` from agent.yaml: model, provider, budgets, thinking, caching, tool search."""
    tools: ToolSet
    gate: ConfirmGate = field(default_factory=lambda: ConfirmGate(DenyPrompter()))
    """Approves gated calls, and is asked whether to re-run a call a crash interrupted."""
    provider: Provider | ProviderSettings | None = None
    """A provider used as is (tests, embedding), or the settings to build one from `llm.provider` (the
    run then closes it); None builds one from `llm` alone."""
    system_prompt: str = ""
    start_context: Sequence[str] = ()
    """System blocks describing the world as the run starts (the memory index); not fingerprinted."""
    config_file: str = "agent.yaml"
    """Named in setup errors."""
    notices: Sequence[Advisory] = ()
    """What the caller found while building the run (no knowledge index, say), shown as it starts."""
    events: Events = field(default_factory=NullEvents)
    session: SessionOptions | None = None
    control: RunControl | None = None
    interactive: bool = False
    """A chat run (1 h prompt-cache TTL; journaled as interactive)."""
    next_prompt: NextPrompt | None = None
    """A chat: after each answer the run asks for the next turn instead of ending (see `NextPrompt`)."""
    tool_timeout: float | None = None
    """Seconds one tool call may run (`harness.tool_timeout`; the command's process group is killed);
    None: no limit. Tools that wait on the operator (ask_human) are never limited."""
    max_tool_calls_per_turn: int = 64
    """Calls run from one model turn; the rest are answered, unrun, with a note (0: no limit)."""
    verbose: bool = False
    """Emit `llm_request` summaries."""
    hooks: Hooks = field(default_factory=Hooks)
    """Policy around tool calls (`fiskai_core.hooks`); every decision is journaled with the call's result."""
    pii_mode: PiiMode = "redact"
    """`harness.pii.mode`: personal data and secrets in each prompt and tool result are redacted (the default,
    as in the original even without the setting), refused / withheld (`reject`), or let through (`off`)."""
    tool_updates: ToolUpdates | None = None
    """A part of `tools` that may change during the run (`mcp_clients` with `watch_tools`), swapped in whole
    before the next model call."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPrefix:
    """A resumed session's counters as journaled before this process took it up."""

    llm_calls: int = 0
    tool_calls: int = 0
    remote_tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0


@dataclass(slots=True, kw_only=True)
class RunStats:
    """Counters of one run (seeded from the journal on resume)."""

    model: str = ""
    session_id: str | None = None
    llm_calls: int = 0
    tool_calls: int = 0
    """Every call the model made, rejected, unknown and denied ones included."""
    remote_tool_calls: int = 0
    by_kind: dict[str, int] = field(default_factory=dict[str, int])
    """Calls per `ToolKind` in this process, plus `unknown` and `not_loaded` (a deferred tool never found);
    not restored on resume."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0
    elapsed: float = 0.0
    """Seconds this process spent in the run."""
    suspended: bool = False
    first_session_id: str | None = None
    """The session the run started on (`session_id` is the one it ended on, after a `/clear` rotation)."""
    prefix: SessionPrefix | None = None
    """A resumed run: the session's totals before this process (the counters above include them)."""
    crashed: bool = False
    """A resumed run whose session had no terminal record: the process before it died."""
    thinking: bool = False
    prompt_cache: bool = False
    tool_search: bool = False
    """Feature switches the run used (telemetry's `fisk.llm.*` on the root span)."""

    @property
    def total_tokens(self) -> int:
        """All four tiers."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_create_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """How a run ended. `run` always returns one unless setup fails (then it raises)."""

    reason: StopReason | None
    """Why it stopped; `None` only after an internal error (see `internal_error`)."""
    answer: str
    """The final answer's text (empty unless `completed`)."""
    error: str = ""
    """What went wrong, for `error`, `budget` and `max_iterations` (one line)."""
    stats: RunStats
    session_id: str | None = None
    internal_error: bool = False
    """A bug ended the run (reported through `Events.panicked`)."""

    @property
    def ok(self) -> bool:
        """Completed, or suspended on request: the outcomes a CLI exits 0 for."""
        return self.reason in ("completed", "suspended")
