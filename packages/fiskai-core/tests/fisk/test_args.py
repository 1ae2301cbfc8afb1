"""ArgsFromJSON port: the rules fisk's Go suite pins, and the "no value becomes an option" property."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from fiskai_core._gojson import GoJSONError, decode_first_value, decode_whole_value, go_quote
from fiskai_core.errors import ArgumentsError
from fiskai_core.fisk import ArgModel, CmdModel, FlagModel, args_from_json
from fiskai_core.tools import JsonNumber


def _flag(name: str, **fields: object) -> FlagModel:
    return FlagModel.model_validate({"name": name, **fields})


def _arg(name: str, **fields: object) -> ArgModel:
    return ArgModel.model_validate({"name": name, **fields})


_PUB = CmdModel(
    name="pub",
    flags=[
        _flag("level"),
        _flag("count"),
        _flag("force", boolean=True, negatable=True),
        _flag("yes", boolean=True),
        _flag("always", boolean=True, default=["True"]),
        _flag("tag", cumulative=True),
        _flag("label", cumulative=True),
    ],
    args=[_arg("subject"), _arg("body")],
)


def test_args_from_json_renders_flags_in_declared_order_then_positionals_after_separator() -> None:
    raw = '{"body":"world","subject":"hello","count":3,"level":"info"}'
    assert args_from_json(_PUB, raw) == ["--level=info", "--count=3", "--", "hello", "world"]


@pytest.mark.parametrize("literal", ["9007199254740993", "1e3", "-0", "3.0", "123456789012345678901234567890"])
def test_args_from_json_keeps_number_literal_text(literal: str) -> None:
    assert args_from_json(_PUB, f'{{"count":{literal}}}') == [f"--count={literal}"]


@pytest.mark.parametrize(
    ("raw", "argv"),
    [
        ('{"force":true}', ["--force"]),
        ('{"force":false}', ["--no-force"]),
        ('{"yes":true}', ["--yes"]),
        ('{"yes":false}', []),
        ('{"always":true}', ["--always"]),
    ],
)
def test_args_from_json_renders_booleans_by_negatability(raw: str, argv: list[str]) -> None:
    assert args_from_json(_PUB, raw) == argv


def test_args_from_json_rejects_false_for_unnegatable_flag_defaulting_to_true() -> None:
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(_PUB, '{"always":false}')
    assert str(caught.value) == 'flag "always": cannot be set to false: the flag has no negation and defaults to true'


@pytest.mark.parametrize("value", ['"yes"', "1", "null", "[]", "{}"])
def test_args_from_json_boolean_flag_takes_only_json_booleans(value: str) -> None:
    kind = {'"yes"': "string", "1": "number", "null": "null", "[]": "array", "{}": "object"}[value]
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(_PUB, f'{{"force":{value}}}')
    assert str(caught.value) == f'flag "force": expected boolean, got {kind}'


def test_args_from_json_repeats_flag_per_array_item_and_sorts_object_keys() -> None:
    raw = '{"tag":["a","b"],"label":{"b":"2","a":"1","é":null}}'
    assert args_from_json(_PUB, raw) == ["--tag=a", "--tag=b", "--label=a=1", "--label=b=2", "--label=é="]


def test_args_from_json_rejects_nested_containers_in_flag_values() -> None:
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(_PUB, '{"tag":[["a"]]}')
    assert str(caught.value) == 'flag "tag": unsupported value type array'


def test_args_from_json_rejects_unknown_property_naming_first_unknown_key() -> None:
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(_PUB, '{"level":"x","zz\\n":1,"aa":2}')
    assert str(caught.value) == 'unknown property "zz\\n"'


@pytest.mark.parametrize("raw", [None, "", b"", "null", " null ", "{}", "{} {}", "{}garbage"])
def test_args_from_json_empty_null_and_trailing_data_mean_no_arguments(raw: str | bytes | None) -> None:
    assert args_from_json(_PUB, raw) == []


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("true", "json: cannot unmarshal bool into Go value of type map[string]interface {}"),
        ('"s"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
        ("4", "json: cannot unmarshal number into Go value of type map[string]interface {}"),
        ("{", "unexpected EOF"),
        ("   ", "EOF"),
        ('{"a":}', "invalid character '}' looking for beginning of value"),
        ("{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ('{"a":1 "b"}', "invalid character '\"' after object key:value pair"),
        ('{"a":[1 2]}', "invalid character '2' after array element"),
        ('{"a":"\\q"}', "invalid character 'q' in string escape code"),
        ('{"a":"\\u12x4"}', "invalid character 'x' in \\u hexadecimal character escape"),
        ('{"a":"\x01"}', "invalid character '\\x01' in string literal"),
        ('{"a":-x}', "invalid character 'x' in numeric literal"),
        ('{"a":1.}', "invalid character '}' after decimal point in numeric literal"),
        ('{"a":1e}', "invalid character '}' in exponent of numeric literal"),
        ('{"a":nul}', "invalid character '}' in literal null (expecting 'l')"),
        ("\u00e9", "invalid character '\u00c3' looking for beginning of value"),
        ("[" * 10001, "invalid character '[' exceeded max depth"),
    ],
)
def test_args_from_json_reports_go_decoder_messages(raw: str, message: str) -> None:
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(_PUB, raw)
    assert str(caught.value) == f"invalid JSON arguments: {message}"


def test_decoder_follows_go_for_duplicates_surrogates_and_invalid_utf8() -> None:
    decoded = decode_first_value(b'{"k":1,"s":"\\ud800\\u0041\\ud83d\\ude00","b":"\xe2\x82x","k":"last"}')
    assert decoded == {"k": "last", "s": "\ufffdA\U0001f600", "b": "\ufffd\ufffdx"}


def test_decoder_accepts_go_maximum_nesting_depth() -> None:
    decoded = decode_first_value(b"[" * 10000 + b"]" * 10000)
    assert isinstance(decoded, list)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "unexpected end of JSON input"),
        (b"{} x", "invalid character 'x' after top-level value"),
        (b'{"a":1e', "invalid character ' ' in exponent of numeric literal"),
        (b'{"a":tr', "invalid character ' ' in literal true (expecting 'u')"),
        (b'{"a"', "unexpected end of JSON input"),
    ],
)
def test_whole_value_decoding_reports_go_unmarshal_messages(raw: bytes, message: str) -> None:
    with pytest.raises(GoJSONError) as caught:
        decode_whole_value(raw)
    assert str(caught.value) == message


def test_decoder_keeps_numbers_as_literal_text() -> None:
    assert decode_first_value(b"[-0.0e+5, 10]") == [JsonNumber("-0.0e+5"), JsonNumber("10")]


def test_decoder_stops_after_first_complete_top_level_value() -> None:
    # Go's Decoder ends a top-level number at the first byte that cannot continue it.
    assert decode_first_value(b"01x[") == JsonNumber("0")
    with pytest.raises(GoJSONError) as caught:
        decode_first_value(b"[01]")
    assert str(caught.value) == "invalid character '1' after array element"


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("plain", '"plain"'),
        ('q"b\\', '"q\\"b\\\\"'),
        ("\a\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"'),
        ("\x00\x7f\x85\u00a0", '"\\x00\\x7f\\u0085\\u00a0"'),
        ("\u200b\U000e0001", '"\\u200b\\U000e0001"'),
        ("héllo ✓ 日本 \ufffd", '"héllo ✓ 日本 \ufffd"'),
    ],
)
def test_go_quote_matches_strconv_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


_POS = CmdModel(
    name="pos",
    args=[
        _arg("first", default=["da"]),
        _arg("second", default=["d1", "d2"]),
        _arg("third"),
        _arg("rest", cumulative=True),
    ],
)


@pytest.mark.parametrize(
    ("raw", "argv"),
    [
        ('{"second":"vb"}', ["--", "da", "vb"]),
        ('{"third":"c"}', ["--", "da", "d1", "d2", "c"]),
        ('{"first":""}', ["--", ""]),
        ('{"first":null}', ["--", ""]),
        ('{"first":["a","b"]}', ["--", "a", "b"]),
        ('{"first":1.50,"second":true,"third":"-x","rest":["--y","z"]}', ["--", "1.50", "true", "-x", "--y", "z"]),
    ],
)
def test_args_from_json_positionals_fill_gaps_from_defaults(raw: str, argv: list[str]) -> None:
    assert args_from_json(_POS, raw) == argv


def test_args_from_json_gap_without_default_errors() -> None:
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(_POS, '{"rest":["x"]}')
    assert str(caught.value) == 'argument "third" must be set because a later argument is set'


def test_args_from_json_positional_object_errors() -> None:
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(_POS, '{"first":{"a":1}}')
    assert str(caught.value) == 'argument "first": unsupported value type object'


def test_args_from_json_cumulative_arg_not_last_errors_even_without_positional_input() -> None:
    cmd = CmdModel(name="bad", flags=[_flag("x")], args=[_arg("many", cumulative=True), _arg("one")])
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(cmd, '{"x":"1"}')
    assert str(caught.value) == 'argument "many" is cumulative but is not the last argument'


def test_args_from_json_str_with_lone_surrogate_decodes_like_invalid_utf8_in_go() -> None:
    # A raw lone surrogate cannot be UTF-8; it travels as its three bytes and Go replaces each one.
    assert args_from_json(_PUB, '{"level":"a\ud800b"}') == ["--level=a\ufffd\ufffd\ufffdb"]
    assert args_from_json(_PUB, b'{"level":"\xffx"}') == ["--level=\ufffdx"]


def test_args_from_json_copies_nul_and_control_bytes_verbatim() -> None:
    assert args_from_json(_PUB, '{"level":"a\\u0000b\\n"}') == ["--level=a\x00b\n"]


_PROPERTY_CMD = CmdModel(
    name="prop",
    flags=[_flag("s"), _flag("many", cumulative=True), _flag("map"), _flag("b", boolean=True, negatable=True)],
    args=[_arg("one", default=["d"]), _arg("rest", cumulative=True)],
)
_scalars = st.one_of(st.text(), st.integers().map(str), st.booleans(), st.none())


@settings(max_examples=300, deadline=None)
@given(
    s=st.one_of(st.none(), st.text()),
    many=st.lists(st.text(), max_size=4),
    mapping=st.dictionaries(st.text(), st.text(), max_size=4),
    flag=st.one_of(st.none(), st.booleans()),
    one=st.one_of(st.none(), st.text()),
    rest=st.lists(st.text(), max_size=4),
)
def test_no_model_supplied_value_ever_becomes_an_option(
    s: str | None, many: list[str], mapping: dict[str, str], flag: bool | None, one: str | None, rest: list[str]
) -> None:
    payload: dict[str, object] = {"many": many, "map": mapping, "rest": rest}
    if s is not None:
        payload["s"] = s
    if flag is not None:
        payload["b"] = flag
    if one is not None:
        payload["one"] = one
    argv = args_from_json(_PROPERTY_CMD, json.dumps(payload))
    before_separator = argv[: argv.index("--")] if "--" in argv else argv
    for token in before_separator:
        name = token[2:].split("=", 1)[0]
        # Every token before `--` is one whole option naming a declared flag; values stay inside it.
        assert token.startswith("--")
        assert token in ("--b", "--no-b") or (name in {"s", "many", "map"} and token.startswith(f"--{name}="))
    if "--" in argv:
        assert argv[argv.index("--") + 1 :] == [one if one is not None else "d", *rest]
