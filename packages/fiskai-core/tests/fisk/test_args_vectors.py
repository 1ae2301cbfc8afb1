"""fisk's own ArgsFromJSON results (5194 vectors from the real Go code) against the Python port."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fiskai_core.errors import ArgumentsError
from fiskai_core.fisk import ApplicationModel, CmdModel, args_from_json

_VECTOR_COUNT = 5194


@pytest.fixture(scope="module")
def schema_fixtures(captured_fixtures: Path) -> Path:
    return captured_fixtures / "fisk-schema"


def _command(app: ApplicationModel, path: str) -> CmdModel:
    if path == "(globals)":
        # fisk-ai renders global flags through a synthetic command holding the app-level flags.
        return CmdModel(name="(globals)", flags=app.flags)
    commands = app.commands
    found: CmdModel | None = None
    for word in path.split(" "):
        found = next(cmd for cmd in commands if cmd.name == word)
        commands = found.commands
    assert found is not None
    return found


def test_args_from_json_agrees_with_every_fisk_vector(schema_fixtures: Path) -> None:
    app = ApplicationModel.model_validate_json((schema_fixtures / "fixturectl.introspect.json").read_bytes())
    lines = (schema_fixtures / "fixturectl.argsfromjson-vectors.jsonl").read_text(encoding="utf-8").splitlines()
    mismatches: list[str] = []
    agreed = 0
    for line in lines:
        vector: dict[str, Any] = json.loads(line)
        cmd = _command(app, vector["command"])
        try:
            got: dict[str, Any] = {"ok": True, "argv": args_from_json(cmd, vector["input_json"])}
        except ArgumentsError as err:
            got = {"ok": False, "error": str(err)}
        want = {"ok": True, "argv": vector["argv"]} if vector["ok"] else {"ok": False, "error": vector["error"]}
        if got == want:
            agreed += 1
        else:
            mismatches.append(f"{vector['id']} {vector['command']} {vector['input_json']!r}: want {want}, got {got}")
    assert len(lines) == _VECTOR_COUNT
    assert mismatches == []
    assert agreed == _VECTOR_COUNT
