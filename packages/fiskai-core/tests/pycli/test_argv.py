"""The argv builder's refusals and renderings, on hand-written parameter models (no app needed)."""

from __future__ import annotations

import pytest

from fiskai_core.errors import ArgumentsError
from fiskai_core.pycli import ParamModel, PyCommandModel, build_argv, command_schema
from fiskai_core.pycli._model import TypeModel
from fiskai_core.tools._arguments import parse_arguments


def _param(name: str, **fields: object) -> ParamModel:
    return ParamModel.model_validate({"name": name, "kind": "option", "opts": [f"--{name}"], **fields})


def _argv(params: list[ParamModel], raw: str, *, framework: str = "click", **node: object) -> list[str]:
    model = PyCommandModel.model_validate({"name": "cmd", "params": [p.model_dump() for p in params], **node})
    return build_argv(("cmd",), model, model.params, parse_arguments(raw).values, framework=framework)


def test_options_are_full_strings_with_inline_values_and_positionals_follow_the_marker() -> None:
    params = [
        _param("limit", type={"kind": "integer"}),
        _param("shout", action="bool_pair", off_opts=["--no-shout"]),
        _param("tag", multiple=True),
        ParamModel(name="src", kind="argument", opts=["src"]),
    ]
    argv = _argv(params, '{"src": "--limit=5", "limit": 3, "shout": false, "tag": ["a", "-b"]}')
    assert argv == ["cmd", "--limit=3", "--no-shout", "--tag=a", "--tag=-b", "--", "--limit=5"]


def test_an_unknown_or_denied_key_is_refused_by_name() -> None:
    with pytest.raises(ArgumentsError, match='unknown property "del"'):
        _argv([_param("delete-all", action="flag")], '{"del": true}')
    model = PyCommandModel(name="cmd")
    with pytest.raises(ArgumentsError, match="deny_params"):
        build_argv(
            ("cmd",),
            model,
            (),
            {"secret": "x"},
            framework="click",
            denied={"secret": "denied by the operator (deny_params)"},
        )


def test_optional_value_options_refuse_a_leading_dash() -> None:
    mode = _param("mode", optional_value=True)
    assert _argv([mode], '{"mode": "fast"}') == ["cmd", "--mode=fast"]
    with pytest.raises(ArgumentsError, match="further options"):
        _argv([mode], '{"mode": "--limit=99"}')


def test_fromfile_prefix_and_dash_and_double_dash_are_refused_where_they_mean_something_else() -> None:
    pos = ParamModel(name="path", kind="argument", opts=["path"], type=TypeModel(kind="path", allow_dash=True))
    with pytest.raises(ArgumentsError, match="contents of a file"):
        _argv([pos], '{"path": "@/etc/passwd"}', framework="argparse", fromfile_prefix_chars="@")
    with pytest.raises(ArgumentsError, match="standard input"):
        _argv([pos], '{"path": "-"}')
    with pytest.raises(ArgumentsError, match="dropped"):
        _argv([pos], '{"path": "--"}', framework="argparse")
    # Without fromfile characters an `@` is just text.
    assert _argv([pos], '{"path": "@x"}', framework="argparse") == ["cmd", "--", "@x"]


def test_short_only_options_keep_the_value_in_their_token() -> None:
    short = ParamModel(name="n", kind="option", opts=["-n"])
    assert _argv([short], '{"n": "5"}') == ["cmd", "-n5"]
    with pytest.raises(ArgumentsError, match="empty value"):
        _argv([short], '{"n": ""}')
    with pytest.raises(ArgumentsError, match="leading '='"):
        _argv([short], '{"n": "=5"}', framework="argparse")


def test_argparse_multi_value_options_refuse_option_like_values() -> None:
    point = _param("point", nargs=2)
    assert _argv([point], '{"point": ["1", "2"]}', framework="argparse") == ["cmd", "--point", "1", "2"]
    with pytest.raises(ArgumentsError, match="cannot start with"):
        _argv([point], '{"point": ["1", "--delete-all"]}', framework="argparse")
    assert _argv([point], '{"point": ["1", "--x"]}') == [
        "cmd",
        "--point=1",
        "--x",
    ]  # click takes nargs tokens as values


def test_flags_switches_counts_and_the_confirmation_option() -> None:
    params = [
        _param("force", action="flag", default=False),
        _param("keep", action="flag", on_value=False, default=True, opts=["--no-keep"]),
        _param(
            "case", action="switch", switch=[{"opt": "--upper", "value": "upper"}, {"opt": "--lower", "value": "lower"}]
        ),
        _param("verbose", action="count", opts=["-v", "--verbose"]),
    ]
    argv = _argv(params, '{"force": true, "keep": false, "case": "lower", "verbose": 2}', confirm_opt="--yes")
    assert argv == ["cmd", "--force", "--no-keep", "--lower", "--verbose", "--verbose", "--yes"]
    with pytest.raises(ArgumentsError, match="no opposite"):
        _argv([_param("on", action="flag", default=True)], '{"on": false}')


def test_a_gap_before_a_later_positional_is_refused() -> None:
    params = [ParamModel(name="a", kind="argument"), ParamModel(name="b", kind="argument")]
    with pytest.raises(ArgumentsError, match='"a" must be set'):
        _argv(params, '{"b": "x"}')


def test_schema_shape() -> None:
    schema = command_schema(
        [
            _param("limit", type={"kind": "integer", "min": 0, "max": 5, "max_open": True}, required=True),
            ParamModel(name="files", kind="argument", nargs="+"),
            _param("color", type={"kind": "choice", "choices": ["red", "green"]}, prompt=True),
        ]
    )
    assert schema["required"] == ["limit", "color"]
    properties = schema["properties"]
    assert isinstance(properties, dict)
    assert list(properties) == ["files", "limit", "color"]
    assert properties["limit"] == {"type": "integer", "minimum": 0, "exclusiveMaximum": 5}
    assert properties["files"] == {"type": "array", "items": {"type": "string"}, "minItems": 1}
    assert properties["color"] == {"type": "string", "enum": ["red", "green"]}
