"""Evaluate retrieval against judged query suites: recall@k, MRR@10 and nDCG@10.

A public module on purpose, so `fiskai knowledge eval`, the benchmarks and library users share one
implementation of the metrics and the suite formats::

    from fiskai_rag.eval import evaluate, load_trec_suite

    suite = load_trec_suite(Path("cisi"))
    report = evaluate(suite, lambda text: [hit.citation for hit in store.search(text, top_k=20).hits])

`check_answers` checks that a question's verbatim answer reached the top hits and the pack, and
`answer_figures` turns those checks into rates per question kind. `check_evidence` checks answer-bearing
evidence: that a context pack delivered, and `show` reads back, the expected text, not only the right URI.
"""

from ._answers import ALL_KINDS, AnswerCheck, KindFigures, answer_figures, check_answers
from ._bm25 import Bm25Baseline
from ._evidence import EvidenceCheck, check_evidence
from ._metrics import (
    DEFAULT_RECALL_K,
    EvalReport,
    QueryResult,
    evaluate,
    judge,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)
from ._suite import EvalQuery, EvalSuite, SuiteError, load_suite, load_trec_suite, suite_from_mapping

__all__ = [
    "ALL_KINDS",
    "DEFAULT_RECALL_K",
    "AnswerCheck",
    "Bm25Baseline",
    "EvalQuery",
    "EvalReport",
    "EvalSuite",
    "EvidenceCheck",
    "KindFigures",
    "QueryResult",
    "SuiteError",
    "answer_figures",
    "check_answers",
    "check_evidence",
    "evaluate",
    "judge",
    "load_suite",
    "load_trec_suite",
    "ndcg_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "suite_from_mapping",
]
