"""docs/agent-yaml.md is generated from the typed models and must not go stale."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from fiskai_core.config import Config

_ROOT = Path(__file__).resolve().parents[1]
_SCRIPT = _ROOT / "docs" / "gen_agent_yaml.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_agent_yaml", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_agent_yaml_page_matches_the_models() -> None:
    page = (_ROOT / "docs" / "agent-yaml.md").read_text(encoding="utf-8")
    assert page == _generator().render(), "docs/agent-yaml.md is stale: run `uv run python docs/gen_agent_yaml.py`"


def test_every_key_of_every_block_is_on_the_page() -> None:
    page = (_ROOT / "docs" / "agent-yaml.md").read_text(encoding="utf-8")
    for path, model in _generator()._blocks(Config, ""):
        for name, field in model.model_fields.items():
            written = field.alias or name
            key = f"{path}.{written}" if path else written
            assert f"| `{key}` |" in page, key


def test_the_mode_table_comes_from_what_the_loader_requires() -> None:
    page = (_ROOT / "docs" / "agent-yaml.md").read_text(encoding="utf-8")
    assert "| `server` | `a2a` | `application_path`, `nats_context` |" in page
    assert "`system_prompt` (unless `expose.agent.mcp` is set), `llm.model` |" in page


def test_check_mode_exits_non_zero_naming_the_command_when_the_page_differs(tmp_path: Path) -> None:
    # Run the script against a copy whose page is out of date, never touching the real one.
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "gen_agent_yaml.py").write_text(_SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "docs" / "agent-yaml.md").write_text("# old\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(tmp_path / "docs" / "gen_agent_yaml.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "is stale: run `uv run python docs/gen_agent_yaml.py`" in done.stderr
