"""Each attack from the issue, against the subject apps, shown inert (refused, or parsed as plain data by the
app's own parser); and the introspection sandbox, cache and refusals."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from fiskai_core.errors import ArgumentsError, IntrospectionError
from fiskai_core.pycli import PyCliSource, PyCommandSpec, TagRule, _introspect, load_python_cli
from fiskai_core.tools._arguments import parse_arguments

from .oracle import load, parse


def _spec(source: PyCliSource, name: str) -> PyCommandSpec:
    return next(spec for spec in source.commands if spec.name == name)


def _argv(spec: PyCommandSpec, values: Mapping[str, object]) -> list[str]:
    return spec.build_argv(parse_arguments(json.dumps(values)))


def _parsed(python: str, spec: PyCommandSpec, target: str, argv: list[str]) -> dict[str, object]:
    [result] = parse(python, [{"framework": spec.framework, "target": target, "argv": argv}])
    assert "error" not in result, result
    # An older click reports a positional it saw no value for as None.
    return {key: value for key, value in result["params"].items() if value is not None}


def test_abbreviation_cannot_reach_an_option_the_json_did_not_name(subjects_python: str) -> None:
    source = load(subjects_python, "argparse", "subject-argparse", rules=[TagRule(deny_params=("delete_all",))])
    rows = _spec(source, "rows")
    # The app itself takes `--del` for `--delete-all`; fiskai has no key for it, and a denied key is named as such.
    with pytest.raises(ArgumentsError, match='unknown property "del"'):
        _argv(rows, {"table": "t", "del": True})
    with pytest.raises(ArgumentsError, match="deny_params"):
        _argv(rows, {"table": "t", "delete_all": True})
    argv = _argv(rows, {"table": "--del", "extra": ["--del", "--lim=5"], "o": "n", "color": "red"})
    assert argv == ["rows", "--color=red", "-on", "--", "--del", "--del", "--lim=5"]
    params = _parsed(subjects_python, rows, "subject-argparse", argv)
    assert params == {"table": "--del", "extra": ["--del", "--lim=5"], "o": "n", "color": "red"}


def test_at_file_is_refused_where_argparse_would_read_the_file(subjects_python: str) -> None:
    rows = _spec(load(subjects_python, "argparse", "subject-argparse"), "rows")
    assert rows.node.fromfile_prefix_chars == "@"  # declared on the root parser, applied to subcommand tokens
    for values in (
        {"table": "@/etc/passwd"},
        {"table": "t", "extra": ["@/etc/hostname"]},
        {"table": "t", "point": ["@a", "b"]},
    ):
        with pytest.raises(ArgumentsError, match="contents of a file"):
            _argv(rows, values)
    # Inside an option token `@` is not at the start of a token: plain data.
    argv = _argv(rows, {"table": "t", "tag": ["@/etc/passwd"]})
    assert _parsed(subjects_python, rows, "subject-argparse", argv) == {"table": "t", "tag": ["@/etc/passwd"]}


def test_optional_value_option_cannot_smuggle_another_option(subjects_python: str) -> None:
    show = _spec(load(subjects_python, "click", "subject-click"), "show")
    with pytest.raises(ArgumentsError, match="further options"):
        _argv(show, {"src": "x", "mode": "--limit=99"})
    argv = _argv(show, {"src": "x", "mode": "fast", "limit": 3, "n": 5, "rest": ["--limit=99", "-"]})
    params = _parsed(subjects_python, show, "subject-click", argv)
    assert params == {"mode": "fast", "limit": "3", "n": "5", "src": "x", "rest": ["--limit=99", "-"]}
    with pytest.raises(ArgumentsError, match="standard input"):
        _argv(show, {"src": "-"})


def test_passthrough_commands_are_denied_unless_allowed_by_name(subjects_python: str) -> None:
    click_app = load(subjects_python, "click", "subject-click")
    assert "ai:deny" in _spec(click_app, "forward").tags
    assert "forward" not in [spec.name for spec in click_app.selected]
    assert any("forward" in warning and "ignore_unknown_options" in warning for warning in click_app.warnings)
    sqlite = load(subjects_python, "click", "sqlite-utils")
    denied = sorted(spec.name for spec in sqlite.commands if "ai:deny" in spec.tags)
    assert denied == ["install", "uninstall"]  # run_module("pip"): a `--index-url` would reach pip
    argparse_app = load(subjects_python, "argparse", "subject-argparse")
    assert "ai:deny" in _spec(argparse_app, "run").tags  # REMAINDER
    allowed = load(subjects_python, "click", "subject-click", allow_passthrough=("forward",))
    assert "forward" in [spec.name for spec in allowed.selected]


def test_a_confirmation_option_is_the_gates_never_the_models(subjects_python: str) -> None:
    delete = _spec(load(subjects_python, "click", "subject-click"), "delete-all")
    assert "ai:confirm" in delete.tags
    assert "yes" not in delete.input_schema["properties"]  # pyright: ignore[reportOperatorIssue]
    argv = _argv(delete, {"table": "t"})
    assert argv == ["delete-all", "--yes", "--", "t"]
    with pytest.raises(ArgumentsError, match="yes"):
        _argv(delete, {"table": "t", "yes": True})


def test_tag_rules_full_match_the_command_path(subjects_python: str) -> None:
    rule = TagRule(commands="drop-table|drop", tags=("impact:destructive",))
    sqlite = load(subjects_python, "click", "sqlite-utils", rules=[rule], prefix="su_")
    tags = {spec.name: spec.tags for spec in sqlite.commands}
    assert "impact:destructive" in tags["su_drop-table"]
    assert "impact:destructive" not in tags["su_drop-view"]  # `drop` alone would match it unanchored


def test_introspection_runs_isolated_in_an_empty_home(subjects_python: str) -> None:
    probe = load(subjects_python, "click", "subject-probe")
    seen = json.loads(probe.commands[0].description)
    assert seen["isolated"] == 1
    assert seen["cwd"] == seen["home"] and seen["cwd_entries"] == []
    assert set(seen["env"]) <= {
        "PATH",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "HOME",
        "NO_COLOR",
        "TERM",
        "TYPER_STANDARD_TRACEBACK",
        "PWD",
        "SHLVL",
        "_",
    } | {name for name in seen["env"] if name.startswith("XDG_")}
    assert "ANTHROPIC_API_KEY" not in seen["env"]


def test_optparse_and_a_framework_mismatch_are_refused_in_one_line(subjects_python: str) -> None:
    with pytest.raises(IntrospectionError, match="optparse") as caught:
        load(subjects_python, "argparse", "subject-optparse")
    assert "\n" not in str(caught.value)
    with pytest.raises(IntrospectionError, match="not a click command"):
        load(subjects_python, "click", "csvcut")
    typer_cli = load(subjects_python, "typer", "typer")  # its root takes PATH_OR_MODULE before any command
    assert typer_cli.commands == [] and "takes arguments of its own" in typer_cli.warnings[0]


def test_the_description_is_cached_until_the_app_changes(
    subjects_python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    script = str(Path(subjects_python).parent / "subject-typer")
    first = load_python_cli("typer", script)
    assert list(tmp_path.glob("fiskai/pycli/*.json"))

    def no_child(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a fresh cache must not start the interpreter")

    monkeypatch.setattr(_introspect, "_run_child", no_child)
    assert [spec.name for spec in load_python_cli("typer", script).commands] == [spec.name for spec in first.commands]
    module = next(path for path, _, _ in first.document.fingerprint if path.endswith("typer_app.py"))
    os.utime(module)  # the app changed: the cache entry is stale
    with pytest.raises(AssertionError, match="fresh cache"):
        load_python_cli("typer", script)


def test_typer_before_it_vendored_click_goes_through_click(old_typer_python: str) -> None:
    source = load(old_typer_python, "typer", "subject-typer")
    assert (source.document.framework, source.document.framework_version) == ("typer", "0.25.1")
    hello = _spec(source, "hello")
    properties = hello.input_schema["properties"]
    assert isinstance(properties, dict)
    assert properties["color"] == {"description": "default: r", "type": "string", "enum": ["r", "g"]}  # by value
    argv = _argv(hello, {"name": "--count=9", "color": "g", "tags": ["-x"], "force": False})
    assert argv == ["hello", "--color=g", "--tags=-x", "--no-force", "--", "--count=9"]
    assert _parsed(old_typer_python, hello, "subject-typer", argv) == {
        "name": "--count=9",
        "color": "g",
        "tags": ["-x"],
        "force": False,
    }


def test_a_parser_factory_and_the_apps_own_tags(subjects_python: str) -> None:
    built = load(
        subjects_python, "argparse", "subject-argparse", parser="fiskai_pycli_subjects.argparse_app:build_parser"
    )
    assert [spec.name for spec in built.commands] == ["rows", "run"]
    click_app = load(subjects_python, "click", "subject-click", rules=[TagRule(commands="show", tags=("audit",))])
    assert _spec(click_app, "show").tags == ("impact:ro", "audit")


def test_a_denied_parameter_cannot_be_set_from_the_environment_either(subjects_python: str) -> None:
    offered = load(subjects_python, "click", "subject-click")
    assert "SUBJECT_TOKEN" not in offered.strip_env
    denied = load(subjects_python, "click", "subject-click", deny_params=("token",))
    assert "SUBJECT_TOKEN" in denied.strip_env
