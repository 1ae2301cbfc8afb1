"""The full screen's status bar: what it says, and the spinner that shows the run is working."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from fiskai_core.sanitize import sanitize_for_terminal

__all__ = ["SPINNER", "Status", "status_line"]

SPINNER = "|/-\\"
"""The frames, one every 100 ms while the run works (not while it waits for the operator or has ended)."""


@dataclass(slots=True)
class Status:
    """What the status bar shows."""

    model: str = ""
    session: str = ""
    iteration: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    state: str = "running"
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None

    @property
    def working(self) -> bool:
        """The run is busy (the spinner turns)."""
        return self.ended is None and self.state == "running"


def status_line(s: Status, *, title: str, keys: str, notice: str, width: int) -> str:
    """One row `width` wide: the facts on the left (cut first on a narrow terminal), the key hints right."""
    elapsed = int((s.ended or time.monotonic()) - s.started)
    tokens = f"tokens={s.input_tokens}/{s.output_tokens}"
    if s.cache_read:
        tokens += f" cached={s.cache_read}"
    if s.cache_write:
        tokens += f" cache_write={s.cache_write}"
    # The model, session id and state come from a configuration or a journal: sanitized like any entry.
    session = [f"session={sanitize_for_terminal(s.session)}"] if s.session else []
    clock = f"{elapsed // 60}:{elapsed % 60:02d}"
    model, state = sanitize_for_terminal(s.model), sanitize_for_terminal(s.state)
    spinner = SPINNER[int(time.monotonic() * 10) % len(SPINNER)] if s.working else " "
    parts = [f" {title}", f"{spinner} [{state}]", f"model={model}", *session, f"iter={s.iteration}", tokens, clock]
    left = "  ".join(parts)
    right = (notice + "   " if notice else "") + keys
    # On a narrow terminal the facts are cut, never the key hints that say how to leave.
    left = left[: max(width - len(right) - 1, 0)]
    return left + " " * (width - len(left) - len(right)) + right
