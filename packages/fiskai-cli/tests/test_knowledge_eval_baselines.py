"""CI holds retrieval to its stored figures: the IR collections and the influxdata tuning questions.

The held-out influxdata half is deliberately not run here: it is scored by hand, once per kept change.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fiskai_cli.commands.knowledge_eval import eval_command

EVALS = Path(__file__).resolve().parents[2] / "fiskai-rag" / "evals"


@pytest.mark.parametrize("collection", ["cisi", "cacm", "med"])
def test_an_ir_collection_holds_its_baseline(collection: str, shared_fixtures: Path) -> None:
    baseline = EVALS / "baselines" / f"{collection}.json"

    result = CliRunner().invoke(eval_command, [str(shared_fixtures / "ir" / collection), "--baseline", str(baseline)])

    assert result.exit_code == 0, result.output


def test_the_influxdata_tuning_questions_hold_their_baseline(shared_fixtures: Path) -> None:
    corpus = shared_fixtures / "corpus" / "influxdata-docs"
    suite = EVALS / "influxdata-tuning.yaml"
    baseline = EVALS / "baselines" / "influxdata-tuning.json"

    result = CliRunner().invoke(
        eval_command, [str(suite), "--corpus", str(corpus), "--no-bm25", "--baseline", str(baseline)]
    )

    assert result.exit_code == 0, result.output
    assert "answers (fiskai knowledge)" in result.output
