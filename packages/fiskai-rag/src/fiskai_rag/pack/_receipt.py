"""A pack's receipt: the input digest and the fields that say what was chosen, dropped and why.

`input_digest` is the first 16 hex digits of a SHA-256 over every semantic input and nothing else: the
query as ranked (terms, identifiers, text after the temporal expression), the window, pins, excluded
citations, the delta base, the window's chunk count and each term's document frequency (rarity and stop
terms derive from them), every candidate's citation, title, date and content digest, `RANKING_VERSION`
and the package version. Budget, format and `--explain` are left out on purpose: they change how much is
delivered, not what ranks, so a saved receipt seeds deltas for any budget or format.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._rank import RANKING_VERSION, Candidate, QueryPlan
from ._select import PackItem, Selection
from ._temporal import Window

__all__ = ["PACKAGE_VERSION", "Context", "Warning_", "input_digest", "make_receipt"]

PACKAGE_VERSION = "0.1.0"
"""fiskai-rag's version (a test holds it equal to the installed metadata); read without importlib.metadata,
which would cost the pack path several milliseconds of imports."""

Warning_ = tuple[str, str] | None
"""(kind, text): `no_candidates`, `no_match` or `over_budget`; None when items were delivered."""


def input_digest(
    plan: QueryPlan,
    window: Window,
    *,
    pins: Sequence[str],
    exclude: Collection[str],
    since_receipt: str | None,
    total: int,
    df: Mapping[str, int],
    candidates: Sequence[Candidate],
) -> str:
    """The receipt's `input_digest` (16 hex digits)."""
    document = {
        "query": {"text": plan.text, "terms": plan.terms, "identifiers": plan.identifiers},
        "window": [
            window.since.isoformat() if window.since else None,
            window.until.isoformat() if window.until else None,
        ],
        "pins": list(pins),
        "exclude": sorted(exclude),
        "since_receipt": since_receipt,
        "corpus": {"chunks": total, "df": dict(sorted(df.items()))},
        "candidates": sorted([c.citation, c.title, c.date, c.digest] for c in candidates),
        "ranking_version": RANKING_VERSION,
        "package_version": PACKAGE_VERSION,
    }
    blob = json.dumps(document, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Context:
    """Everything about a request that the receipt reports besides the selection itself."""

    digest: str
    query: str
    plan: QueryPlan
    stop: tuple[str, ...]
    fmt: str
    index: dict[str, Any]
    window: Window
    since_receipt: str | None
    saved: bool
    counts: dict[str, int]
    """candidates, excluded, unchanged (delta), below_floor, collapsed."""
    empty: Warning_
    """The warning when nothing could be selected before the budget was considered."""


def _warning(context: Context, kept: Sequence[PackItem], selection: Selection) -> dict[str, str] | None:
    if kept:
        return None
    if context.empty is not None:
        kind, text = context.empty
        return {"kind": kind, "text": text}
    if selection.items or selection.dropped or selection.rejected_pins:
        return {
            "kind": "over_budget",
            "text": "items matched above the relevance floor but none fits the budget; raise --budget",
        }
    return None


def make_receipt(
    context: Context, selection: Selection, kept: Sequence[PackItem], detail: int, budget: int
) -> dict[str, Any]:
    """The receipt of delivering `kept` (a prefix-preserving subset of `selection.items`).

    Items the encoder had to drop to fit are reported as dropped `over_budget` (pins as rejected pins),
    before the selection's own dropped items; only the first `detail` dropped entries are detailed.
    """
    kept_ids = {item.citation for item in kept}
    unfit = [item for item in selection.items if item.citation not in kept_ids]
    dropped = [(i.citation, "over_budget") for i in unfit if not i.pinned] + selection.dropped
    rejected = selection.rejected_pins + [(i.citation, "over_budget") for i in unfit if i.pinned]
    warning = _warning(context, kept, selection)
    plan = context.plan
    return {
        "input_digest": context.digest,
        "ranking_version": RANKING_VERSION,
        "package_version": PACKAGE_VERSION,
        "status": warning["kind"] if warning else ("ok" if context.index["state"] != "missing" else "index_not_built"),
        "query": context.query,
        "terms": list(plan.surfaces),
        "filtered_terms": {
            "scaffolding": list(plan.scaffolding),
            "stop": list(context.stop),
            "short": list(plan.short),
        },
        "budget": budget,
        "used_tokens": sum(selection.costs.get(item.citation, 0) for item in kept),
        "encoded_tokens": 0,
        "format": context.fmt,
        "selected": [item.citation for item in kept],
        "dropped": [{"citation": c, "reason": r} for c, r in dropped[:detail]],
        "dropped_count": len(dropped),
        "rejected_pins": [{"citation": c, "reason": r} for c, r in rejected],
        "index": context.index,
        "window": context.window.as_dict(),
        "since_receipt": context.since_receipt,
        "saved": context.saved,
        "counts": context.counts,
        # Delivered items that stand for near-identical copies elsewhere: where else each section is.
        **({"also": also} if (also := {i.citation: list(i.collapsed) for i in kept if i.collapsed}) else {}),
        "warning": warning,
    }
