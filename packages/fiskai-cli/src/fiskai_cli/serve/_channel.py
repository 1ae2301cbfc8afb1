"""The channel seam of `fiskai serve`: how an endpoint that produces work hands it to the hosted agent.

A channel (prompts over NATS, queued jobs; the web channel plugs in the same way) owns its
intake, its worker slots and its wire protocol. For each piece of work it admits, it builds a `Work` and
awaits `WorkRunner.run(work)`, which runs one turn of the agent and returns a `WorkOutcome`. What a
channel can do is said by what it fills in: a channel that can ask a person supplies a `prompter`
(None: every gated tool is refused, and the model is told why); one that streams supplies a `sink`.

Session ids are always derived by the channel from its own space (a prefix and a hash, e.g. `t-...` for
prompts), never taken from a caller, so ids from one channel cannot open another's journals.

Lifecycle, driven by the host: `serve` until cancelled (raising means a fault: the worker drains and exits
non-zero), `drain()` on the first interrupt (no new work; running work goes on to its end or its next
resumable point), `stop()` on the second (running work is stopped now and answered as failed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from anyio.abc import TaskStatus

if TYPE_CHECKING:
    from fiskai_agent import RunControl
    from fiskai_core.prompter import Prompter

__all__ = ["CallLedger", "Channel", "EventKind", "Work", "WorkOutcome", "WorkRunner", "WorkSink"]

EventKind = Literal["text", "thinking", "tool_call", "tool_result", "warning", "status"]
"""What a run reports to a streaming channel; the block is the protocol's fields for that kind."""

WorkSink = Callable[[EventKind, dict[str, Any]], Awaitable[None]]
"""Receives a run's events in order; a channel that does not stream passes a no-op."""


async def _no_events(kind: EventKind, block: dict[str, Any]) -> None:
    del kind, block


class CallLedger:
    """The model's tool calls of a turn not yet put to the gate, so a question to a person can name its call.

    The gate asks about a command, not a call; the runner records each call the model makes (and a resumed
    turn's pending ones) in order, and the prompter takes the first of the asked tool's name: calls are
    dispatched one at a time in the model's order. `settle` waits until every event the run emitted so far
    has reached the channel, so a question never overtakes the text that led to it.
    """

    def __init__(self) -> None:
        self._open: list[tuple[str, str]] = []
        self.settle: Callable[[], Awaitable[None]] = _settled

    def seen(self, tool_use_id: str, name: str) -> None:
        self._open.append((tool_use_id, name))

    def take(self, name: str) -> str:
        """The id of the first open call of `name` (now taken), or "" when none is known."""
        for index, (tool_use_id, called) in enumerate(self._open):
            if called == name:
                del self._open[index]
                return tool_use_id
        return ""


async def _settled() -> None:
    return None


@dataclass(slots=True, kw_only=True)
class Work:
    """One turn for the agent, as a channel admitted it."""

    channel: str
    """Which channel (`a2a/prompts`), for logs."""
    session_id: str
    """The journal, derived by the channel."""
    prompt: str
    """The user turn; empty for a resume."""
    caller: str
    """Who the channel says asked (unverified unless the channel verifies it)."""
    resume: bool = False
    """Continue an existing journal (with `prompt` as its next turn when non-empty)."""
    force: bool = False
    """Continue across a configuration change."""
    prompter: Prompter | None = None
    """Who answers gated calls and questions; None: refused."""
    unasked: str = ""
    """Without a prompter: why nobody can be asked, in words the model reads with the refusal."""
    calls: CallLedger | None = None
    """Filled by the runner when the prompter needs to name the call a question is about."""
    sink: WorkSink = _no_events
    control: RunControl | None = None
    """Lets the channel stop the turn politely (a caller's cancel) or at once (a second interrupt)."""
    max_tokens: int | None = None
    """A caller's lower token budget for the conversation (never raises the configured one)."""
    max_iterations: int | None = None
    conversation: bool = True
    """The session takes follow-up turns and ends each suspended at its answer (prompts); False: one task
    whose journal ends `completed` (a queued job), so a redelivery can be answered from it."""
    takeover: bool = False
    """Claim the journal before resuming it: a worker still running it stops before its next tool call."""
    tags: dict[str, str] = field(default_factory=dict[str, str])
    argv: bool = False
    """Add each call's command line (`display`) to its `tool_call` block (the web page shows it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkOutcome:
    """How a turn ended, in the channels' shared terms."""

    reason: Literal["completed", "suspended", "failed", "budget_exhausted", "max_iterations", "crashed", "refused"]
    answer: str = ""
    error: str = ""
    code: str = ""
    """For `refused`: why the turn never ran (`unknown_conversation`, `config_drift`, `conversation_busy`,
    `taken_over`: another worker claimed the journal, ...); for `failed`: the model provider's failure
    (`provider_busy`, `provider_refused`, `context_exceeded`), or empty."""
    usage: dict[str, int] = field(default_factory=dict[str, int])
    """The whole conversation's usage, from the journal."""


class WorkRunner(Protocol):
    """Runs one turn of the hosted agent (the host implements it over the harness)."""

    async def run(self, work: Work) -> WorkOutcome:
        """Run `work` to its end; never raises for what the model or a tool did."""
        ...


class Channel(Protocol):
    """An endpoint that produces work (see the module docstring)."""

    name: str
    """As the banner's Endpoints line shows it (`a2a/prompts`)."""

    def banner(self) -> list[tuple[str, str]]:
        """Its banner section: a title line (key "") then `(label, value)` rows."""
        ...

    async def serve(self, runner: WorkRunner, *, task_status: TaskStatus[None]) -> None:
        """Take work until cancelled; `task_status.started()` once intake is open. Raising is a fault."""
        ...

    def drain(self) -> None:
        """Stop intake; work already admitted goes on."""
        ...

    def stop(self) -> None:
        """Stop running work now (the second interrupt)."""
        ...
