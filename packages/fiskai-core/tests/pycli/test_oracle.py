"""The oracle property: every argv the builder produces, parsed by the app's OWN parser, sets exactly the
parameters the JSON named, for real apps installed from PyPI (sqlite-utils on click, fastapi-cli on typer
0.29, which vendors click, csvkit on argparse) and the written subjects. Calls are drawn by hypothesis from each tool's advertised schema,
with values leaning on parser attacks (`--limit=99`, `@/etc/passwd`, `--`, `-`, `--del`, ...)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from fiskai_core.pycli._model import Framework

from .oracle import calls, case, expected_keys, load, parse, parsed_keys

SUBJECTS: list[tuple[Framework, str]] = [
    ("click", "sqlite-utils"),
    ("click", "subject-click"),
    ("typer", "fastapi_cli.cli:app"),
    ("typer", "subject-typer"),
    ("argparse", "csvcut"),
    ("argparse", "csvgrep"),
    ("argparse", "csvsort"),
    ("argparse", "subject-argparse"),
]


@pytest.mark.parametrize(("framework", "script"), SUBJECTS, ids=[script for _, script in SUBJECTS])
def test_every_built_argv_parses_into_exactly_the_named_parameters(
    subjects_python: str, framework: Framework, script: str
) -> None:
    source = _source(subjects_python, framework, script)
    assert source.selected, f"{script}: no commands offered"
    cases: list[dict[str, Any]] = []

    # Drawn first, parsed in one child afterwards: one interpreter start for hundreds of argvs.
    @settings(max_examples=max(60, 4 * len(source.selected)), deadline=None, database=None)
    @given(data=st.data())
    def draw(data: st.DataObject) -> None:
        spec = data.draw(st.sampled_from(list(source.selected)))
        built = case(spec, script, data.draw(calls(spec)))
        if built is not None:
            cases.append(built)

    draw()
    assert len(cases) >= 10, f"{script}: the builder refused nearly every drawn call"
    specs = {spec.name: spec for spec in source.selected}
    for built, result in zip(cases, parse(subjects_python, cases), strict=True):
        spec = specs[built["tool"]]
        assert "error" not in result, f"{built['argv']} from {built['values']}: {result.get('error')}"
        assert parsed_keys(result, spec) == expected_keys(spec, built["values"]), built
        for key, value in built["values"].items():
            param = next(p for p in spec.params if p.name == key)
            if param.type.kind in ("string", "path") and param.action in ("value", "append") and isinstance(value, str):
                assert result["params"][key] == ([value] if param.action == "append" else value), built


_SOURCES: dict[tuple[str, str], Any] = {}


def _source(python: str, framework: Framework, script: str) -> Any:
    key = (python, script)
    if key not in _SOURCES:
        _SOURCES[key] = load(python, framework, script)
    return _SOURCES[key]
