"""A scratch venv holding real subject apps from PyPI, built once and cached between runs.

Real apps: sqlite-utils 4.2.1 (click, 48 commands), fastapi-cli 0.0.34 (typer 0.29.2, which vendors click),
csvkit 2.2.0 (argparse, function entry points, so the parse trap is exercised), plus
`subjects/` (a small package written for these tests carrying the hazards the real apps lack). `.ci/run`
builds the venv and exports `FISKAI_PYCLI_SUBJECTS_PYTHON`; without it the venv is built here, under
`${XDG_CACHE_HOME:-~/.cache}/fiskai/` as read when the tests start. Offline, every test here skips with
one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SUBJECTS = Path(__file__).with_name("subjects")
REQUIREMENTS = ("sqlite-utils==4.2.1", "typer==0.29.2", "fastapi-cli==0.0.34", "csvkit==2.2.0", "click==8.5.1")
_VENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fiskai" / "pycli-subjects-1"


@pytest.fixture(scope="session")
def subjects_python() -> str:
    """The interpreter of the venv holding the subject apps (their console scripts sit beside it)."""
    given = os.environ.get("FISKAI_PYCLI_SUBJECTS_PYTHON")
    if given:
        return given
    return _venv(_VENV, REQUIREMENTS)


@pytest.fixture(scope="session")
def old_typer_python() -> str:
    """A venv with typer 0.25 (before it vendored click: `get_command` returns a click Group) and the subjects."""
    return _venv(_VENV.with_name("pycli-typer025-1"), ("typer==0.25.1", "click==8.5.1"))


def _venv(where: Path, requirements: tuple[str, ...]) -> str:
    python = where / "bin" / "python"
    marker = where / "installed.txt"
    wanted = "\n".join(requirements)
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("needs uv to build the subject venv")
    try:
        if not python.exists() or not marker.exists() or marker.read_text() != wanted:
            shutil.rmtree(where, ignore_errors=True)
            _run([uv, "venv", "--quiet", "--python", sys.executable, str(where)])
            _run([uv, "pip", "install", "--quiet", "--python", str(python), *requirements])
            marker.write_text(wanted)
        # The written subjects follow the checkout: reinstalled each session (fast, deps already there).
        _run(
            [
                uv,
                "pip",
                "install",
                "--quiet",
                "--python",
                str(python),
                "--no-deps",
                "--reinstall-package",
                "fiskai-pycli-subjects",
                str(SUBJECTS),
            ]
        )
    except subprocess.CalledProcessError as err:
        pytest.skip(f"could not install the subject apps from PyPI (offline?): {err.stderr.strip()[-200:]}")
    return str(python)


def _run(argv: list[str]) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True, timeout=600)
