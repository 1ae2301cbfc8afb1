"""Which scored chunks enter a pack: the relevance floor, collapsing, pins, the budget and source diversity.

Order of decisions, each recorded for the receipt:
1. The relevance floor: an item must match a meaningful term (or an identifier) and score at least
   `FLOOR_MIN` and a fifth of the best score, so nothing unrelated is padded in to fill a budget. Above
   it, the search ranking's own hits (seeds) lead in search order, then the pack scorer's other finds.
2. Identical representations (the same heading path and text, typically a page copied across doc
   versions) collapse to their best-ranked citation, which carries the count and the other citations.
3. Pins, in request order, share at most a third of the item budget; a pin that does not fit is named.
4. Ranked items are admitted best first while their estimated tokens fit; one that does not fit is
   dropped (`over_budget`) and smaller ones behind it may still enter.
5. A pack large enough to diversify (`DIVERSIFY_MIN` items from at least three files) admits at most 40%
   of its items from one file; the rest are dropped as `source_cap`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ._rank import IDENTIFIER_EXACT, Scored

__all__ = ["FLOOR_MIN", "PackItem", "Selection", "apply_floor", "collapse", "select"]

FLOOR_MIN = 2
FLOOR_FRACTION = 5
"""An item must reach 1/FLOOR_FRACTION of the best item's score."""
DIVERSIFY_MIN = 5
SOURCE_SHARE = (2, 5)
"""At most 2/5 (40%) of a diversified pack's items from one file."""
PIN_SHARE = 3
"""Pins may use at most 1/PIN_SHARE of the item budget."""
MAX_COLLAPSED = 4


@dataclass(frozen=True, slots=True)
class PackItem:
    """One delivered chunk: where to cite it, why it was chosen, and the excerpt that answers."""

    citation: str
    path: str
    heading_path: str
    title: str
    date: str
    """Front matter date of its document (`YYYY-MM-DD`), or `""`."""
    excerpt: str
    score: int
    reasons: tuple[tuple[str, int], ...]
    """(reason, integer contribution) pairs; they sum to `score`."""
    digest: str
    pinned: bool = False
    count: int = 1
    """How many identical representations this item stands for (itself included)."""
    collapsed: tuple[str, ...] = ()
    """Citations of the identical representations it stands for (at most four named)."""


@dataclass(slots=True)
class Selection:
    """The admitted items, in delivery order, and what was left out."""

    items: list[PackItem] = field(default_factory=lambda: [])
    dropped: list[tuple[str, str]] = field(default_factory=lambda: [])
    """(citation, reason) best first: `over_budget` or `source_cap`."""
    rejected_pins: list[tuple[str, str]] = field(default_factory=lambda: [])
    used_tokens: int = 0
    costs: dict[str, int] = field(default_factory=lambda: {})
    """Each admitted item's estimated tokens, by citation (`used_tokens` is their sum)."""


TOP_SEEDS = 5
"""Search hits (by rank) that a pack keeps whatever its own scorer thinks of them: the top five."""


def apply_floor(
    scored: Sequence[Scored], seeds: Mapping[str, int] | None = None, *, vector_seeds: bool = False
) -> tuple[list[Scored], int]:
    """The items above the relevance floor, best first, and how many fell below.

    Order: an item the query names exactly (its citation or document path) first, then the search
    ranking's hits (`seeds`: citation -> 0-based search rank) in search order, then the rest by score
    (ties on the citation). Search's first `TOP_SEEDS` hits that match the query are kept whatever their
    score: a pack must carry what the top hits carry (after the chunker began splitting long tables, the
    answer to influxdata-tuning f25b, a flags-table row at search rank 4, fell below the floor). Later
    seeds meet the same floor as every item (letting all seeds skip it padded small packs with weak hits
    and measured no better: influxdata-tuning answers @1500 0.659 either way, CACM pack nDCG@10 0.509
    skipping it, 0.517 not), so a pack shows the top search hits in their order, and its own scorer adds
    what search missed (exact paths, identifiers, candidates). When the index's vectors ranked the seeds
    (`vector_seeds`), those top hits count as relevant even without a query word: the vectors found
    them by meaning, and a pack that dropped them would never carry what only the vector side finds.
    """
    seeds = seeds or {}

    def top_seed(s: Scored) -> bool:
        return seeds.get(s.candidate.citation, TOP_SEEDS) < TOP_SEEDS

    relevant = [s for s in scored if s.matched or s.identified or (vector_seeds and top_seed(s))]
    best = max((s.score for s in relevant), default=0)

    def above_floor(s: Scored) -> bool:
        if top_seed(s):
            return True
        return s.score >= FLOOR_MIN and s.score * FLOOR_FRACTION >= best

    kept = [s for s in relevant if above_floor(s)]

    def order(s: Scored) -> tuple[int, int, str]:
        if any(points == IDENTIFIER_EXACT and reason.startswith("identifier:") for reason, points in s.reasons):
            return (0, -s.score, s.candidate.citation)
        rank = seeds.get(s.candidate.citation)
        if rank is not None:
            return (1, rank, s.candidate.citation)
        return (2, -s.score, s.candidate.citation)

    kept.sort(key=order)
    return kept, len(scored) - len(kept)


def collapse(
    ranked: Sequence[Scored], same: Mapping[str, str] | None = None
) -> list[tuple[Scored, tuple[str, ...], int]]:
    """Group identical representations under their best-ranked member: (member, others named, count).

    `same` maps a citation to the citation of the item it is a near-identical copy of (`_distinct.fold`);
    without it only byte-identical representations are grouped.
    """

    def key(item: Scored) -> str:
        return same.get(item.candidate.citation, item.candidate.digest) if same else item.candidate.digest

    groups: dict[str, list[Scored]] = {}
    for item in ranked:
        groups.setdefault(key(item), []).append(item)
    out: list[tuple[Scored, tuple[str, ...], int]] = []
    for item in ranked:
        members = groups.get(key(item))
        if members is None or members[0] is not item:
            continue
        others = tuple(m.candidate.citation for m in members[1 : 1 + MAX_COLLAPSED])
        out.append((item, others, len(members)))
    return out


def _admit(
    ranked: Sequence[PackItem], budget: int, cost: Callable[[PackItem], int], cap: int | None, taken: Counter[str]
) -> tuple[list[PackItem], list[tuple[str, str]], int]:
    chosen: list[PackItem] = []
    dropped: list[tuple[str, str]] = []
    used = 0
    per_source = Counter(taken)
    for item in ranked:
        if cap is not None and per_source[item.path] >= cap:
            dropped.append((item.citation, "source_cap"))
            continue
        tokens = cost(item)
        if used + tokens > budget:
            dropped.append((item.citation, "over_budget"))
            continue
        chosen.append(item)
        used += tokens
        per_source[item.path] += 1
    return chosen, dropped, used


def select(
    ranked: Sequence[PackItem], pins: Sequence[PackItem], item_budget: int, cost: Callable[[PackItem], int]
) -> Selection:
    """Admit pins, then ranked items, under `item_budget` estimated tokens.

    Args:
        ranked: Items above the floor, collapsed, best first.
        pins: Resolved pins in request order (unresolvable pins are the caller's to reject).
        item_budget: Tokens left for items once the receipt and notice are accounted for.
        cost: The estimated tokens an item adds to the delivered format.

    Returns:
        The selection, pins first and then ranked items in rank order (see `apply_floor`).
    """
    selection = Selection()
    pin_budget = max(0, item_budget) // PIN_SHARE
    pin_used = 0
    pinned: list[PackItem] = []
    for pin in pins:
        tokens = cost(pin)
        if pin_used + tokens > pin_budget:
            selection.rejected_pins.append((pin.citation, "over_pin_share"))
            continue
        pinned.append(pin)
        pin_used += tokens
    pinned_citations = {p.citation for p in pinned}
    rest = [item for item in ranked if item.citation not in pinned_citations]
    taken = Counter(p.path for p in pinned)
    remaining = max(0, item_budget - pin_used)
    chosen, dropped, used = _admit(rest, remaining, cost, None, taken)
    total = len(pinned) + len(chosen)
    sources = {item.path for item in (*pinned, *rest)}
    if total >= DIVERSIFY_MIN and len(sources) >= 3:
        # Capping one file frees budget for others and changes the total the cap is a share of, so the
        # cap shrinks until the admitted pack satisfies it (it only decreases, so this ends quickly).
        for _ in range(16):
            cap = max(1, total * SOURCE_SHARE[0] // SOURCE_SHARE[1])
            if max(Counter(i.path for i in (*pinned, *chosen)).values()) <= cap:
                break
            chosen, dropped, used = _admit(rest, remaining, cost, cap, taken)
            total = len(pinned) + len(chosen)
    selection.items = [*pinned, *chosen]
    selection.dropped = dropped
    selection.used_tokens = pin_used + used
    selection.costs = {item.citation: cost(item) for item in selection.items}
    return selection
