from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fiskai_cli._root import cli
from fiskai_cli.commands.knowledge_vectors import NO_MODEL
from fiskai_rag.testing import EmbeddingsServer


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
    (docs / "install.md").write_text("# Install\n\nRun the installer with sudo.\n", encoding="utf-8")
    return tmp_path


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _json(result: Result) -> Any:
    return json.loads(result.stdout)


def test_index_search_show_sources_without_a_config(workdir: Path) -> None:
    indexed = _run("knowledge", "index", "docs")
    searched = _run("knowledge", "search", "buffer", "fills")
    shown = _run("knowledge", "show", "docs/design.md#0")
    sources = _run("knowledge", "sources")

    assert indexed.exit_code == 0, indexed.output
    assert indexed.stdout.splitlines() == ["indexed: added=2 updated=0 skipped=0 removed=0 (2 files, 2 chunks)"]
    assert indexed.stderr.splitlines() == ["tier: lexical (FTS5) - no embeddings configured", NO_MODEL]
    assert searched.stdout.splitlines() == [
        "docs/design.md#0",
        "  Section  Design > Backpressure",
        "  Chunk    When the buffer fills, producers slow down.",
    ]
    assert shown.stdout == "# Design > Backpressure\n\nWhen the buffer fills, producers slow down.\n"
    assert [line.split()[0] for line in sources.stdout.splitlines()] == ["Path", "docs/design.md", "docs/install.md"]
    state = Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "knowledge" / "default" / "knowledge.db"
    assert state.is_file()


def test_json_output_of_search_sources_and_stats(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    search = _json(_run("knowledge", "search", "--format", "json", "installer"))
    sources = _json(_run("knowledge", "sources", "--format", "json"))
    stats = _json(_run("knowledge", "stats", "--format", "json"))

    assert search["status"] == "ok"
    assert [(r["citation"], r["section"]) for r in search["results"]] == [("docs/install.md#0", "Install")]
    assert [s["path"] for s in sources] == ["docs/design.md", "docs/install.md"]
    assert (stats["documents"], stats["chunks"], stats["vectors"], stats["built"]) == (2, 2, 0, True)


def test_soft_messages_before_an_index_exists(workdir: Path) -> None:
    search = CliRunner().invoke(cli, ["knowledge", "search", "anything"])
    as_json = CliRunner().invoke(cli, ["knowledge", "search", "--format", "json", "anything"])
    rm = CliRunner().invoke(cli, ["knowledge", "rm", "docs/design.md"])
    reset = _run("knowledge", "reset")
    sources = _run("knowledge", "sources")
    db = Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "knowledge" / "default" / "knowledge.db"

    assert (search.exit_code, search.stdout) == (1, "")
    assert (
        f"the knowledge index has not been built yet (no index file at {db}); run: fiskai knowledge index PATH"
        in search.stderr
    )
    assert as_json.exit_code == 1
    assert _json(as_json) == {
        "tier": "lexical (FTS5) - no embeddings configured",
        "status": "index_not_built",
        "note": "the knowledge index has not been built yet",
        "results": [],
    }
    assert rm.exit_code == 1 and "nothing to remove: the knowledge index has not been built yet" in rm.stderr
    assert (reset.stdout, reset.stderr.strip()) == ("", "no knowledge index to reset")
    assert (sources.stdout, sources.stderr.strip()) == ("", "no indexed files")


def test_index_without_paths_or_config_says_what_to_do(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["knowledge", "index"])

    assert result.exit_code == 1
    assert "no paths given and knowledge.paths is empty - pass a path or set knowledge.paths" in result.output


def test_rm_and_reset_report_what_they_removed(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    rm = CliRunner().invoke(cli, ["knowledge", "rm", "docs/install.md", "docs/missing.md"])
    refused = CliRunner().invoke(cli, ["knowledge", "reset"])
    reset = _run("knowledge", "reset", "--force")

    assert rm.exit_code == 1
    assert rm.stdout.splitlines() == ["removed docs/install.md"]
    assert "not indexed: docs/missing.md (removed 1 of 2)" in rm.stderr
    assert refused.exit_code == 1
    assert "knowledge reset would delete 1 documents and 1 chunks from" in refused.output
    assert "re-run with --force to confirm" in refused.output
    assert reset.stdout.startswith("reset: removed 1 documents and 1 chunks from ")


def test_bad_citation_is_an_error_naming_the_format(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    result = CliRunner().invoke(cli, ["knowledge", "show", "docs/design.md"])

    assert result.exit_code == 1
    assert 'citation "docs/design.md" is malformed; expected <path>#<ordinal>' in result.output


def test_store_dir_is_the_base_for_the_default_index(workdir: Path) -> None:
    base = workdir / "state"

    _run("knowledge", "--store-dir", str(base), "index", "docs")

    assert (base / "knowledge" / "default" / "knowledge.db").is_file()


def test_a_config_supplies_paths_and_the_store_directory(workdir: Path) -> None:
    (workdir / "agent.yaml").write_text(
        "identity: demo\nharness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n    top_k: 1\n", encoding="utf-8"
    )

    indexed = _run("knowledge", "index")
    (workdir / "docs" / "install.md").unlink()
    reconciled = _run("knowledge", "index")
    searched = _json(_run("knowledge", "search", "--format", "json", "design", "installer"))

    assert indexed.stdout.splitlines()[-1] == "indexed: added=2 updated=0 skipped=0 removed=0 (2 files, 2 chunks)"
    assert reconciled.stdout.splitlines()[-1] == "indexed: added=0 updated=0 skipped=1 removed=1 (1 files, 1 chunks)"
    assert (Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "knowledge" / "demo" / "knowledge.db").is_file()
    assert not (workdir / "knowledge").exists()  # no state under the working directory
    assert len(searched["results"]) == 1  # the configured top_k


def test_relative_config_paths_resolve_against_the_config_folder(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workdir / "agent.yaml").write_text(
        "identity: demo\nharness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n    directory: state/kb\n",
        encoding="utf-8",
    )
    elsewhere = workdir / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    indexed = _run("-c", "../agent.yaml", "knowledge", "index")
    found = _run("-c", "../agent.yaml", "knowledge", "search", "installer")

    assert indexed.stdout.startswith("indexed: added=2")
    assert (workdir / "state" / "kb" / "knowledge.db").is_file()
    assert found.stdout.splitlines()[0] == "docs/install.md#0"
    assert list(elsewhere.iterdir()) == []


def test_a_config_without_knowledge_enabled_is_refused(workdir: Path) -> None:
    (workdir / "agent.yaml").write_text("identity: demo\n", encoding="utf-8")

    result = CliRunner().invoke(cli, ["knowledge", "search", "x"])

    assert result.exit_code == 1
    assert (
        "knowledge is not enabled in \"agent.yaml\"; add a harness.knowledge block with 'enabled: true'"
        in result.output
    )


def test_an_explicit_missing_config_is_an_error(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["-c", "nope.yaml", "knowledge", "search", "x"])

    assert result.exit_code == 1
    assert 'reading config "nope.yaml": the file does not exist' in result.output


def test_doctor_passes_on_a_healthy_store_and_fails_on_a_damaged_one(workdir: Path) -> None:
    _run("knowledge", "index", "docs")
    healthy = _run("knowledge", "doctor")
    db = Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "knowledge" / "default" / "knowledge.db"
    db.write_bytes(b"garbage" * 1000)

    damaged = CliRunner().invoke(cli, ["knowledge", "doctor"])
    repaired = _run("knowledge", "reset", "--force")

    assert healthy.exit_code == 0
    assert "  [ ok ] WAL journal mode: journal_mode=wal" in healthy.stdout.splitlines()
    assert damaged.exit_code == 1
    assert "[FAIL] Index readable" in damaged.output
    assert "knowledge doctor found problems that must be fixed" in damaged.output
    assert repaired.exit_code == 0


@pytest.fixture
def embeddings() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as server:
        yield server


def test_the_vector_tier_from_config_estimates_then_embeds(workdir: Path, embeddings: EmbeddingsServer) -> None:
    (workdir / "agent.yaml").write_text(
        textwrap.dedent(
            f"""
            identity: demo
            harness:
              knowledge:
                enabled: true
                paths: [docs]
                embeddings:
                  base_url: {embeddings.base_url}
                  model: {embeddings.model}
                  timeout: 10s
            """
        ),
        encoding="utf-8",
    )

    indexed = _run("knowledge", "index")
    searched = _json(_run("knowledge", "search", "--format", "json", "producers"))
    stats = _json(_run("knowledge", "stats", "--format", "json"))

    assert indexed.exit_code == 0, indexed.output
    assert "first full build: about to embed 2 chunks across 2 files; run with --dry-run to preview" in indexed.stderr
    assert (
        indexed.stdout.splitlines()[-1]
        == "indexed: added=2 updated=0 skipped=0 removed=0 (2 files, 2 chunks, 2 embeddings)"
    )
    assert searched["tier"].startswith(f"hybrid (FTS5 + vectors, RRF) - model={embeddings.model} dim=")
    assert searched["results"][0]["citation"] == "docs/design.md#0"
    assert stats["vectors"] == 2


def test_eval_is_a_knowledge_subcommand(workdir: Path) -> None:
    result = _run("knowledge", "eval", "--help")

    assert result.exit_code == 0
    assert "SUITE" in result.stdout


@pytest.fixture
def fiskai_child(workdir: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Starts `fiskai` in `workdir` as a child in its own session; after the test, pass or fail, a child
    still running is killed with its whole process group, and every child is reaped."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from fiskai_cli import main; main()", *args],
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)


def test_search_imports_no_pydantic_rich_or_httpx(workdir: Path) -> None:
    _run("knowledge", "index", "docs")
    probe = textwrap.dedent(
        """
        import sys
        from fiskai_cli._root import cli
        try:
            cli.main(["knowledge", "search", "buffer"], standalone_mode=False)
        finally:
            heavy = sorted(m for m in ("pydantic", "rich", "httpx", "yaml", "markdown_it") if m in sys.modules)
            print("HEAVY", heavy)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=workdir, capture_output=True, text=True, check=True, env=os.environ.copy()
    ).stdout

    assert "docs/design.md#0" in out
    assert out.strip().splitlines()[-1] == "HEAVY []"


def test_watch_indexes_then_picks_up_added_and_removed_files(
    workdir: Path, fiskai_child: Callable[..., subprocess.Popen[str]]
) -> None:
    watcher = fiskai_child("knowledge", "watch", "--debounce", "0.1", "docs")
    assert watcher.stdout is not None
    lines: list[str] = []
    try:
        while not (line := watcher.stdout.readline()).startswith("watching"):
            assert line, lines
            lines.append(line)
        assert any("] indexed: added=2" in line for line in lines), lines
        (workdir / "docs" / "new.md").write_text("# New\n\nfresh words\n", encoding="utf-8")
        while "indexed: added=1" not in (line := watcher.stdout.readline()):
            assert line, lines
            lines.append(line)
        (workdir / "docs" / "install.md").unlink()
        while "removed=1" not in (line := watcher.stdout.readline()):
            assert line, lines
            lines.append(line)
    finally:
        watcher.send_signal(signal.SIGINT)
        out, _ = watcher.communicate(timeout=30)

    assert "stopped watching" in out
    assert any("change detected in 1 file(s); reindexing:" in line for line in lines)


def test_watch_refuses_a_debounce_under_100ms(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["knowledge", "watch", "--debounce", "0.05", "docs"])

    assert result.exit_code == 1
    assert "debounce must be at least 100ms" in result.output


def test_watch_warns_about_missing_paths_and_fails_only_when_none_exist(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["knowledge", "watch", "nowhere", "gone"])

    assert result.exit_code == 1
    assert 'skipping missing path "nowhere"' in result.stderr
    assert 'skipping missing path "gone"' in result.stderr
    assert "none of the configured knowledge paths exist" in result.stderr


def test_a_second_writer_is_told_which_process_holds_the_index(workdir: Path) -> None:
    store_dir = Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "knowledge" / "default"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from fiskai_rag import open_store\n"
            "s = open_store(sys.argv[1], read_only=False); print('locked', flush=True); sys.stdin.readline()",
            str(store_dir),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        result = CliRunner().invoke(cli, ["knowledge", "index", "docs"])
    finally:
        holder.communicate("\n", timeout=30)

    assert result.exit_code == 1
    assert f"index is being written by process {holder.pid}" in result.output


def test_search_names_the_other_locations_of_a_copied_section(workdir: Path) -> None:
    page = "# Limits\n\n## Series\n\nA database holds at most one million [series]({link}) by default.\n"
    for tree in ("v1", "v2", "cloud"):
        (workdir / "docs" / tree).mkdir()
        (workdir / "docs" / tree / "limits.md").write_text(page.format(link=f"/{tree}/series/"), encoding="utf-8")
    _run("knowledge", "index", "docs")

    text = _run("knowledge", "search", "series", "database")
    data = _json(_run("knowledge", "search", "--format", "json", "series", "database"))

    assert text.stdout.splitlines() == [
        "docs/cloud/limits.md#0",
        "  Section  Limits > Series",
        "  Also at  docs/v1/limits.md#0, docs/v2/limits.md#0",
        "  Chunk    A database holds at most one million [series](/cloud/series/) by default.",
    ]
    assert [r["citation"] for r in data["results"]] == ["docs/cloud/limits.md#0"]
    assert data["results"][0]["also"] == ["docs/v1/limits.md#0", "docs/v2/limits.md#0"]
    assert data["results"][0]["also_total"] == 2
