"""CI holds retrieval to its stored figures: the IR collections and the influxdata tuning questions.

The held-out influxdata half is deliberately not run here: it is scored by hand, once per kept change.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from fiskai_cli.commands.knowledge_eval import eval_command

EVALS = Path(__file__).resolve().parents[2] / "fiskai-rag" / "evals"

pytestmark = pytest.mark.ranking  # a ranking baseline: CI runs these in their own step (pytest -m ranking)


@pytest.mark.parametrize("collection", ["cisi", "cacm", "med"])
def test_an_ir_collection_holds_its_baseline(collection: str, shared_fixtures: Path) -> None:
    baseline = EVALS / "baselines" / f"{collection}.json"

    result = CliRunner().invoke(eval_command, [str(shared_fixtures / "ir" / collection), "--baseline", str(baseline)])

    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("suite_name", ["influxdata-tuning", "influxdata-tuning-pooled"])
def test_the_influxdata_tuning_questions_hold_their_baseline(suite_name: str, shared_fixtures: Path) -> None:
    # Both judgments of the tuning half: the original answers, and the pooled ones (evals/judgments/).
    corpus = shared_fixtures / "corpus" / "influxdata-docs"
    suite = EVALS / f"{suite_name}.yaml"
    baseline = EVALS / "baselines" / f"{suite_name}.json"

    result = CliRunner().invoke(
        eval_command, [str(suite), "--corpus", str(corpus), "--no-bm25", "--baseline", str(baseline)]
    )

    assert result.exit_code == 0, result.output
    assert "answers (fiskai knowledge)" in result.output


@pytest.mark.skipif(
    not os.environ.get("FISKAI_TEST_MINILM_DIR"),
    reason="real all-MiniLM-L6-v2 not present (FISKAI_TEST_MINILM_DIR; .ci/run fetches it from PyPI)",
)
def test_med_with_the_contextual_model_holds_its_baseline(shared_fixtures: Path) -> None:
    # The in-process contextual model end to end: index MED's 1,235 chunks with it (about 90 s on two
    # cores), then the fused hybrid ranking must keep its figures (RRF: 0.789 against 0.731 lexical).
    baseline = EVALS / "baselines" / "med-minilm.json"
    model = os.environ["FISKAI_TEST_MINILM_DIR"]

    result = CliRunner().invoke(
        eval_command, [str(shared_fixtures / "ir" / "med"), "--model", model, "--baseline", str(baseline)]
    )

    assert result.exit_code == 0, result.output
    assert "fiskai knowledge, hybrid" in result.output
