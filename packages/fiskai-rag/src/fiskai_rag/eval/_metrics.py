"""Rank metrics over a judged ranking, and `evaluate`, which runs a suite's queries through a search.

Metrics are pure functions over a ranking that has already been judged: `grades[i]` is the relevance
grade of the item at rank `i + 1` (0 = not relevant). `judge` turns a list of search citations into
such grades against a query's expected URIs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from fiskai_rag.store._citation import Citation

from ._suite import EvalSuite

__all__ = [
    "DEFAULT_RECALL_K",
    "EvalReport",
    "QueryResult",
    "evaluate",
    "judge",
    "ndcg_at_k",
    "recall_at_k",
    "reciprocal_rank",
]

DEFAULT_RECALL_K = 10
"""Recall depth by default: the depth of nDCG and MRR, and one that a 20-hit search still fills after later
chunks of an already ranked document are folded away (top_k is capped at 20)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryResult:
    """How one query ranked."""

    query_id: str
    text: str
    ranked: tuple[str, ...]
    """The judged units in rank order: relpaths for document-level queries, citations otherwise."""
    grades: tuple[int, ...]
    recall: float
    reciprocal_rank: float
    ndcg: float


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalReport:
    """Mean metrics over a suite, with the per-query results they were computed from."""

    suite: str
    k: int
    """The recall depth (MRR and nDCG are always at 10)."""
    results: tuple[QueryResult, ...]
    recall: float
    mrr: float
    ndcg: float


def recall_at_k(grades: Sequence[int], relevant_count: int, k: int) -> float:
    """Fraction of the relevant items found in the first `k` ranks.

    Args:
        grades: Relevance grade per rank (0 = not relevant), each relevant item at most once.
        relevant_count: How many relevant items the query has in all.
        k: The rank cut-off.

    Returns:
        A value in [0, 1]; 0.0 when the query has no relevant items.
    """
    if relevant_count <= 0:
        return 0.0
    found = sum(1 for grade in grades[:k] if grade > 0)
    return found / relevant_count


def reciprocal_rank(grades: Sequence[int], k: int = 10) -> float:
    """1 / rank of the first relevant item within the first `k` ranks, else 0.0."""
    for position, grade in enumerate(grades[:k], start=1):
        if grade > 0:
            return 1.0 / position
    return 0.0


def _dcg(grades: Sequence[int], k: int) -> float:
    # Linear gain with a log2 discount (rank 1 divides by log2(2) = 1), as trec_eval's ndcg does.
    return sum(grade / math.log2(position + 1) for position, grade in enumerate(grades[:k], start=1))


def ndcg_at_k(grades: Sequence[int], ideal: Sequence[int], k: int = 10) -> float:
    """Normalised discounted cumulative gain at `k`.

    Args:
        grades: Relevance grade per rank of the ranking under test.
        ideal: The grades of every relevant item of the query, in any order; the best possible
            ranking puts them first, highest grade first.
        k: The rank cut-off.

    Returns:
        DCG@k / ideal DCG@k, in [0, 1]; 0.0 when the query has no relevant items.
    """
    best = _dcg(sorted((grade for grade in ideal if grade > 0), reverse=True), k)
    if best == 0.0:
        return 0.0
    return _dcg(grades, k) / best


def _document_of(uri: str) -> str:
    citation = Citation.try_parse(uri)
    return uri if citation is None else citation.path


def _normalise(uri: str) -> str:
    path = uri.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def _matches(found: str, expected: str) -> bool:
    # The index keys documents by the path as walked (absolute, or relative to where it was run), while
    # suites name them relative to the suite: a match on whole trailing path components covers both.
    return found == expected or found.endswith("/" + expected)


def judge(citations: Sequence[str], relevant: Mapping[str, int]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Judge a search ranking against a query's expected URIs.

    When no expected URI names a chunk (`#ordinal`), the ranking is judged per document: later chunks
    of a document already ranked are dropped, as TREC-style judgements are per document. Each expected
    URI earns its grade once, at its first match; repeats count as not relevant.

    Args:
        citations: Hit citations (`relpath#ordinal`) or relpaths, best first.
        relevant: Expected URI to grade.

    Returns:
        The judged units in rank order and the grade of each.
    """
    expected = {_normalise(uri): grade for uri, grade in relevant.items()}
    per_document = not any(_document_of(uri) != uri for uri in expected)
    units: list[str] = []
    grades: list[int] = []
    seen: set[str] = set()
    credited: set[str] = set()
    for citation in citations:
        unit = _normalise(_document_of(citation) if per_document else citation)
        if unit in seen:
            continue
        seen.add(unit)
        units.append(unit)
        grade = 0
        for uri, uri_grade in expected.items():
            # A citation URI names one chunk; a relpath URI is met by any chunk of its document.
            target = unit if _document_of(uri) != uri else _document_of(unit)
            if uri not in credited and _matches(target, uri):
                credited.add(uri)
                grade = uri_grade
                break
        grades.append(grade)
    return tuple(units), tuple(grades)


def evaluate(suite: EvalSuite, search: Callable[[str], Sequence[str]], *, k: int = DEFAULT_RECALL_K) -> EvalReport:
    """Run every query of a suite and score the rankings.

    Args:
        suite: The judged queries.
        search: Returns the citations (or relpaths) for a query text, best first.
        k: Recall depth.

    Returns:
        Mean recall@k, MRR@10 and nDCG@10 over the queries, with per-query results.
    """
    results: list[QueryResult] = []
    for query in suite.queries:
        ranked, grades = judge(search(query.text), query.relevant)
        results.append(
            QueryResult(
                query_id=query.id,
                text=query.text,
                ranked=ranked,
                grades=grades,
                recall=recall_at_k(grades, len(query.relevant), k),
                reciprocal_rank=reciprocal_rank(grades, 10),
                ndcg=ndcg_at_k(grades, list(query.relevant.values()), 10),
            )
        )
    count = len(results) or 1
    return EvalReport(
        suite=suite.name,
        k=k,
        results=tuple(results),
        recall=sum(result.recall for result in results) / count,
        mrr=sum(result.reciprocal_rank for result in results) / count,
        ndcg=sum(result.ndcg for result in results) / count,
    )
