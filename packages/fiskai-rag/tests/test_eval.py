from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fiskai_rag.eval import (
    Bm25Baseline,
    EvalQuery,
    EvalSuite,
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

# --- metrics, against figures worked out by hand ---


def test_recall_counts_relevant_items_within_the_cutoff() -> None:
    grades = [1, 0, 1, 0, 1]
    assert recall_at_k(grades, 4, 2) == pytest.approx(1 / 4)
    assert recall_at_k(grades, 4, 3) == pytest.approx(2 / 4)
    assert recall_at_k(grades, 4, 100) == pytest.approx(3 / 4)


def test_recall_of_a_query_without_relevant_items_is_zero() -> None:
    assert recall_at_k([0, 0], 0, 10) == 0.0


def test_reciprocal_rank_is_one_over_the_first_relevant_rank() -> None:
    assert reciprocal_rank([1, 1]) == 1.0
    assert reciprocal_rank([0, 0, 2, 1]) == pytest.approx(1 / 3)
    assert reciprocal_rank([0, 0, 0]) == 0.0


def test_reciprocal_rank_ignores_hits_past_rank_ten() -> None:
    assert reciprocal_rank([0] * 10 + [1]) == 0.0
    assert reciprocal_rank([0] * 9 + [1]) == pytest.approx(0.1)


def test_ndcg_binary() -> None:
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; ideal = 1/log2(2) + 1/log2(3).
    expected = 1.5 / (1 + 1 / math.log2(3))
    assert ndcg_at_k([1, 0, 1], [1, 1]) == pytest.approx(expected)
    assert expected == pytest.approx(0.919720, abs=1e-6)


def test_ndcg_graded_uses_linear_gain_and_sorts_the_ideal() -> None:
    # DCG = 2 + 3/log2(3); ideal puts the 3 first: 3 + 2/log2(3).
    expected = (2 + 3 / math.log2(3)) / (3 + 2 / math.log2(3))
    assert ndcg_at_k([2, 3, 0], [2, 3]) == pytest.approx(expected)
    assert expected == pytest.approx(0.913402, abs=1e-6)


def test_ndcg_is_one_for_the_ideal_ranking_and_zero_without_relevant_hits() -> None:
    assert ndcg_at_k([3, 2, 1], [1, 2, 3]) == pytest.approx(1.0)
    assert ndcg_at_k([0, 0, 0], [1]) == 0.0
    assert ndcg_at_k([1], []) == 0.0


def test_ndcg_cuts_both_the_ranking_and_the_ideal_at_k() -> None:
    # Twelve relevant items, the ranking finds only the 11th: nothing counts at k = 10.
    assert ndcg_at_k([0] * 10 + [1], [1] * 12) == 0.0
    # Ideal@2 = 1 + 1/log2(3), however many relevant items there are in all.
    assert ndcg_at_k([0, 1], [1] * 12, k=2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))


# --- judging a ranking of citations ---


def test_judge_per_document_drops_later_chunks_of_a_ranked_document() -> None:
    units, grades = judge(["a.md#0", "b.md#2", "a.md#1", "c.md#0"], {"a.md": 1, "c.md": 1})
    assert units == ("a.md", "b.md", "c.md")
    assert grades == (1, 0, 1)


def test_judge_per_citation_credits_only_the_named_chunk() -> None:
    units, grades = judge(["a.md#0", "a.md#1", "a.md#2"], {"a.md#1": 2})
    assert units == ("a.md#0", "a.md#1", "a.md#2")
    assert grades == (0, 2, 0)


def test_judge_mixed_expectations_credit_a_relpath_once() -> None:
    _, grades = judge(["a.md#0", "a.md#1", "b.md#4"], {"a.md": 1, "b.md#4": 1})
    assert grades == (1, 0, 1)


def test_judge_matches_whole_trailing_path_components() -> None:
    citations = ["/data/cisi/corpus/0001.md#0", "./corpus/0002.md#0", "/data/xcorpus/0003.md#0"]
    _, grades = judge(citations, {"corpus/0001.md": 1, "corpus/0002.md": 1, "corpus/0003.md": 1})
    assert grades == (1, 1, 0)


def test_judge_keeps_a_hash_that_is_not_an_ordinal_in_the_path() -> None:
    units, grades = judge(["notes#draft.md#3"], {"notes#draft.md": 1})
    assert units == ("notes#draft.md",)
    assert grades == (1,)


def test_evaluate_means_over_queries() -> None:
    suite = EvalSuite(
        name="tiny",
        queries=(
            EvalQuery(id="1", text="alpha", relevant={"a.md": 1, "b.md": 1}),
            EvalQuery(id="2", text="beta", relevant={"c.md": 1}),
        ),
    )
    rankings = {"alpha": ["a.md#0", "x.md#0", "b.md#0"], "beta": ["x.md#0", "y.md#0"]}

    report = evaluate(suite, lambda text: rankings[text], k=2)

    first, second = report.results
    assert first.grades == (1, 0, 1)
    assert first.recall == pytest.approx(0.5)
    assert first.reciprocal_rank == 1.0
    assert first.ndcg == pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3)))
    assert second.recall == 0.0
    assert second.ndcg == 0.0
    assert report.recall == pytest.approx(0.25)
    assert report.mrr == pytest.approx(0.5)
    assert report.ndcg == pytest.approx(first.ndcg / 2)
    assert report.k == 2


# --- suite loaders ---


def test_cisi_suite_loads_every_judged_query(shared_fixtures: Path) -> None:
    suite = load_trec_suite(shared_fixtures / "ir" / "cisi")

    assert suite.name == "cisi"
    assert len(suite.queries) == 76
    assert sum(len(query.relevant) for query in suite.queries) == 3114
    first = suite.queries[0]
    assert first.id == "1"
    assert first.text.startswith("What problems and concerns are there in making up descriptive titles?")
    assert first.relevant["corpus/0028.md"] == 1
    assert suite.corpus == shared_fixtures / "ir" / "cisi" / "corpus"
    assert suite.corpus is not None
    assert len(list(suite.corpus.glob("*.md"))) == 1460


def test_load_suite_accepts_the_directory_or_its_qrels_file(shared_fixtures: Path) -> None:
    cisi = shared_fixtures / "ir" / "cisi"
    assert load_suite(cisi).queries == load_suite(cisi / "qrels.tsv").queries


def test_trec_suite_leaves_out_unjudged_and_non_relevant(tmp_path: Path) -> None:
    (tmp_path / "queries.jsonl").write_text(
        '{"id": "1", "text": "first"}\n\n{"id": 2, "text": "second"}\n{"id": "3", "text": "third"}\n', encoding="utf-8"
    )
    (tmp_path / "qrels.tsv").write_text("1 0 a.md 1\n1 0 b.md 0\n2\t0\tc.md\t2\n9 0 z.md 1\n", encoding="utf-8")

    suite = load_trec_suite(tmp_path)

    assert [(query.id, dict(query.relevant)) for query in suite.queries] == [("1", {"a.md": 1}), ("2", {"c.md": 2})]
    assert suite.corpus is None


@pytest.mark.parametrize(
    ("queries", "qrels", "message"),
    [
        ('{"id": "1"}\n', "1 0 a.md 1\n", 'non-empty "text"'),
        ("not json\n", "1 0 a.md 1\n", "not a JSON object"),
        ('["1", "text"]\n', "1 0 a.md 1\n", "expected an object"),
        ('{"id": "1", "text": "q"}\n', "1 0 a.md\n", "expected `query_id iteration uri grade`"),
        ('{"id": "1", "text": "q"}\n', "1 0 a.md yes\n", "is not an integer"),
        ('{"id": "1", "text": "q"}\n', "2 0 a.md 1\n", "no query in queries.jsonl has a relevant judgement"),
    ],
)
def test_trec_suite_errors_name_the_file_and_the_problem(
    tmp_path: Path, queries: str, qrels: str, message: str
) -> None:
    (tmp_path / "queries.jsonl").write_text(queries, encoding="utf-8")
    (tmp_path / "qrels.tsv").write_text(qrels, encoding="utf-8")
    with pytest.raises(SuiteError, match=message):
        load_trec_suite(tmp_path)


def test_trec_suite_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="cannot read suite file"):
        load_trec_suite(tmp_path)


def test_mapping_suite_accepts_one_uri_a_list_or_graded_uris(tmp_path: Path) -> None:
    data = {
        "corpus": "docs",
        "queries": [
            {"query": "rotate keys", "expected": "docs/keys.md"},
            {"id": "ops", "query": "restart", "expected": ["docs/ops.md", "docs/ops.md#3"]},
            {"query": "graded", "expected": {"docs/a.md": 2, "docs/b.md": 1}},
        ],
    }

    suite = suite_from_mapping(data, name="runbooks.yaml", base_dir=tmp_path)

    assert suite.name == "runbooks.yaml"
    assert suite.corpus == tmp_path / "docs"
    assert [query.id for query in suite.queries] == ["1", "ops", "3"]
    assert dict(suite.queries[0].relevant) == {"docs/keys.md": 1}
    assert dict(suite.queries[1].relevant) == {"docs/ops.md": 1, "docs/ops.md#3": 1}
    assert dict(suite.queries[2].relevant) == {"docs/a.md": 2, "docs/b.md": 1}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a mapping"),
        ({"queries": []}, "`queries` must be a non-empty list"),
        ({"queries": ["text"]}, "query 1: expected a mapping"),
        ({"queries": [{"query": " ", "expected": "a.md"}]}, "`query` must be non-empty"),
        ({"queries": [{"query": "q"}]}, "`expected` must be"),
        ({"queries": [{"query": "q", "expected": {"a.md": 0}}]}, "`expected` must be"),
        ({"queries": [{"query": "q", "expected": {"a.md": True}}]}, "`expected` must be"),
        ({"queries": [{"query": "q", "expected": "a.md"}], "corpus": 3}, "`corpus` must be a path"),
    ],
)
def test_mapping_suite_errors(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        suite_from_mapping(data, name="suite.yaml", base_dir=tmp_path)


def test_load_suite_reads_json_suites(tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"queries": [{"query": "q", "expected": "a.md"}]}), encoding="utf-8")
    suite = load_suite(path)
    assert suite.name == "suite.json"
    assert suite.base_dir == tmp_path


def test_load_suite_rejects_other_files(tmp_path: Path) -> None:
    path = tmp_path / "suite.txt"
    path.write_text("", encoding="utf-8")
    with pytest.raises(SuiteError, match="expected a TREC suite directory"):
        load_suite(path)


# --- the FTS5 BM25 floor ---


def test_baseline_ranks_matching_documents_and_neutralises_fts_syntax(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Backpressure\n\nThe buffer fills and the producer waits.\n", encoding="utf-8")
    (corpus / "b.md").write_text("# Retention\n\nOld messages are removed after a day.\n", encoding="utf-8")
    (corpus / "skip.json").write_text("{}", encoding="utf-8")
    baseline = Bm25Baseline()
    try:
        assert baseline.add_folder(corpus, base_dir=tmp_path) == 2
        assert baseline.search("what happens when the buffer fills?") == ["corpus/a.md"]
        assert baseline.search('messages removed NEAR(buffer "x) content: a*') == ["corpus/b.md", "corpus/a.md"]
        assert baseline.search("? !") == []
    finally:
        baseline.close()
