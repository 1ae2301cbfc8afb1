"""Ranking quality of packs on the CISI collection, held to the figures measured when the scorer was tuned.

Measured (76 judged queries): search top-20 nDCG@10 0.398, MRR@10 0.654; packs with a large budget nDCG@10
0.380, MRR@10 0.663; at --budget 1024 (median 8 items) 66 queries get at least one relevant document and
36% of delivered documents are relevant, against 65 and 39% for search cut to the same count. Issue 16
(query analysis merged, packs led by search's hits in search order): search 0.397 / 0.629, packs 0.393 /
0.629; at 1024, 63 queries served and 43.5% of delivered documents relevant.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_rag import open_store
from fiskai_rag.eval import evaluate, judge, load_trec_suite


@pytest.mark.ranking
def test_packs_keep_relevant_documents_on_cisi(
    shared_fixtures: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cisi = shared_fixtures / "ir" / "cisi"
    suite = load_trec_suite(cisi)
    monkeypatch.chdir(cisi)  # document keys are `corpus/NNNN.md`, as the judgements name them
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["corpus"])

    with open_store(tmp_path / "store", read_only=True) as store:
        ranking = evaluate(suite, lambda text: list(store.context(text, budget=8192).citations))
        served = 0
        delivered = relevant = 0
        for query in suite.queries:
            _, grades = judge(store.context(query.text, budget=1024).citations, query.relevant)
            served += any(grades)
            delivered += len(grades)
            relevant += sum(1 for grade in grades if grade)

    assert ranking.ndcg >= 0.35
    assert ranking.mrr >= 0.62
    assert served >= 60
    assert relevant / delivered >= 0.33
