"""Does retrieval hand over an answer? Per-question checks against verbatim answer strings, and per-kind rates.

A question in a suite may list `answers`: short strings, copied from the pages, any one of which answers
it. Two things are checked, as an agent would meet them:

- the top `top` search hits: does any hit's chunk text contain an answer (`in_hits`), and at which rank;
- the context pack at `budget` tokens: does any delivered excerpt contain one (`in_pack`).

Matching is case-insensitive substring matching on the text as indexed, so an answer must survive the
chunker whole (split mid-sentence, it is not found).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fiskai_rag.store._store import Store

from ._suite import EvalQuery

__all__ = ["ALL_KINDS", "AnswerCheck", "KindFigures", "answer_figures", "check_answers"]

ALL_KINDS = "all"
"""The label of the row over every question in `answer_figures`."""


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """Whether one question's answer reached the top hits and the pack."""

    query_id: str
    kind: str
    hit_rank: int | None
    """1-based rank of the first hit carrying an answer within the top hits, else None."""
    in_pack: bool
    returned: tuple[tuple[str, str], ...] = ()
    """The top hits as (citation, heading path), best first: for a miss, what came instead. A hit that
    answers in other words than the listed `answers` is a gap in the question set, not in the ranking."""

    @property
    def in_hits(self) -> bool:
        """An answer is in the top hits."""
        return self.hit_rank is not None


@dataclass(frozen=True, slots=True)
class KindFigures:
    """The share of one kind's questions whose answer reached the top hits, and the pack."""

    kind: str
    questions: int
    in_hits: float
    in_pack: float


def _carries(text: str, answers: Sequence[str]) -> bool:
    folded = text.casefold()
    return any(answer.casefold() in folded for answer in answers)


def check_answers(store: Store, query: EvalQuery, *, top: int = 5, budget: int = 1500) -> AnswerCheck:
    """Search and pack `query` and check both for its `answers`.

    Args:
        store: An open store (a reader is enough).
        query: A question with at least one answer string.
        top: How many search hits count.
        budget: The context pack's token budget.

    Raises:
        ValueError: the question lists no answers.
    """
    if not query.answers:
        raise ValueError(f"query {query.id} lists no answers")
    hits = store.search(query.text, top_k=top).hits
    rank = next((n for n, hit in enumerate(hits[:top], start=1) if _carries(hit.content, query.answers)), None)
    pack = store.context(query.text, budget=budget)
    in_pack = any(_carries(item.excerpt, query.answers) for item in pack.items)
    returned = tuple((hit.citation, hit.heading_path) for hit in hits[:top])
    return AnswerCheck(
        query_id=query.id, kind=query.kind or "unlabelled", hit_rank=rank, in_pack=in_pack, returned=returned
    )


def answer_figures(checks: Iterable[AnswerCheck]) -> list[KindFigures]:
    """Rates per kind (sorted by name), then over every question (`ALL_KINDS`); empty without checks."""
    listed = list(checks)
    if not listed:
        return []
    groups: dict[str, list[AnswerCheck]] = {}
    for check in listed:
        groups.setdefault(check.kind, []).append(check)
    rows = [_figures(kind, groups[kind]) for kind in sorted(groups)]
    return [*rows, _figures(ALL_KINDS, listed)]


def _figures(kind: str, checks: list[AnswerCheck]) -> KindFigures:
    count = len(checks)
    return KindFigures(
        kind=kind,
        questions=count,
        in_hits=sum(check.in_hits for check in checks) / count,
        in_pack=sum(check.in_pack for check in checks) / count,
    )
