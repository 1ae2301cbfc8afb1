"""What a caller hands `run` and what it gets back.

The caller (the CLI, the composition root) resolves configuration, loads and selects the tools, opens
the stores and picks the prompter and the events sink; the run receives them ready to use and owns none
of the resources it did not open itself (it closes only the provider it created).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import anyio

from fiskai_agent.events import Events, NullEvents
from fiskai_agent.llm import CapabilityOverrides, HttpObserver, Provider
from fiskai_core.approvals import Approvals
from fiskai_core.config import LLMSettings
from fiskai_core.knowledge import KnowledgeSearcher
from fiskai_core.prompter import DenyPrompter, Prompter
from fiskai_core.tools import Tool
from fiskai_memory import Store as MemoryStore
from fiskai_runstate import Store as SessionStore

__all__ = [
    "KnowledgeOptions",
    "MemoryOptions",
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
class MemoryOptions:
    """`harness.memory` when enabled: the opened store and whether to inject the start-of-run index."""

    store: MemoryStore
    no_index: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class KnowledgeOptions:
    """`harness.knowledge` when enabled: the read-only searcher, or `None` when no index is built."""

    searcher: KnowledgeSearcher | None
    max_injected_tokens: int = 6000
    index_path: str = ""
    """Where the index was looked for; named in the advisory when `searcher` is None."""


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
    """Everything one run needs.

    Tools arrive ready to run: `app_tools` are the wrapped application's selected commands (after
    `ai:deny`, include and exclude), `remote_tools` the imported peer tools, `custom_tools` in-process
    tools. The run adds the built-ins (ask_human, memory, knowledge_search) itself.
    """

    prompt: str
    """The operator's request (empty means `assist the user`); ignored on resume, which restores it."""
    llm: LLMSettings
    """`llm` from agent.yaml: model, provider, budgets, thinking, caching, tool search."""
    system_prompt: str = ""
    app_tools: Sequence[Tool] = ()
    remote_tools: Sequence[Tool] = ()
    custom_tools: Sequence[Tool] = ()
    has_application: bool = True
    """Whether agent.yaml names an application (shapes the no-tools error)."""
    config_file: str = "agent.yaml"
    """Named in setup errors."""
    confirm_tags: Sequence[str] = ()
    """`harness.confirm_tags`: tags that gate like `ai:confirm`."""
    human_in_the_loop: bool = False
    memory: MemoryOptions | None = None
    knowledge: KnowledgeOptions | None = None
    prompter: Prompter = field(default_factory=DenyPrompter)
    """Asks the operator (gate, ask_human, crash re-run). The default denies everything."""
    approvals: Approvals | None = None
    """The agent's persisted approval rules, consulted by the confirm gate before it asks."""
    events: Events = field(default_factory=NullEvents)
    session: SessionOptions | None = None
    control: RunControl | None = None
    provider: Provider | None = None
    """An injected provider, used as is (tests, embedding); else one is built from `llm.provider`."""
    api_key: str | None = None
    base_url: str | None = None
    """`llm.base_url`, `--base-url` or `ANTHROPIC_BASE_URL`, resolved by the caller; validated here."""
    capabilities: CapabilityOverrides | None = None
    """Forced capability settings; `None` keeps the automatic choice for the model and server."""
    http_observer: HttpObserver | None = None
    """Sees every HTTP attempt (trace file, HTTP debug dump)."""
    interactive: bool = False
    """A chat run (1 h prompt-cache TTL; journaled as interactive)."""
    verbose: bool = False
    """Emit `llm_request` summaries."""


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
