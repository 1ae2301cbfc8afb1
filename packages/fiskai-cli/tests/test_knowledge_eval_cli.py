from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fiskai_cli._root import cli
from fiskai_cli.commands.knowledge_eval import eval_command
from fiskai_rag.testing import EmbeddingsServer


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """Three documents with disjoint vocabularies and a YAML suite over them."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keys.md").write_text(
        "# Keys\n\n## Rotation\n\nRotate the signing keys every ninety days with the rotate command.\n",
        encoding="utf-8",
    )
    (docs / "backup.md").write_text(
        "# Backup\n\nSnapshots are copied to the archive bucket nightly.\n", encoding="utf-8"
    )
    (docs / "tls.md").write_text("# Certificates\n\nRenew expiring certificates before they lapse.\n", encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(
        "corpus: docs\n"
        "queries:\n"
        "  - id: rotate\n"
        "    query: how do I rotate signing keys\n"
        "    expected: [docs/keys.md#0]\n"
        "  - id: archive\n"
        "    query: nightly snapshots archive\n"
        "    expected: docs/backup.md\n"
        "  - id: miss\n"
        "    query: renew certificates\n"
        "    expected: {docs/keys.md: 2}\n",
        encoding="utf-8",
    )
    return path


def _json(output: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(output)
    return document


def test_json_report_scores_each_query_and_the_baseline(suite: Path) -> None:
    result = CliRunner().invoke(eval_command, [str(suite), "--format", "json"])

    assert result.exit_code == 0, result.output
    report = _json(result.stdout)
    assert report["suite"] == "suite.yaml"
    assert report["queries"] == 3
    assert report["passed"] is True
    per_query = {row["id"]: row for row in report["per_query"]}
    # The first two queries find their one expected document at rank 1; the third expects a document
    # that does not contain its words, so nothing relevant is ranked.
    assert per_query["rotate"]["ndcg_at_10"] == 1.0
    assert per_query["archive"]["reciprocal_rank"] == 1.0
    assert per_query["miss"]["ndcg_at_10"] == 0.0
    ranking = report["ranking"]
    assert isinstance(ranking, dict)
    assert ranking["ndcg_at_10"] == pytest.approx(2 / 3, abs=1e-4)
    assert ranking["mrr_at_10"] == pytest.approx(2 / 3, abs=1e-4)
    baseline = report["baseline"]
    assert isinstance(baseline, dict)
    assert baseline["label"] == "FTS5 BM25, naive OR"


def test_table_lists_both_rankings(suite: Path) -> None:
    result = CliRunner().invoke(eval_command, [str(suite), "--per-query", "-k", "5"])

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "suite suite.yaml: 3 judged queries"
    assert "indexed 3 files into 3 chunks" in lines[1]
    assert any(line.startswith("fiskai knowledge") and "0.667" in line for line in lines)
    assert any(line.startswith("FTS5 BM25, naive OR") for line in lines)
    assert "recall@5" in result.stdout
    assert any(line.startswith("rotate ") and "1.000" in line for line in lines)


def test_missed_threshold_exits_one_and_names_the_figure(suite: Path) -> None:
    result = CliRunner().invoke(eval_command, [str(suite), "--min-ndcg", "0.9", "--min-mrr", "0.5"])

    assert result.exit_code == 1
    assert "threshold missed: nDCG@10 0.667 is below the required 0.900" in result.stderr
    assert "MRR@10" not in result.stderr


def test_met_thresholds_exit_zero(suite: Path) -> None:
    result = CliRunner().invoke(eval_command, [str(suite), "--min-ndcg", "0.6", "--min-recall", "0.6"])
    assert result.exit_code == 0, result.output


def test_given_store_is_indexed_once_and_reused(suite: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = CliRunner().invoke(eval_command, [str(suite), "--store", str(store), "--no-bm25"])
    assert first.exit_code == 0, first.output
    assert (store / "knowledge.db").is_file()

    again = CliRunner().invoke(
        eval_command, [str(suite), "--store", str(store), "--no-index", "--format", "json", "--no-bm25"]
    )

    assert again.exit_code == 0, again.output
    report = _json(again.stdout)
    assert report["baseline"] is None
    assert report["notes"] == []
    ranking = report["ranking"]
    assert isinstance(ranking, dict)
    assert ranking["ndcg_at_10"] == pytest.approx(2 / 3, abs=1e-4)


def test_suite_without_corpus_needs_a_store(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("queries:\n  - query: anything\n    expected: a.md\n", encoding="utf-8")

    result = CliRunner().invoke(eval_command, [str(path)])

    assert result.exit_code == 2
    assert "pass --store DIR" in result.output


def test_malformed_suite_is_reported_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("queries:\n  - query: [unclosed\n", encoding="utf-8")

    result = CliRunner().invoke(eval_command, [str(path)])

    assert result.exit_code == 1
    assert "not valid YAML" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.ranking
def test_cisi_scores_against_the_same_run_baseline(shared_fixtures: Path) -> None:
    result = CliRunner().invoke(eval_command, [str(shared_fixtures / "ir" / "cisi"), "--format", "json"])

    assert result.exit_code == 0, result.output
    report = _json(result.stdout)
    assert report["queries"] == 76
    baseline = report["baseline"]
    ranking = report["ranking"]
    assert isinstance(baseline, dict) and isinstance(ranking, dict)
    # The floor is deterministic: plain FTS5 BM25 over the 1,460 documents with a naive OR query.
    assert baseline["ndcg_at_10"] == pytest.approx(0.3691, abs=1e-4)
    assert baseline["mrr_at_10"] == pytest.approx(0.6025, abs=1e-4)
    assert 0.2 < ranking["ndcg_at_10"] <= 1.0


def test_reachable_as_fiskai_knowledge_eval(suite: Path) -> None:
    result = CliRunner().invoke(cli, ["knowledge", "eval", str(suite), "--format", "json", "--no-bm25"])

    assert result.exit_code == 0, result.output
    assert _json(result.stdout)["queries"] == 3


def test_hybrid_tier_through_a_real_embeddings_server(suite: Path) -> None:
    with EmbeddingsServer(use_static_model=False, dimension=32) as server:
        result = CliRunner().invoke(
            eval_command,
            [
                str(suite),
                "--embeddings-url",
                server.base_url,
                "--embeddings-model",
                server.model,
                "--format",
                "json",
            ],
        )
        requests = server.requests

    assert result.exit_code == 0, result.output
    report = _json(result.stdout)
    assert report["ranking"]["label"] == "fiskai knowledge, hybrid"
    assert "3 embeddings" in report["notes"][0]
    assert requests >= 1 + 3  # the dimension probe and the chunks at least, then one per query
    assert report["per_query"][0]["ndcg_at_10"] == 1.0


def test_embeddings_server_that_fails_stops_the_evaluation(suite: Path) -> None:
    with EmbeddingsServer(use_static_model=False, dimension=32) as server:
        server.status = 400
        result = CliRunner().invoke(
            eval_command, [str(suite), "--embeddings-url", server.base_url, "--embeddings-model", server.model]
        )

    assert result.exit_code == 1
    assert "Error:" in result.output
    assert "Traceback" not in result.output


def test_embeddings_options_go_together(suite: Path) -> None:
    result = CliRunner().invoke(eval_command, [str(suite), "--embeddings-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 2
    assert "--embeddings-url and --embeddings-model go together" in result.output


def _evidence_suite(tmp_path: Path, suite: Path, excerpt: str) -> Path:
    path = tmp_path / "evidence.yaml"
    path.write_text(
        "corpus: docs\n"
        "queries:\n"
        "  - id: rotate\n"
        "    query: how do I rotate signing keys\n"
        "    expected: docs/keys.md\n"
        f"    expected_excerpts: {{docs/keys.md: [{excerpt}]}}\n"
        "    expected_reads: {docs/keys.md: [rotate command]}\n",
        encoding="utf-8",
    )
    return path


def test_evidence_checks_pass_when_the_pack_carries_the_expected_words(tmp_path: Path, suite: Path) -> None:
    path = _evidence_suite(tmp_path, suite, "Ninety Days")
    result = CliRunner().invoke(eval_command, [str(path), "--format", "json", "--no-bm25"])
    assert result.exit_code == 0, result.output
    evidence = _json(result.stdout)["evidence"]
    assert evidence == {"checked": 1, "passed": 1, "budget": 6000, "failures": []}


def test_high_recall_with_missing_evidence_still_fails(tmp_path: Path, suite: Path) -> None:
    path = _evidence_suite(tmp_path, suite, "quarterly")
    result = CliRunner().invoke(eval_command, [str(path), "--no-bm25"])
    assert result.exit_code == 1
    assert "evidence: 0 of 1 queries delivered their expected excerpts and reads" in result.stdout
    assert "evidence missing: query rotate: docs/keys.md: delivered excerpt lacks ['quarterly']" in result.stderr
    assert "threshold missed: evidence: 1 of 1 queries lacked it" in result.stderr


def test_evidence_for_a_uri_not_listed_in_expected_is_a_suite_error(tmp_path: Path, suite: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "corpus: docs\nqueries:\n  - query: rotate keys\n    expected: docs/keys.md\n"
        "    expected_reads: {docs/tls.md: [renew]}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(eval_command, [str(path)])
    assert result.exit_code == 1
    assert "`expected_reads` names 'docs/tls.md', which is not in `expected`" in result.stderr


@pytest.mark.parametrize("spelling", ["absolute", "relative"])
def test_corpus_outside_the_suite_folder_scores_both_rankings(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    # The suite lives in one folder and --corpus names another (as with the shared data), once absolute
    # and once relative to the working directory: the BM25 floor used to die on `relative_to`.
    suites = tmp_path / "suites"
    suites.mkdir()
    moved = suites / "suite.yaml"
    moved.write_text(suite.read_text(encoding="utf-8").replace("corpus: docs\n", "corpus: nowhere\n"), encoding="utf-8")
    monkeypatch.chdir(suites)
    corpus = str(tmp_path / "docs") if spelling == "absolute" else "../docs"

    result = CliRunner().invoke(eval_command, [str(moved), "--corpus", corpus, "--format", "json"])

    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    report = _json(result.stdout)
    baseline = report["baseline"]
    assert isinstance(baseline, dict)
    # Its keys still match the suite's `docs/...` relpaths: the document-level floor finds `docs/backup.md`
    # first (the other two queries expect a chunk, or a document without their words), as it does in place.
    in_place = _json(CliRunner().invoke(eval_command, [str(suite), "--format", "json"]).stdout)
    assert baseline["mrr_at_10"] == pytest.approx(1 / 3, abs=1e-4)
    assert baseline == {**in_place["baseline"], "search_ms_median": baseline["search_ms_median"]}
    assert report["ranking"]["mrr_at_10"] == pytest.approx(2 / 3, abs=1e-4)
