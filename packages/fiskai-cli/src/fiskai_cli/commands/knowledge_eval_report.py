"""What `fiskai knowledge eval` prints: the runs it scored, as a table or as JSON."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass

from fiskai_rag.eval import AnswerCheck, EvalReport, EvalSuite, KindFigures

__all__ = ["AnswerSettings", "Evidence", "Run", "json_report", "table", "threshold_misses"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """The answer-bearing checks of the queries that state expected excerpts or reads."""

    checked: int
    passed: int
    budget: int
    failures: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """One ranking's scores over the suite, with what it cost."""

    label: str
    report: EvalReport
    search_ms: list[float]
    evidence: Evidence | None = None
    answers: tuple[KindFigures, ...] = ()
    """Per-kind answer rates, for suites whose questions list `answers`."""
    answer_checks: tuple[AnswerCheck, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerSettings:
    """Where a question's verbatim answer must arrive: the top `top` hits, or the pack at `budget` tokens."""

    top: int
    budget: int


def threshold_misses(report: EvalReport, minimums: dict[str, float | None]) -> list[str]:
    """Each figure below the minimum asked for (`--min-*`), worded."""
    figures = {"nDCG@10": report.ndcg, "MRR@10": report.mrr, f"recall@{report.k}": report.recall}
    names = {"ndcg": "nDCG@10", "mrr": "MRR@10", "recall": f"recall@{report.k}"}
    return [
        f"{names[key]} {figures[names[key]]:.3f} is below the required {minimum:.3f}"
        for key, minimum in minimums.items()
        if minimum is not None and figures[names[key]] < minimum
    ]


def _scores(run: Run) -> dict[str, object]:
    report = run.report
    return {
        "label": run.label,
        "ndcg_at_10": round(report.ndcg, 4),
        "mrr_at_10": round(report.mrr, 4),
        f"recall_at_{report.k}": round(report.recall, 4),
        "search_ms_median": round(statistics.median(run.search_ms), 2) if run.search_ms else None,
    }


def json_report(
    suite: EvalSuite,
    runs: list[Run],
    notes: list[str],
    misses: list[str],
    answering: AnswerSettings,
    lexical: list[Run],
) -> str:
    """The runs as one JSON document: the ranking, BM25 and lexical rows, evidence, answers, each query."""
    ours = runs[0].report
    document = {
        "suite": suite.name,
        "queries": len(suite.queries),
        "k": ours.k,
        "ranking": _scores(runs[0]),
        "baseline": _scores(runs[1]) if len(runs) > 1 else None,
        "lexical": _scores(lexical[0]) if lexical else None,
        "notes": notes,
        "evidence": None
        if runs[0].evidence is None
        else {
            "checked": runs[0].evidence.checked,
            "passed": runs[0].evidence.passed,
            "budget": runs[0].evidence.budget,
            "failures": list(runs[0].evidence.failures),
        },
        "answers": [
            {
                "kind": row.kind,
                "questions": row.questions,
                f"in_top_{answering.top}": round(row.in_hits, 4),
                f"in_pack_{answering.budget}": round(row.in_pack, 4),
            }
            for row in runs[0].answers
        ],
        "passed": not misses,
        "misses": misses,
        "per_query": [
            {
                "id": result.query_id,
                "ndcg_at_10": round(result.ndcg, 4),
                "reciprocal_rank": round(result.reciprocal_rank, 4),
                f"recall_at_{ours.k}": round(result.recall, 4),
            }
            for result in ours.results
        ],
        "answer_checks": [
            {
                "id": check.query_id,
                "kind": check.kind,
                "hit_rank": check.hit_rank,
                "in_pack": check.in_pack,
                "returned": [{"citation": citation, "heading": heading} for citation, heading in check.returned],
            }
            for check in runs[0].answer_checks
        ],
    }
    return json.dumps(document, indent=2)


def _answer_lines(run: Run, answering: AnswerSettings) -> list[str]:
    if not run.answers:
        return []
    top, pack = f"top {answering.top} hits", f"pack @{answering.budget}"
    lines = ["", f"answers ({run.label}): share of questions whose verbatim answer reached ...", ""]
    header = f"{'kind':<16} {'questions':>9} {top:>10} {pack:>11}"
    lines += [header, "-" * len(header)]
    lines += [f"{row.kind:<16} {row.questions:>9} {row.in_hits:>10.3f} {row.in_pack:>11.3f}" for row in run.answers]
    return lines


def table(suite: EvalSuite, runs: list[Run], notes: list[str], per_query: bool, answering: AnswerSettings) -> str:
    """The runs as a table, with the answer rates and (`--per-query`) each query and its misses."""
    k = runs[0].report.k
    lines = [f"suite {suite.name}: {len(suite.queries)} judged queries", *notes, ""]
    header = f"{'ranking':<24} {'nDCG@10':>8} {'MRR@10':>8} {f'recall@{k}':>10} {'search p50':>11}"
    lines += [header, "-" * len(header)]
    for run in runs:
        p50 = f"{statistics.median(run.search_ms):.1f} ms" if run.search_ms else "-"
        report = run.report
        lines.append(f"{run.label:<24} {report.ndcg:>8.3f} {report.mrr:>8.3f} {report.recall:>10.3f} {p50:>11}")
    evidence = runs[0].evidence
    if evidence is not None:
        lines += [
            "",
            f"evidence: {evidence.passed} of {evidence.checked} queries delivered their expected excerpts and reads "
            f"(pack budget {evidence.budget})",
        ]
    lines += _answer_lines(runs[0], answering)
    if per_query:
        lines += ["", f"{'query':<8} {'nDCG@10':>8} {'RR':>6} {f'recall@{k}':>10}  text"]
        for result in runs[0].report.results:
            text = result.text if len(result.text) <= 60 else result.text[:59] + "..."
            lines.append(
                f"{result.query_id:<8} {result.ndcg:>8.3f} {result.reciprocal_rank:>6.3f} {result.recall:>10.3f}  {text}"
            )
        if runs[0].answer_checks:
            lines += ["", f"{'query':<8} {'kind':<16} {'hit rank':>8} {'pack':>5}"]
            for check in runs[0].answer_checks:
                lines.append(
                    f"{check.query_id:<8} {check.kind:<16} {check.hit_rank or '-':>8} {'yes' if check.in_pack else 'no':>5}"
                )
                if not check.in_hits:
                    # What came instead: read them to tell a ranking miss from an answer worded otherwise.
                    lines += [
                        f"    {n}. {citation}  {heading}" for n, (citation, heading) in enumerate(check.returned, 1)
                    ]
    return "\n".join(lines)
