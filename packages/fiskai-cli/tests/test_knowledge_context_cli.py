from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fiskai_cli._root import cli
from fiskai_rag.pack._render import TRUST_NOTICE


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cwd with a small docs tree (one dated file) and no agent.yaml."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISKAI_STORE_DIR", raising=False)
    monkeypatch.delenv("FISKAI_CONFIG", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "design.md").write_text(
        "---\ndate: 2026-11-20\n---\n# Design\n\n## Backpressure\n\nWhen the buffer fills, producers slow down.\n",
        encoding="utf-8",
    )
    (docs / "install.md").write_text("# Install\n\nRun the installer with sudo.\n", encoding="utf-8")
    (docs / "ops.md").write_text("# Operations\n\nRestart the broker after an install.\n", encoding="utf-8")
    for topic in ("billing", "holidays", "office", "travel", "hiring"):
        # Unrelated pages, so that the query words are rare, as in a real knowledge base.
        (docs / f"{topic}.md").write_text(f"# {topic.title()}\n\nNotes about {topic}.\n", encoding="utf-8")
    return tmp_path


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_context_prints_the_pack_exactly_as_measured(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    result = _run("knowledge", "context", "buffer", "fills", "--budget", "300")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"# {TRUST_NOTICE}"
    assert lines[1].split()[1:4] == ["docs/design.md#0", "2026-11-20", "Design"]
    encoded = int(next(part for part in lines[-3].split() if part.startswith("encoded=")).split("=")[1])
    assert encoded == math.ceil(len(result.stdout.encode()) / 4) <= 300


def test_json_and_jsonl_carry_items_and_receipt(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    as_json = json.loads(_run("knowledge", "context", "installer", "--budget", "900", "--format", "json").stdout)
    jsonl = _run("knowledge", "context", "installer", "--budget", "900", "--format", "jsonl", "--explain").stdout

    assert [item["citation"] for item in as_json["items"]] == ["docs/install.md#0"]
    assert as_json["receipt"]["format"] == "json"
    assert jsonl.count("\n") == 1
    assert json.loads(jsonl)["items"][0]["reasons"]


def test_pin_and_explain(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    result = _run("knowledge", "context", "broker", "--budget", "600", "--pin", "docs/install.md#0", "--explain")

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split()[1] == "docs/install.md#0"
    assert "· pinned" in result.stdout
    assert "  why: " in result.stdout


def test_a_budget_too_small_fails_naming_the_minimum(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    result = _run("knowledge", "context", "buffer", "--budget", "10")

    assert result.exit_code == 1
    assert "retry with --budget" in result.stderr
    minimum = int(result.stderr.split("retry with --budget ")[1].split()[0])
    assert _run("knowledge", "context", "buffer", "--budget", str(minimum)).exit_code == 0


def test_window_errors_are_clear(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    bad_date = _run("knowledge", "context", "buffer", "--budget", "500", "--since", "20-11-2026")
    two = _run("knowledge", "context", "today", "buffer", "yesterday", "--budget", "500")
    both = _run("knowledge", "context", "buffer", "last", "week", "--budget", "500", "--until", "2026-11-01")

    assert bad_date.exit_code == 2
    assert "YYYY-MM-DD" in bad_date.stderr
    assert two.exit_code == 1
    assert "more than one temporal expression" in two.stderr
    assert both.exit_code == 1
    assert "--since/--until" in both.stderr


def test_since_and_until_select_dated_documents(workdir: Path) -> None:
    _run("knowledge", "index", "docs")

    inside = _run("knowledge", "context", "buffer", "--budget", "500", "--since", "2026-11-01", "--until", "2026-11-30")
    outside = _run(
        "knowledge", "context", "buffer", "--budget", "500", "--since", "2026-12-01", "--until", "2026-12-31"
    )

    assert "docs/design.md#0" in inside.stdout
    assert "warning: no_candidates:" in outside.stdout
    assert outside.exit_code == 0


def test_save_receipt_then_since_receipt(workdir: Path) -> None:
    _run("knowledge", "index", "docs")
    saved = json.loads(
        _run("knowledge", "context", "broker", "--budget", "800", "--format", "json", "--save-receipt").stdout
    )
    digest = saved["receipt"]["input_digest"]
    (workdir / "docs" / "ops2.md").write_text("# More operations\n\nThe broker logs rotate daily.\n", encoding="utf-8")
    _run("knowledge", "index", "docs")

    delta = json.loads(
        _run("knowledge", "context", "broker", "--budget", "800", "--format", "json", "--since-receipt", digest).stdout
    )
    unknown = _run("knowledge", "context", "broker", "--budget", "800", "--since-receipt", "0123456789abcdef")

    assert [item["citation"] for item in delta["items"]] == ["docs/ops2.md#0"]
    assert unknown.exit_code == 1
    assert "--save-receipt" in unknown.stderr


def test_a_missing_index_is_a_soft_pack(workdir: Path) -> None:
    result = _run("knowledge", "context", "buffer", "--budget", "300")

    assert result.exit_code == 0
    assert "index=missing" in result.stdout
    assert "run: fiskai knowledge index PATH" in result.stderr  # the CLI words the fix, off the measured pack


def test_context_is_listed_and_stays_off_the_heavy_imports(workdir: Path) -> None:
    _run("knowledge", "index", "docs")
    probe = (
        "import sys\n"
        "from fiskai_cli._root import cli\n"
        "try:\n"
        "    cli.main(['knowledge', 'context', 'buffer', '--budget', '400'], prog_name='fiskai')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('pydantic', 'rich', 'httpx', 'yaml') if m in sys.modules))\n"
    )

    listed = _run("knowledge", "--help")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=workdir)

    assert "context" in listed.stdout
    assert done.stdout.splitlines()[-1] == "[]"
    assert "docs/design.md#0" in done.stdout
