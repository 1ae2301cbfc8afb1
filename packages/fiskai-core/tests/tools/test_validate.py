"""Schema pre-checks: the JSON-Schema subset fisk emits, and fisk-ai's required-parameter check."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import JsonValue

from fiskai_core.errors import ArgumentsError
from fiskai_core.fisk import ApplicationModel, CommandSpec, walk_commands
from fiskai_core.tools import missing_required_message, parse_arguments
from fiskai_core.tools._validate import missing_required, validate_arguments


@pytest.fixture(scope="module")
def types_schema(captured_fixtures: Path) -> dict[str, JsonValue]:
    app = ApplicationModel.model_validate_json(
        (captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json").read_bytes()
    )
    specs: dict[str, CommandSpec] = {spec.name: spec for spec in walk_commands(app)}
    return specs["types"].input_schema


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "{}",
        '{"int":3,"float":1.5,"int8":1e2,"str":"x","bool":false,"enum":"red","enums":["a","c"]}',
        '{"dur":"1h30m","size":"10MB","hex":"0aFF","ip":"10.0.0.1","url":"https://example.com/x"}',
        '{"ip":"::1","strs":[],"label":{}}',
    ],
)
def test_validate_accepts_fitting_arguments(types_schema: dict[str, JsonValue], raw: str | None) -> None:
    assert validate_arguments(types_schema, parse_arguments(raw)) == []


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        ('{"int":"abc"}', ['property "int": expected integer, got string "abc"']),
        ('{"int":1.5}', ['property "int": expected integer, got number 1.5']),
        ('{"float":true}', ['property "float": expected number, got boolean true']),
        ('{"enum":"purple"}', ['property "enum": string "purple" is not one of "red", "green", "blue"']),
        ('{"enums":["a","z"]}', ['property "enums"[1]: string "z" is not one of "a", "b", "c"']),
        ('{"strs":"one"}', ['property "strs": expected array, got string "one"']),
        ('{"hex":"abc"}', ['property "hex": string "abc" does not match the pattern ^([0-9a-fA-F]{2})*$']),
        ('{"url":"not a url"}', ['property "url": string "not a url" is not a valid uri']),
        (
            '{"ip":"300.1.1.1"}',
            ['property "ip": string "300.1.1.1" must match exactly one of: ipv4 format, ipv6 format'],
        ),
        (
            '{"label":{"k":"v"}}',
            ['property "label"."k": not an accepted parameter (accepted: none)'],
        ),
        (
            '{"nope":1}',
            [
                'property "nope": not an accepted parameter (accepted: always, bool, dir, dur, enum, enums, env-str, file, float, hex, hint, int, int64, int8, ints, ip, label, on, regexp, size, str, strs, strs-default, uint, unneg, url)'
            ],
        ),
    ],
)
def test_validate_reports_problems_naming_the_property(
    types_schema: dict[str, JsonValue], raw: str, problems: list[str]
) -> None:
    assert validate_arguments(types_schema, parse_arguments(raw)) == problems


def test_validate_checks_required_bounds_one_of_and_nested_schemas() -> None:
    schema: dict[str, JsonValue] = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "maximum": 10},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "k": {"type": ["string", "null"]},
        },
        "required": ["n"],
    }
    assert validate_arguments(schema, parse_arguments('{"k":null}')) == ['property "n": required but missing']
    assert validate_arguments(schema, parse_arguments('{"n":11,"m":{"a":1},"k":3}')) == [
        'property "n": must be at most 10, got 11',
        'property "m"."a": expected string, got integer 1',
        'property "k": expected string or null, got integer 3',
    ]


def test_undecodable_input_is_refused_at_the_entry_in_fisks_words() -> None:
    with pytest.raises(ArgumentsError, match=r"^invalid JSON arguments: unexpected EOF$"):
        parse_arguments("{")
    with pytest.raises(ArgumentsError, match=r'^building command line for "a b": invalid JSON arguments: json: cannot'):
        parse_arguments("[]", command="a b")


def test_trailing_data_is_decoded_but_marked_not_single() -> None:
    decoded = parse_arguments('{"a": 1} {"b": 2}')
    assert list(decoded.values) == ["a"]
    assert not decoded.single
    assert parse_arguments('{"a": 1} \n').single


_REQ: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"subject": {}, "body": {}, "force": {}, "count": {}, "zeta": {}},
    "required": ["subject", "count", "force"],
}


@pytest.mark.parametrize("value", ["null", '""', "false", "0", "[]", "{}"])
def test_missing_required_counts_presence_not_value(value: str) -> None:
    raw = f'{{"subject":{value},"count":{value},"force":{value}}}'
    assert missing_required(_REQ, raw) == []


@pytest.mark.parametrize("raw", [None, "", "null", " null ", "{}"])
def test_missing_required_empty_or_null_input_misses_everything(raw: str | None) -> None:
    assert missing_required(_REQ, raw) == ["subject", "count", "force"]


@pytest.mark.parametrize("raw", ["[]", '"x"', "{", '{"subject":1} {}', '{"subject":[1e400]}'])
def test_missing_required_non_object_input_reports_nothing(raw: str) -> None:
    assert missing_required(_REQ, raw) == []


def test_missing_required_reports_in_schema_order_with_exact_message() -> None:
    missing = missing_required(_REQ, '{"subject":"s"}')
    assert missing == ["count", "force"]
    assert missing_required_message("stream_add", _REQ, missing) == (
        'tool "stream_add" was called without required parameter(s): count, force. '
        "required: subject, count, force; optional: body, zeta"
    )
    only_required: dict[str, JsonValue] = {"properties": {"a": {}}, "required": ["a"]}
    assert missing_required_message("t", only_required, ["a"]) == (
        'tool "t" was called without required parameter(s): a. required: a'
    )
