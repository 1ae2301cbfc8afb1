"""Fixtures for the agent tests: real fixturectl tools, a real file journal, option builders."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import CommandTool, command_tools
from fiskai_core.testing import Rule
from fiskai_runstate import FileJournalStore

_ROOT = Path(__file__).resolve().parents[3]
FIXTURECTL = _ROOT / "examples" / "fixturectl" / "fixturectl"
FIXTURECTL_MODEL = _ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"


def fixturectl_tools(directory: Path | None = None, *, exclude: Sequence[str] = ("^fail$",)) -> list[CommandTool]:
    """fixturectl's selected commands as tools; with `directory`, a copy that also prints FISKAI_EFFECT_ID and
    appends each call's argv to `<directory>/calls.log`."""
    path = FIXTURECTL
    if directory is not None:
        path = directory / "fixturectl"
        log = shlex.quote(str(directory / "calls.log"))
        model = shlex.quote(str(FIXTURECTL_MODEL))
        path.write_text(
            "#!/bin/sh\n"
            f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat {model}; fi\n'
            f'echo "$*" >> {log}\n'
            'echo "FISKAI_EFFECT_ID=$FISKAI_EFFECT_ID"\n'
            'for arg in "$@"; do printf "[%s]\\n" "$arg"; done\n',
            encoding="utf-8",
        )
        path.chmod(0o755)

    app = load_application(str(path), exclude=Rule(tools=tuple(exclude)))
    return command_tools(app)


def calls_log(directory: Path) -> list[str]:
    """The argv lines the fixturectl copy recorded."""
    log = directory / "calls.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def natscli_model() -> Path:
    """The NATS CLI introspection model (200+ commands), or skip when the shared fixtures are absent."""
    candidates = [_ROOT / "tests-integration" / "fixtures" / "natscli.introspect.json"]
    shared = os.environ.get("FISKAI_SHARED_DIR")
    base = Path(shared) if shared else _ROOT.parent / "shared"
    candidates.append(base / "fixtures" / "fisk" / "natscli.introspect.json")
    for candidate in candidates:
        if candidate.exists():
            return candidate
    pytest.skip("the NATS CLI fixture needs ../shared/fixtures (set FISKAI_SHARED_DIR to its parent folder)")


@dataclass
class App:
    """fixturectl bound as tools, with the argv log of every call it ran."""

    directory: Path
    tools: list[CommandTool]

    def calls(self) -> list[str]:
        """The argv lines (without the binary) of every call, in order."""
        return calls_log(self.directory)


@pytest.fixture
def app(tmp_path: Path) -> App:
    """A recording copy of fixturectl in tmp_path and its tools."""
    directory = tmp_path / "app"
    directory.mkdir()
    return App(directory=directory, tools=fixturectl_tools(directory))


@pytest.fixture
def natscli() -> Path:
    """The NATS CLI model path (skips without the shared fixtures)."""
    return natscli_model()


@pytest.fixture
def store(tmp_path: Path) -> FileJournalStore:
    """A real file journal store in tmp_path."""
    return FileJournalStore(tmp_path / "runs")
