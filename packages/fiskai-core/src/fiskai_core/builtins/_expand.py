"""`harness.knowledge.expand_to_section`: widen each search hit to its whole heading section (reference 7.3).

A long section is indexed as several chunks; a hit is one of them. Widened, the hit takes in the chunks
next to it that belong to the same heading (the same breadcrumb, or a sub-heading under it), nearest
first, while the result stays within its share of the budget: `max_injected_tokens / top_k` tokens,
4 bytes a token. The hit itself is always kept whole. A widened hit is cited as a span,
`docs/foo.md#5..#9`. Needs an index that resolves citations (`KnowledgeReader`); applies to the Go
agent's JSON result format, where hits are whole chunks (a context pack chooses its own excerpts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from fiskai_core.knowledge import KnowledgeHit, KnowledgeReader, KnowledgeResult

__all__ = ["ExpandedHit", "ExpandedResult", "expand_result"]


class ExpandedHit(NamedTuple):
    """A hit after widening (unchanged when nothing was added)."""

    citation: str
    heading_path: str
    content: str


class ExpandedResult(NamedTuple):
    """A search result whose hits were widened."""

    hits: Sequence[ExpandedHit]
    status: str
    tier: str
    degraded: str | None


def expand_result(reader: KnowledgeReader, result: KnowledgeResult, *, budget_bytes: int) -> ExpandedResult:
    """`result` with every hit widened to its section within `budget_bytes` each."""
    hits = [_expand(reader, hit, budget_bytes) for hit in result.hits]
    return ExpandedResult(hits, result.status, result.tier, result.degraded)


def _in_section(heading: str, section: str) -> bool:
    return heading == section or (bool(section) and heading.startswith(section + " > "))


def _expand(reader: KnowledgeReader, hit: KnowledgeHit, budget_bytes: int) -> ExpandedHit:
    path, _, number = hit.citation.rpartition("#")
    if not path or not number.isdigit():
        return ExpandedHit(hit.citation, hit.heading_path, hit.content)
    ordinal = int(number)
    parts = {ordinal: hit.content}
    used = len(hit.content.encode())
    open_sides = {-1, 1}
    step = 1
    while open_sides:
        for side in sorted(open_sides, reverse=True):  # after before before on a tie
            neighbour = ordinal + side * step
            section = None
            if neighbour >= 0:
                try:
                    section = reader.show(f"{path}#{neighbour}")
                except Exception:  # noqa: BLE001 - past either end of the document
                    section = None
            size = len(section.content.encode()) if section is not None else 0
            if section is None or not _in_section(section.heading_path, hit.heading_path) or used + size > budget_bytes:
                open_sides.discard(side)
                continue
            parts[neighbour] = section.content
            used += size
        step += 1
    first, last = min(parts), max(parts)
    citation = hit.citation if first == last else f"{path}#{first}..#{last}"
    return ExpandedHit(citation, hit.heading_path, "\n\n".join(parts[n] for n in sorted(parts)))
