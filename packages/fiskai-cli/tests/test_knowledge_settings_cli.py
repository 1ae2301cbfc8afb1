"""The knowledge commands remember a validated agent.yaml's knowledge settings until the file changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fiskai_cli._root import cli

_CONFIG = "identity: demo\nharness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n    top_k: {top_k}\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISKAI_STORE_DIR", raising=False)
    monkeypatch.delenv("FISKAI_CONFIG", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("one", "two", "three"):
        (docs / f"{name}.md").write_text(f"# {name}\n\nThe buffer {name} fills.\n", encoding="utf-8")
    (tmp_path / "agent.yaml").write_text(_CONFIG.format(top_k=1), encoding="utf-8")
    return tmp_path


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _hits(*words: str) -> int:
    result = _run("knowledge", "search", "--format", "json", *words)
    assert result.exit_code == 0, result.output
    return len(json.loads(result.stdout)["results"])


def _records() -> list[Path]:
    return sorted((Path(os.environ["XDG_CACHE_HOME"]) / "fiskai" / "knowledge-settings").glob("*.json"))


def test_a_second_search_reads_the_remembered_settings_without_pydantic(workdir: Path) -> None:
    assert _run("knowledge", "index").exit_code == 0
    for record in _records():
        record.unlink()
    code = (
        "import sys\nfrom fiskai_cli._root import cli\n"
        "cli.main(['knowledge', 'search', '--format', 'json', 'buffer'], standalone_mode=False)\n"
        "print('PYDANTIC', 'pydantic' in sys.modules)\n"
    )

    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert first.stdout.splitlines()[-1] == "PYDANTIC True"  # validated by the full loader once
    assert second.stdout.splitlines()[-1] == "PYDANTIC False"
    assert first.stdout.split("PYDANTIC")[0] == second.stdout.split("PYDANTIC")[0]
    assert len(_records()) == 1


def test_an_edited_config_is_validated_again(workdir: Path) -> None:
    _run("knowledge", "index")
    assert _hits("buffer") == 1

    (workdir / "agent.yaml").write_text(_CONFIG.format(top_k=3), encoding="utf-8")
    assert _hits("buffer") == 3

    (workdir / "agent.yaml").write_text("identity: demo\nharness:\n  knowledge:\n    enabled: false\n", "utf-8")
    disabled = _run("knowledge", "search", "buffer")
    assert disabled.exit_code == 1
    assert "knowledge is not enabled in" in disabled.output

    (workdir / "agent.yaml").write_text("identity: demo\nharness: [\n", encoding="utf-8")
    broken = _run("knowledge", "search", "buffer")
    assert broken.exit_code == 1
    assert "agent.yaml" in broken.output
    assert "Traceback" not in broken.output


def test_a_damaged_or_unwritable_record_falls_back_to_the_loader(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run("knowledge", "index")
    assert _hits("buffer") == 1
    (record,) = _records()

    record.write_text('{"key": 7, "paths": "x"', encoding="utf-8")
    assert _hits("buffer") == 1
    assert json.loads(record.read_text(encoding="utf-8"))["top_k"] == 1  # rewritten by the loader's verdict

    monkeypatch.setenv("XDG_CACHE_HOME", str(workdir / "docs" / "one.md"))  # a file: no cache can live there
    assert _hits("buffer") == 1
