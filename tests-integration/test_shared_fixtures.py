"""Tests that need the large shared data skip on a fresh clone, and fail instead when CI requires the data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
_NEEDS_SHARED = "packages/fiskai-core/tests/fisk/test_walk.py::test_walk_v08_and_with_schemas_agree_on_the_nats_cli"


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("FISKAI_SHARED_DIR", "FISKAI_REQUIRE_SHARED")}
    environ["FISKAI_SHARED_DIR"] = str(tmp_path / "no-shared-here")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", _NEEDS_SHARED],
        cwd=_ROOT,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_test_of_shared_data_skips_naming_fiskai_shared_dir_when_the_data_is_absent(tmp_path: Path) -> None:
    result = _pytest(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
    assert (
        f"needs the shared data at {tmp_path / 'no-shared-here' / 'fixtures'}: set FISKAI_SHARED_DIR" in result.stdout
    )


def test_fiskai_require_shared_turns_that_skip_into_a_failure(tmp_path: Path) -> None:
    result = _pytest(tmp_path, FISKAI_REQUIRE_SHARED="1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 error" in result.stdout
    assert "FISKAI_REQUIRE_SHARED=1 makes this a failure" in result.stdout


def test_the_captured_fixtures_in_the_repository_carry_their_provenance() -> None:
    fixtures = _ROOT / "fixtures"
    for folder in ("fisk", "fisk-schema"):
        assert (fixtures / folder / "README.md").is_file()
    assert "FISKAI_SHARED_DIR" in (fixtures / "README.md").read_text(encoding="utf-8")
