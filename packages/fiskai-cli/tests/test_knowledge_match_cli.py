"""`fiskai knowledge match` (aliases `enumerate`, `which`): the complete set of matching documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fiskai_cli._root import cli


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISKAI_STORE_DIR", raising=False)
    monkeypatch.delenv("FISKAI_CONFIG", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(12):
        (docs / f"page-{n:02d}.md").write_text(f"# Page {n}\n\nEvery page names the quorum.\n", encoding="utf-8")
    (docs / "draft.md").write_text("# Draft\n\nA quorum draft.\n", encoding="utf-8")
    return tmp_path


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_match_lists_every_document_and_its_aliases_agree(workdir: Path) -> None:
    assert _run("knowledge", "index", "docs").exit_code == 0
    listed = _run("knowledge", "match", "quorum")
    assert listed.exit_code == 0, listed.output
    assert len(listed.stdout.splitlines()) == 13  # more than any top-k search returns
    assert listed.stderr.strip() == "13 of 13 documents match"
    for alias in ("enumerate", "which"):
        assert _run("knowledge", alias, "quorum").stdout == listed.stdout
    excluded = json.loads(_run("knowledge", "match", "quorum -draft", "--limit", "5", "--format", "json").stdout)
    assert (excluded["matched"], excluded["truncated"], len(excluded["documents"])) == (12, True, 5)
    assert all(doc["path"] != "docs/draft.md" for doc in excluded["documents"])


def test_nothing_to_match_is_an_error_naming_why(workdir: Path) -> None:
    missing = _run("knowledge", "match", "quorum")
    assert missing.exit_code == 1 and "fiskai knowledge index" in missing.output
    assert _run("knowledge", "index", "docs").exit_code == 0
    empty = _run("knowledge", "match", "--", "-quorum")
    assert empty.exit_code == 1 and "the query has no word to match" in empty.output
    none = _run("knowledge", "match", "zebra")
    assert none.exit_code == 0 and none.stdout == "" and "0 of 13 documents match" in none.stderr
