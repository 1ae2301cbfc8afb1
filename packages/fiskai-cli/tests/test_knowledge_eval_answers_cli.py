"""`fiskai knowledge eval`: per-kind answer rates, and holding a run to a stored baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fiskai_cli.commands.knowledge_eval import eval_command


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """Three small documents and four questions of three kinds, one with an answer no page holds."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keys.md").write_text(
        "# Keys\n\n## Rotation\n\nRotate the signing keys every ninety days with the rotate command.\n", "utf-8"
    )
    (docs / "backup.md").write_text("# Backup\n\nSnapshots are copied to the archive bucket nightly.\n", "utf-8")
    (docs / "tls.md").write_text("# Certificates\n\nRenew expiring certificates before they lapse.\n", "utf-8")
    path = tmp_path / "questions.yaml"
    path.write_text(
        "corpus: docs\n"
        "queries:\n"
        + "".join(
            f"  - id: {qid}\n    kind: {kind}\n    query: {query}\n    expected: {doc}\n    answers: {answers}\n"
            for qid, kind, query, doc, answers in (
                ("k1", "keyword", "rotate signing keys", "docs/keys.md", "[every ninety days]"),
                (
                    "k2",
                    "keyword",
                    "archive snapshots",
                    "docs/backup.md",
                    "[copied to the archive bucket nightly, nope]",
                ),
                ("c1", "conversational", "how often do backups run", "docs/backup.md", "[hourly on weekdays]"),
                ("i1", "identifier", "renew certificates", "docs/tls.md", "[RENEW EXPIRING]"),
            )
        ),
        encoding="utf-8",
    )
    return path


def _eval(*args: str) -> Result:
    return CliRunner().invoke(eval_command, [*args, "--no-bm25"])


def _json(result: Result) -> Any:
    return json.loads(result.stdout)


def test_answer_rates_are_reported_per_kind(suite: Path) -> None:
    result = _eval(str(suite), "--format", "json")

    assert result.exit_code == 0, result.output
    rows = {row["kind"]: row for row in _json(result)["answers"]}
    assert rows["keyword"] == {"kind": "keyword", "questions": 2, "in_top_5": 1.0, "in_pack_1500": 1.0}
    assert rows["conversational"]["in_top_5"] == 0.0  # no page says "hourly on weekdays"
    assert rows["identifier"]["in_top_5"] == 1.0  # matching ignores case
    assert rows["all"] == {"kind": "all", "questions": 4, "in_top_5": 0.75, "in_pack_1500": 0.75}


def test_the_table_lists_each_kind_and_each_question(suite: Path) -> None:
    result = _eval(str(suite), "--per-query", "--answer-top", "3", "--answer-budget", "800")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(line.split() == ["conversational", "1", "0.000", "0.000"] for line in lines)
    assert any(line.split() == ["all", "4", "0.750", "0.750"] for line in lines)
    assert "top 3 hits" in result.stdout
    assert "pack @800" in result.stdout
    assert any(line.split() == ["c1", "conversational", "-", "no"] for line in lines)
    # Under the miss, the hits that came instead, so a reader can judge them; none under an answered one.
    missed = next(n for n, line in enumerate(lines) if line.split() == ["c1", "conversational", "-", "no"])
    assert lines[missed + 1].split()[:2] == ["1.", "docs/backup.md#0"]
    answered = next(n for n, line in enumerate(lines) if line.split() == ["k1", "keyword", "1", "yes"])
    assert lines[answered + 1].split()[:2] == ["k2", "keyword"]


def test_json_lists_each_question_with_the_hits_it_got(suite: Path) -> None:
    result = _eval(str(suite), "--format", "json", "--answer-top", "2")

    assert result.exit_code == 0, result.output
    checks = {check["id"]: check for check in _json(result)["answer_checks"]}
    assert set(checks) == {"k1", "k2", "c1", "i1"}
    assert checks["k1"]["hit_rank"] == 1
    assert checks["k1"]["in_pack"] is True
    assert checks["k1"]["returned"][0] == {"citation": "docs/keys.md#0", "heading": "Keys > Rotation"}
    assert checks["c1"] == {
        "id": "c1",
        "kind": "conversational",
        "hit_rank": None,
        "in_pack": False,
        "returned": checks["c1"]["returned"],
    }
    assert [hit["citation"] for hit in checks["c1"]["returned"]][:1] == ["docs/backup.md#0"]
    assert all(len(check["returned"]) <= 2 for check in checks.values())


def test_a_run_is_held_to_its_saved_baseline(suite: Path, tmp_path: Path) -> None:
    stored = tmp_path / "baseline.json"

    saved = _eval(str(suite), "--save-baseline", str(stored))
    same = _eval(str(suite), "--baseline", str(stored))
    figures = json.loads(stored.read_text(encoding="utf-8"))
    figures["figures"]["answers.conversational.in_top_5"] = 1.0
    figures["figures"]["answers.paraphrase.in_top_5"] = 0.5
    stored.write_text(json.dumps(figures), encoding="utf-8")
    worse = _eval(str(suite), "--baseline", str(stored))

    assert saved.exit_code == 0, saved.output
    assert figures["suite"] == "questions.yaml"
    assert figures["figures"]["answers.all.in_pack_1500"] == 0.75
    assert same.exit_code == 0, same.output
    assert worse.exit_code == 1
    assert "answers.conversational.in_top_5 0.000 is below the baseline's 1.000 (tolerance 0.010)" in worse.stderr
    assert "answers.paraphrase.in_top_5 is in the baseline" in worse.stderr


def test_the_tolerance_forgives_a_small_drop(suite: Path, tmp_path: Path) -> None:
    stored = tmp_path / "baseline.json"
    _eval(str(suite), "--save-baseline", str(stored))
    figures = json.loads(stored.read_text(encoding="utf-8"))
    figures["figures"]["answers.all.in_top_5"] = 0.8
    stored.write_text(json.dumps(figures), encoding="utf-8")

    strict = _eval(str(suite), "--baseline", str(stored))
    lenient = _eval(str(suite), "--baseline", str(stored), "--tolerance", "0.1")

    assert strict.exit_code == 1
    assert lenient.exit_code == 0, lenient.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"format": 1, "suite": "questions.yaml", "figures": {"ndcg_at_10": "high"}}', "is not a knowledge eval"),
        ('{"format": 1, "suite": "cisi", "figures": {}}', "was saved for the suite 'cisi'"),
    ],
)
def test_a_bad_baseline_is_one_line_naming_the_fix(suite: Path, tmp_path: Path, content: str, message: str) -> None:
    stored = tmp_path / "baseline.json"
    stored.write_text(content, encoding="utf-8")

    result = _eval(str(suite), "--baseline", str(stored))

    assert result.exit_code == 1
    assert message in result.output
    assert "--save-baseline" in result.output
    assert "Traceback" not in result.output


def test_answers_must_be_a_list_of_text(tmp_path: Path, suite: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("corpus: docs\nqueries:\n  - {query: keys, expected: docs/keys.md, answers: [1]}\n", "utf-8")

    result = _eval(str(bad))

    assert result.exit_code == 1
    assert "`answers` must be a non-empty list of non-empty text fragments" in result.output


def test_the_progress_bar_changes_no_figure(suite: Path) -> None:
    drawn = _eval(str(suite), "--format", "json", "--progress")
    plain = _eval(str(suite), "--format", "json", "--no-progress")

    assert drawn.exit_code == plain.exit_code == 0, drawn.output
    assert _json(drawn)["answers"] == _json(plain)["answers"]
    assert _json(drawn)["ranking"]["ndcg_at_10"] == _json(plain)["ranking"]["ndcg_at_10"]
