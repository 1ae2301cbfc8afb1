"""Argv we build, checked against fisk's real parser (fixturectl argv vectors).

The vectors record how the real fixturectl binary parsed 209 command lines. Those whose argv is
exactly what `CommandSpec.argv` renders for some JSON object are the shapes this port produces; for
each one that ran, the parser must have read every token as intended: each supplied flag is `set`,
each supplied positional is in `set_args`, and plain string values arrive unchanged (dash-leading
values included).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fiskai_core.fisk import ApplicationModel, CommandSpec, walk_commands

_REPRODUCED_AT_LEAST = 31


def _reconstruct(spec: CommandSpec, tail: list[str]) -> dict[str, Any] | None:
    """Read a canonical argv tail back into the JSON object that renders it, or None."""
    flags = {flag.name: flag for flag in (*spec.cmd.flags, *spec.global_flags)}
    obj: dict[str, Any] = {}
    index = 0
    while index < len(tail) and tail[index] != "--":
        token = tail[index]
        index += 1
        name, sep, value = token.removeprefix("--").partition("=")
        flag = flags.get(name)
        if not token.startswith("--"):
            return None
        if sep and flag is not None and not flag.boolean:
            if flag.cumulative:
                obj.setdefault(name, []).append(value)
            else:
                obj[name] = value
        elif not sep and flag is not None and flag.boolean:
            obj[name] = True
        elif not sep and name.startswith("no-") and name[3:] in flags and flags[name[3:]].negatable:
            obj[name[3:]] = False
        else:
            return None
    rest = tail[index + 1 :]
    for arg in spec.cmd.args:
        if not rest:
            break
        obj[arg.name], rest = (rest, []) if arg.cumulative else (rest[0], rest[1:])
    return None if rest else obj


def test_rendered_argv_is_read_by_the_real_parser_as_intended(captured_fixtures: Path) -> None:
    app = ApplicationModel.model_validate_json(
        (captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json").read_bytes()
    )
    exposable = [flag.name for flag in app.flags if not flag.hidden]
    specs = {spec.path: spec for spec in walk_commands(app, global_flags=exposable)}
    lines = (captured_fixtures / "fisk" / "fixturectl.argv-vectors.jsonl").read_text(encoding="utf-8").splitlines()
    reproduced = 0
    for line in lines:
        vector: dict[str, Any] = json.loads(line)
        spec = specs.get(tuple(vector["command"]))
        if spec is None or vector["argv"][: len(spec.path)] != list(spec.path):
            continue
        obj = _reconstruct(spec, vector["argv"][len(spec.path) :])
        if obj is None or spec.argv(json.dumps(obj)) != vector["argv"]:
            continue
        reproduced += 1
        parsed = vector["expected"]["stdout_json"]
        if vector["expected"]["outcome"] != "ran":
            continue
        arg_names = {arg.name for arg in spec.cmd.args}
        assert sorted(parsed["set"]) == sorted(key for key in obj if key not in arg_names), vector["id"]
        assert sorted(parsed["set_args"]) == sorted(key for key in obj if key in arg_names), vector["id"]
        properties = spec.input_schema["properties"]
        assert isinstance(properties, dict)
        for key, value in obj.items():
            prop = properties.get(key)
            if isinstance(value, str) and isinstance(prop, dict) and prop.get("type") == "string" and len(prop) == 2:
                where = "args" if key in arg_names else "flags" if key in parsed["flags"] else "globals"
                assert parsed[where][key] == value, vector["id"]
    assert reproduced >= _REPRODUCED_AT_LEAST
