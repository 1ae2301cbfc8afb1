"""Fixtures for the agent tests: real fixturectl tools, a real file journal, option builders."""

from __future__ import annotations

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
def natscli(shared_fixtures: Path) -> Path:
    """The NATS CLI model (221 commands) from the shared fixtures; skips without them (see `shared_fixtures`)."""
    return shared_fixtures / "fisk" / "natscli.introspect.json"


@pytest.fixture
def store(tmp_path: Path) -> FileJournalStore:
    """A real file journal store in tmp_path."""
    return FileJournalStore(tmp_path / "runs")
