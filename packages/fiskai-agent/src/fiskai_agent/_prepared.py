"""`Setup`: everything one run's loop needs, built once by `fiskai_agent._setup.prepare`.

Its own module so that the steps that fill it (the tool table and deferral in `_setup`, the journal in
`_resume`) and the loop that reads it (`_runner`) all depend on it, and not on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fiskai_agent._budget import Budget
from fiskai_agent._journal import RunJournal
from fiskai_agent._options import RunOptions, RunStats
from fiskai_agent._tool_finder import FinderMode
from fiskai_agent._tools import Entry
from fiskai_agent.llm import Capabilities, Message, Provider, ToolDef
from fiskai_core.confirm import ConfirmGate
from fiskai_runstate import Fingerprint, PendingBatch
from fiskai_runstate.records import ToolIntentRecord

__all__ = ["Setup"]


@dataclass(slots=True, kw_only=True)
class Setup:
    """Everything the loop needs, built once."""

    options: RunOptions
    entries: dict[str, Entry]
    tool_defs: tuple[ToolDef, ...]
    tool_search: bool
    gate: ConfirmGate
    provider: Provider
    owns_provider: bool
    capabilities: Capabilities
    budget: Budget
    thinking: bool
    system: list[str]
    journal: RunJournal
    messages: list[Message]
    stats: RunStats
    delivered: dict[str, None] = field(default_factory=dict[str, None])
    """Knowledge citations the conversation has received, in order (a search skips them)."""
    start_iteration: int = 0
    pending: PendingBatch | None = None
    intents: dict[str, ToolIntentRecord] = field(default_factory=dict[str, ToolIntentRecord])
    """Intents of the pending batch with no result: calls that may have had their effect before a crash."""
    session_id: str | None = None
    fingerprint: Fingerprint | None = None
    """What the journal's meta record holds (a chat's `/clear` starts its next session with it)."""
    resumed: bool = False
    """The run continues a stored session."""
    last_stop_reason: str = ""
    """The stop reason of the last journaled model turn (resume only)."""
    finder: FinderMode | None = None
    """The client-side tool finder, when deferred tools are reached through `find_tools`."""
    deferrable: list[Entry] = field(default_factory=list[Entry])
    builtins: list[Entry] = field(default_factory=list[Entry])
    fell_back: bool = False
    """A server refused a capability and the run dropped them (at most once per run)."""

    def request_tools(self) -> tuple[ToolDef, ...]:
        """The tool list of the next request."""
        return self.finder.tools() if self.finder is not None else self.tool_defs
