"""An in-memory knowledge searcher: fixed excerpts, honest budgets, recorded calls."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FakePack", "FakeSearcher"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FakePack:
    """A pack as `FakeSearcher` builds it."""

    text: str
    citations: Sequence[str]
    status: str
    degraded: str | None = None


@dataclass(slots=True, kw_only=True)
class FakeSearcher:
    """Returns every excerpt whose text contains a query word, in order, while it fits the budget.

    `excerpts` maps citation to text. Calls are recorded as `(query, budget, excluded citations)`, and
    each call's `limit` in `limits`.
    """

    __test__ = False

    excerpts: dict[str, str] = field(default_factory=dict[str, str])
    calls: list[tuple[str, int, frozenset[str]]] = field(default_factory=list[tuple[str, int, frozenset[str]]])
    limits: list[int | None] = field(default_factory=list[int | None])

    def context(
        self,
        query: str,
        *,
        budget: int,
        fmt: Literal["text", "json", "jsonl"] = "text",
        exclude: Collection[str] = (),
        limit: int | None = None,
    ) -> FakePack:
        """Select matching excerpts within `budget` tokens (bytes / 4, rounded up), at most `limit`."""
        self.calls.append((query, budget, frozenset(exclude)))
        self.limits.append(limit)
        words = {word.lower() for word in query.split()}
        lines: list[str] = []
        chosen: list[str] = []
        for citation, text in self.excerpts.items():
            if limit is not None and len(chosen) >= limit:
                break
            if citation in exclude or not words & {word.lower() for word in text.split()}:
                continue
            candidate = [*lines, f"{citation}: {text}"]
            if math.ceil(len("\n".join(candidate).encode()) / 4) > budget:
                break
            lines, chosen = candidate, [*chosen, citation]
        return FakePack(text="\n".join(lines), citations=tuple(chosen), status="ok" if chosen else "no_match")
