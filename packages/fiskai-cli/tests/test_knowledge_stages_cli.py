"""`--without-stage NAME` switches a search ranking stage off in search, context and eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fiskai_cli._root import cli

_FILLER = "Words about other things fill this paragraph so that the pages are not too short to rank. " * 3


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two pages holding "sparse" and "matrices" once each: BM25 prefers the shorter, scattered one."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISKAI_STORE_DIR", raising=False)
    monkeypatch.delenv("FISKAI_CONFIG", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(6):
        (docs / f"other-{n}.md").write_text(f"# Other {n}\n\n{_FILLER}\n", encoding="utf-8")
    (docs / "a-scattered.md").write_text(
        f"# Notes\n\nA sparse index is kept. {_FILLER}\nThe matrices are stored apart.\n", encoding="utf-8"
    )
    (docs / "b-together.md").write_text(
        f"# Notes\n\nThe sparse matrices are stored apart. {_FILLER} It is kept in two files.\n", encoding="utf-8"
    )
    assert _run("knowledge", "index", "docs").exit_code == 0
    return tmp_path


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _citations(*args: str) -> list[str]:
    result = _run("knowledge", "search", "--format", "json", "-k", "2", *args)
    assert result.exit_code == 0, result.output
    return [hit["citation"] for hit in json.loads(result.stdout)["results"]]


def test_search_without_proximity_keeps_the_bm25_order(workdir: Path) -> None:
    assert _citations("sparse", "matrices") == ["docs/b-together.md#0", "docs/a-scattered.md#0"]
    assert _citations("--without-stage", "proximity", "sparse", "matrices") == [
        "docs/a-scattered.md#0",
        "docs/b-together.md#0",
    ]


def test_context_without_proximity_leads_with_the_other_page(workdir: Path) -> None:
    on = _run("knowledge", "context", "--budget", "400", "--format", "json", "sparse matrices")
    off = _run(
        "knowledge", "context", "--budget", "400", "--format", "json", "--without-stage", "proximity", "sparse matrices"
    )

    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    assert json.loads(on.stdout)["items"][0]["citation"] == "docs/b-together.md#0"
    assert json.loads(off.stdout)["items"][0]["citation"] == "docs/a-scattered.md#0"


def test_eval_says_which_stages_it_switched_off(workdir: Path) -> None:
    suite = workdir / "suite.yaml"
    suite.write_text(
        "corpus: docs\nqueries:\n  - id: q\n    query: sparse matrices\n    expected: [docs/b-together.md]\n",
        encoding="utf-8",
    )

    on = _run("knowledge", "eval", str(suite), "--format", "json", "--no-bm25")
    off = _run("knowledge", "eval", str(suite), "--format", "json", "--no-bm25", "--without-stage", "proximity")

    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    assert json.loads(on.stdout)["ranking"]["mrr_at_10"] == 1.0
    assert json.loads(off.stdout)["ranking"]["mrr_at_10"] == 0.5
    assert "search stages switched off: proximity" in json.loads(off.stdout)["notes"]


def test_an_unknown_stage_is_one_line_naming_the_stages(workdir: Path) -> None:
    result = _run("knowledge", "search", "--without-stage", "proximty", "sparse")

    assert result.exit_code == 2
    assert "Invalid value for '--without-stage': 'proximty' is not one of 'candidates', 'bursty'" in result.output
    assert "Traceback" not in result.output
