"""Helpers of the oracle tests: load a subject, draw calls from a schema, parse argvs in the app's own parser."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from hypothesis import strategies as st

from fiskai_core.errors import ArgumentsError
from fiskai_core.pycli import CHILD_SCRIPT, PyCliSource, PyCommandSpec, load_python_cli
from fiskai_core.pycli._model import Framework
from fiskai_core.tools._arguments import parse_arguments

ORACLE = Path(__file__).with_name("oracle_child.py")
ATTACKS = [
    "--limit=99",
    "--del",
    "--delete-all",
    "-x",
    "--",
    "-",
    "@/etc/passwd",
    "=5",
    "",
    "--help",
    "-h",
    "--yes",
    "a b",
]


def load(python: str, framework: Framework, script: str, **options: Any) -> PyCliSource:
    """A subject's console script (beside the venv's python) or `module:attr`, described fresh."""
    if ":" in script:
        return load_python_cli(framework, script, python=python, run=python, use_cache=False, **options)
    return load_python_cli(framework, str(Path(python).parent / script), use_cache=False, **options)


def parse(python: str, cases: Sequence[Mapping[str, object]]) -> list[dict[str, Any]]:
    """Each case's argv parsed by the app's own parser: `{"params": {...}}` or `{"error": ...}`."""
    with tempfile.TemporaryDirectory() as scratch:
        given, out = Path(scratch) / "cases.json", Path(scratch) / "out.json"
        given.write_text(json.dumps(list(cases)))
        subprocess.run(
            [python, str(ORACLE), str(CHILD_SCRIPT.parent), str(given), str(out)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        return cast("list[dict[str, Any]]", json.loads(out.read_text()))


def case(spec: PyCommandSpec, target: str, values: Mapping[str, object]) -> dict[str, object] | None:
    """The oracle case for one call, or None when the builder refuses it (a refusal runs nothing)."""
    try:
        argv = spec.build_argv(parse_arguments(json.dumps(values)))
    except ArgumentsError:
        return None
    return {"framework": spec.framework, "target": target, "argv": argv, "values": dict(values), "tool": spec.name}


def expected_keys(spec: PyCommandSpec, values: Mapping[str, object]) -> set[str]:
    """The parameters a call names that put a token on the command line (false flags and empty lists do not)."""
    by_name = {param.name: param for param in spec.params}
    keys: set[str] = set()
    for key, value in values.items():
        param = by_name[key]
        if value == [] or (param.action == "count" and value == 0):
            continue
        if param.action == "flag" and value != param.on_value:
            continue
        keys.add(key)
    return keys


def parsed_keys(result: Mapping[str, Any], spec: PyCommandSpec) -> set[str]:
    """What the parser set, leaving out empty positionals and the confirmation option fiskai appends."""
    confirm = {param.name for param in spec.node.params if param.confirmation}
    params = cast("dict[str, object]", result["params"])
    return {key for key, value in params.items() if value not in (None, [], ()) and key not in confirm}


def _scalar(prop: Mapping[str, Any]) -> st.SearchStrategy[object]:
    if "enum" in prop:
        return st.sampled_from(list(prop["enum"]))
    kind = prop.get("type")
    if kind == "integer":
        low = prop.get("minimum", prop.get("exclusiveMinimum", -1001) + 1)
        high = prop.get("maximum", prop.get("exclusiveMaximum", 1001) - 1)
        return st.integers(min_value=int(low), max_value=int(high))
    if kind == "number":
        low = prop.get("minimum", prop.get("exclusiveMinimum", -1000))
        high = prop.get("maximum", prop.get("exclusiveMaximum", 1000))
        return st.floats(
            min_value=low,
            max_value=high,
            exclude_min="exclusiveMinimum" in prop,
            exclude_max="exclusiveMaximum" in prop,
            allow_nan=False,
        )
    if kind == "boolean":
        return st.booleans()
    return st.one_of(st.sampled_from(ATTACKS), st.text(alphabet="-@=ab/. ", max_size=8))


def value_strategy(prop: Mapping[str, Any]) -> st.SearchStrategy[object]:
    """Values the schema allows, leaning on the strings that attack parsers."""
    if prop.get("type") == "array":
        items = cast("Mapping[str, Any]", prop["items"])
        return st.lists(value_strategy(items), min_size=prop.get("minItems", 0), max_size=prop.get("maxItems", 3))
    return _scalar(prop)


@st.composite
def calls(draw: st.DrawFn, spec: PyCommandSpec) -> dict[str, object]:
    """One schema-valid call: every required key and a random subset of the others."""
    schema = spec.input_schema
    properties = cast("dict[str, Mapping[str, Any]]", schema["properties"])
    required = set(cast("list[str]", schema.get("required", [])))
    optional = sorted(set(properties) - required)
    chosen = required | set(draw(st.lists(st.sampled_from(optional), unique=True)) if optional else [])
    return {name: draw(value_strategy(properties[name])) for name in sorted(chosen)}
