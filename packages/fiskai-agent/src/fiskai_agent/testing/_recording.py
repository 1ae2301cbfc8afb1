"""An `Events` that records every callback, for asserting what a run reported and in which order."""

from __future__ import annotations

from dataclasses import dataclass, field

from fiskai_agent.events import Advisory, ResumeInfo, RunInfo, ToolResultTrace, ToolTrace
from fiskai_agent.llm import Response

__all__ = ["RecordingEvents"]

Event = tuple[str, object]


@dataclass
class RecordingEvents:
    """Records `(callback name, payload)` in order; typed views below."""

    __test__ = False

    events: list[Event] = field(default_factory=list[Event])

    def warn(self, advisory: Advisory) -> None:
        self.events.append(("warn", advisory))

    def starting(self, info: RunInfo) -> None:
        self.events.append(("starting", info))

    def resumed(self, info: ResumeInfo) -> None:
        self.events.append(("resumed", info))

    def llm_request(self, summary: str) -> None:
        self.events.append(("llm_request", summary))

    def message(self, response: Response, terminal: bool) -> None:
        self.events.append(("message", (response, terminal)))

    def tool_call(self, trace: ToolTrace) -> None:
        self.events.append(("tool_call", trace))

    def tool_result(self, trace: ToolResultTrace) -> None:
        self.events.append(("tool_result", trace))

    def panicked(self, error: BaseException, traceback: str) -> None:
        self.events.append(("panicked", error))

    def session_rotated(self, previous: str, current: str) -> None:
        self.events.append(("session_rotated", (previous, current)))

    @property
    def names(self) -> list[str]:
        """The callback names in order."""
        return [name for name, _ in self.events]

    @property
    def advisories(self) -> list[Advisory]:
        """Every advisory."""
        return [p for n, p in self.events if n == "warn" and isinstance(p, Advisory)]

    def advisory_kinds(self) -> list[str]:
        """The advisory kinds in order."""
        return [a.kind for a in self.advisories]

    @property
    def tool_calls(self) -> list[ToolTrace]:
        """Every tool call."""
        return [p for _, p in self.events if isinstance(p, ToolTrace)]

    @property
    def tool_results(self) -> list[ToolResultTrace]:
        """Every tool result."""
        return [p for _, p in self.events if isinstance(p, ToolResultTrace)]

    @property
    def info(self) -> RunInfo:
        """The `starting` payload."""
        return next(p for _, p in self.events if isinstance(p, RunInfo))
