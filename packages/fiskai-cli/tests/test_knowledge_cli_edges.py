"""`fiskai knowledge` where a new user or a damaged store tests it: issue 9 items 3, 4.8 and 5."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fiskai_cli._root import cli


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cwd with a docs tree and no agent.yaml."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISKAI_STORE_DIR", raising=False)
    monkeypatch.delenv("FISKAI_CONFIG", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "design.md").write_text(
        "# Design\n\n## Backpressure\n\nWhen the buffer fills, producers slow down.\n", encoding="utf-8"
    )
    return tmp_path


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _db() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "knowledge" / "default" / "knowledge.db"


def test_indexing_dot_in_two_folders_keeps_both(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, text in (("A", "The zebra crossing is painted white."), ("B", "Yak shaving takes all afternoon.")):
        (workdir / name).mkdir()
        (workdir / name / "README.md").write_text(f"# {name}\n\n{text}\n", encoding="utf-8")

    monkeypatch.chdir(workdir / "A")
    first = _invoke("knowledge", "index", ".")
    monkeypatch.chdir(workdir / "B")
    second = _invoke("knowledge", "index", ".")
    found = _invoke("knowledge", "search", "zebra")
    shown = _invoke("knowledge", "show", "A/README.md#0")
    here = _invoke("knowledge", "show", "README.md#0")  # relative to the current folder, B

    assert first.stdout.startswith("indexed: added=1 updated=0")
    assert second.stdout.startswith("indexed: added=1 updated=0 skipped=0 removed=0")
    assert found.stdout.splitlines()[0] == "A/README.md#0"
    assert "zebra crossing" in shown.stdout
    assert "Yak shaving" in here.stdout


def test_top_k_out_of_range_is_refused_and_the_range_documented(workdir: Path) -> None:
    _invoke("knowledge", "index", "docs")

    high = _invoke("knowledge", "search", "-k", "50", "buffer")
    zero = _invoke("knowledge", "search", "-k", "0", "buffer")
    helped = _invoke("knowledge", "search", "--help")

    assert high.exit_code == zero.exit_code == 2
    assert "50 is not in the range 1<=x<=20" in high.stderr
    assert "0 is not in the range 1<=x<=20" in zero.stderr
    assert "1-20" in helped.stdout


def test_empty_and_wordless_queries_fail_clearly(workdir: Path) -> None:
    _invoke("knowledge", "index", "docs")

    empty = _invoke("knowledge", "search", "")
    wordless = _invoke("knowledge", "search", "a", "?")

    assert empty.exit_code == 2 and "QUERY is empty" in empty.stderr
    assert wordless.exit_code == 1
    assert "the query has no searchable terms" in wordless.stderr


def test_index_of_a_missing_path_names_it(workdir: Path) -> None:
    result = _invoke("knowledge", "index", "/nonexistent")

    assert result.exit_code == 2
    assert "'/nonexistent' does not exist" in result.stderr


def test_sources_show_when_a_file_was_indexed_not_its_mtime(workdir: Path) -> None:
    old = 978_307_200 * 10**9  # 2001-01-01
    os.utime(workdir / "docs" / "design.md", ns=(old, old))
    _invoke("knowledge", "index", "docs")

    table = _invoke("knowledge", "sources")
    rows = json.loads(_invoke("knowledge", "sources", "--format", "json").stdout)

    assert "2001-01" not in table.stdout
    assert rows[0]["modified"].startswith(("2000-12-31", "2001-01-01"))  # local time either side of UTC
    assert rows[0]["indexed"] is not None and not rows[0]["indexed"].startswith("2001")
    assert rows[0]["file"] == str((workdir / "docs" / "design.md").resolve())


def test_the_tier_line_stays_off_stdout(workdir: Path) -> None:
    runs = [
        _invoke("knowledge", "index", "docs"),
        _invoke("knowledge", "search", "buffer"),
        _invoke("knowledge", "stats"),
        _invoke("knowledge", "doctor"),
    ]
    as_json = json.loads(_invoke("knowledge", "stats", "--format", "json").stdout)

    assert all(r.exit_code == 0 for r in runs), [r.output for r in runs]
    assert not any("tier:" in r.stdout for r in runs)
    assert all("tier: lexical (FTS5) - no embeddings configured" in r.stderr for r in (runs[0], runs[1], runs[3]))
    assert as_json["tier"] == "lexical (FTS5) - no embeddings configured"


def test_show_of_an_oversized_ordinal_is_a_clear_error(workdir: Path) -> None:
    _invoke("knowledge", "index", "docs")

    result = _invoke("knowledge", "show", "x.md#99999999999999999999999")

    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert 'citation "x.md#99999999999999999999999" is malformed' in result.stderr


def test_a_zero_byte_index_file_is_not_a_traceback(workdir: Path) -> None:
    _db().parent.mkdir(parents=True)
    _db().write_bytes(b"")

    searched = _invoke("knowledge", "search", "buffer")
    doctor = _invoke("knowledge", "doctor")
    indexed = _invoke("knowledge", "index", "docs")

    assert searched.exit_code == 1 and isinstance(searched.exception, SystemExit)
    assert "has not been built yet" in searched.stderr
    assert doctor.exit_code == 1
    assert "[FAIL] Index readable" in doctor.stdout and "holds no index (0 bytes" in doctor.stdout
    assert indexed.exit_code == 0  # an empty file holds nothing to lose: the writer builds the index in it
    assert indexed.stdout.startswith("indexed: added=1")


def test_a_foreign_database_is_refused_without_a_traceback(workdir: Path) -> None:
    import sqlite3  # another program's database: not written through fiskai's own driver

    _db().parent.mkdir(parents=True)
    with contextlib.closing(sqlite3.connect(_db())) as foreign:
        foreign.execute("CREATE TABLE invoices(total)")
        foreign.commit()
    original = _db().read_bytes()

    searched = _invoke("knowledge", "search", "buffer")
    indexed = _invoke("knowledge", "index", "docs")
    doctor = _invoke("knowledge", "doctor")

    for result in (searched, indexed):
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
        assert "is not a fiskai knowledge index" in result.stderr
        assert "run 'fiskai knowledge reset --force' and index again" in result.stderr
    assert doctor.exit_code == 1 and "[FAIL] Index readable" in doctor.stdout
    assert _db().read_bytes() == original


def test_rm_of_an_unknown_path_fails(workdir: Path) -> None:
    _invoke("knowledge", "index", "docs")

    result = _invoke("knowledge", "rm", "docs/nope.md")

    assert result.exit_code == 1
    assert "not indexed: docs/nope.md" in result.stderr


@pytest.mark.parametrize(
    "command", ["index", "search", "show", "sources", "rm", "reset", "stats", "doctor", "watch", "context", "eval"]
)
def test_every_knowledge_subcommand_help_has_examples(command: str) -> None:
    result = _invoke("knowledge", command, "--help")

    assert result.exit_code == 0
    assert "Examples:" in result.stdout
    assert f"fiskai knowledge {command}" in result.stdout


def test_an_index_written_by_an_older_fiskai_keeps_its_documents_and_citations(workdir: Path) -> None:
    import shutil

    data = Path(__file__).parents[2] / "fiskai-rag" / "tests" / "data"
    _db().parent.mkdir(parents=True)
    shutil.copyfile(data / "store-v1" / "knowledge.db", _db())
    shutil.copytree(data / "pack" / "corpus", workdir / "corpus")

    before = _invoke("knowledge", "show", "corpus/glossary.md#1")
    listed = _invoke("knowledge", "sources")
    indexed = _invoke("knowledge", "index", "corpus")
    after = _invoke("knowledge", "show", "corpus/glossary.md#1")

    assert before.exit_code == 0 and before.stdout == after.stdout
    assert all(line.endswith("  -") for line in listed.stdout.splitlines()[1:])  # indexed before it was recorded
    # Same files, same citations; re-chunked once because the old store predates the current chunker.
    assert indexed.stdout.startswith("indexed: added=0 updated=8 skipped=0 removed=0")
    assert len(_invoke("knowledge", "sources").stdout.splitlines()) == 1 + 8
