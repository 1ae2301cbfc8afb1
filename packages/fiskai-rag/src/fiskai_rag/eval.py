"""Evaluate retrieval against judged query suites: recall@k, MRR@10 and nDCG@10.

A public module on purpose, so `fiskai knowledge eval`, the benchmarks and library users share one
implementation of the metrics and the suite formats::

    from fiskai_rag.eval import evaluate, load_trec_suite

    suite = load_trec_suite(Path("cisi"))
    report = evaluate(suite, lambda text: [hit.citation for hit in store.search(text, top_k=20).hits])

`check_evidence` checks answer-bearing evidence: that a context pack delivered, and `show` reads back,
the expected text, not only the right URI.
"""

from ._eval import (
    DEFAULT_RECALL_K,
    Bm25Baseline,
    EvalQuery,
    EvalReport,
    EvalSuite,
    QueryResult,
    SuiteError,
    evaluate,
    judge,
    load_suite,
    load_trec_suite,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
    suite_from_mapping,
)
from ._evidence import EvidenceCheck, check_evidence

__all__ = [
    "DEFAULT_RECALL_K",
    "Bm25Baseline",
    "EvalQuery",
    "EvalReport",
    "EvalSuite",
    "EvidenceCheck",
    "QueryResult",
    "SuiteError",
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
