"""`fiskai session search`: filter a store's session list (no journal is opened beyond what `list` reads).

Meta records name the agent identity and the caller since schema version 6. A session whose meta names no
agent (an older one, or the Go original's) cannot match an `identity` or `caller` filter; such sessions
are counted in `no_agent_excluded`, as the Go agent reports its older journals. A served prompt's caller is
the sender it claimed (unverified); a local run has none, so `--caller` never matches it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from .inspection import parse_created
from .records import JsonValue
from .store import RunSummary

__all__ = ["STATUSES", "SearchFilter", "SearchResult", "search_sessions"]

STATUSES: Final = ("open", "completed", "suspended", "error", "budget", "max_iterations")
"""What `--status` accepts: `open` (no terminal record) or a terminal reason."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchFilter:
    """`fiskai session search` filters; every given one must hold."""

    identity: str | None = None
    model: str | None = None
    caller: str | None = None
    status: str | None = None
    since: datetime | None = None
    """Created at or after (timezone-aware)."""
    until: datetime | None = None
    """Created at or before (timezone-aware)."""
    match: re.Pattern[str] | None = None
    """Searched in the prompt."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult:
    """The matching sessions, newest first, and how many an identity or caller filter dropped for naming none."""

    runs: tuple[RunSummary, ...]
    no_agent_excluded: int

    def to_json(self) -> dict[str, JsonValue]:
        runs: list[JsonValue] = [
            {
                "run_id": s.run_id,
                "agent": s.agent,
                "caller": s.caller,
                "model": s.model,
                "status": s.status,
                "created": s.created,
                "updated": s.updated.isoformat(),
                "ended": s.status not in ("open", "damaged", "truncated"),
                "prompt": s.prompt,
            }
            for s in self.runs
        ]
        return {"runs": runs, "no_agent_excluded": self.no_agent_excluded}


def search_sessions(summaries: Sequence[RunSummary], query: SearchFilter) -> SearchResult:
    """The sessions of a store's `list` that pass `query`, newest (by creation) first.

    A session whose creation time cannot be read (a damaged journal) fails any `since`/`until` filter.
    """
    kept: list[tuple[datetime | None, RunSummary]] = []
    excluded = 0
    for summary in summaries:
        if (query.identity is not None or query.caller is not None) and not summary.agent:
            excluded += 1  # it names no agent (written before schema version 6): such a filter cannot judge it
            continue
        created = parse_created(summary.created)
        checks = (
            query.identity is None or summary.agent == query.identity,
            query.caller is None or summary.caller == query.caller,
            query.model is None or summary.model == query.model,
            query.status is None or summary.status == query.status,
            query.since is None or (created is not None and created >= query.since),
            query.until is None or (created is not None and created <= query.until),
            query.match is None or query.match.search(summary.prompt) is not None,
        )
        if all(checks):
            kept.append((created, summary))
    kept.sort(key=lambda pair: (pair[0] is not None, pair[0] or pair[1].updated, pair[1].updated), reverse=True)
    return SearchResult(runs=tuple(s for _, s in kept), no_agent_excluded=excluded)
