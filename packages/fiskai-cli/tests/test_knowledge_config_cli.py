"""The knowledge commands read agent.yaml the one way every command does (`_wiring.load_settings`), each run."""

from __future__ import annotations

import json
import os
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


def test_an_edited_config_is_read_again_by_the_next_command(workdir: Path) -> None:
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


def test_no_second_copy_of_the_configuration_is_kept(workdir: Path) -> None:
    # The knowledge commands once kept their own record of agent.yaml's knowledge block in the cache
    # home; now the configuration is read where every command reads it, and nothing else is written.
    _run("knowledge", "index")
    assert _hits("buffer") == 1

    cache = Path(os.environ["XDG_CACHE_HOME"])
    assert not [path for path in cache.rglob("*") if path.is_file()]
