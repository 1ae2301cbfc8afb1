"""Checking a model's arguments against a command schema before anything runs.

Two checks on a decoded call, both optional pre-steps in front of a source's argv rendering (which
validates nothing beyond booleans for fisk):

* `missing_required` / `missing_required_message`: fisk-ai's required-parameter pre-check (agent runner
  only). Presence counts, not value: `null`, `""`, `false`, `0` and `[]` all supply a parameter. Empty
  or `null` input is `{}`; input that is not exactly one JSON object reports nothing (execution then
  rejects it in fisk's words).
* `validate_arguments`: a small validator for the JSON-Schema subset fisk emits (`type` with integer
  versus number, `enum`, `pattern`, `format` uri/ipv4/ipv6, `items`, `properties`,
  `additionalProperties` false or a schema, `required`, `oneOf`, `minimum`/`maximum` and their
  exclusive forms). It returns readable problems that name the property, for the model to fix its
  call; anything outside the subset is ignored rather than guessed at. Formats are checked leniently
  (a URI needs a scheme; addresses must parse). Regex patterns are run with Python's `re`, which
  agrees with ECMA-262 on the patterns fisk emits; a pattern Python cannot compile is skipped.

Values are checked only against a schema that states what the command's parser enforces (fisk's
own); a schema derived from a v0.8 model types every non-boolean value as a string while fisk passes a
JSON number through as text, so for it only the keys are checked (`keys_only_schema`).
"""

from __future__ import annotations

import ipaddress
import math
import operator
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from urllib.parse import urlsplit

from pydantic import JsonValue

from fiskai_core._gojson import DecodedValue, JsonNumber, go_quote
from fiskai_core.errors import ArgumentsError, MissingArgumentsError

from ._arguments import ToolArguments, parse_arguments

__all__ = [
    "check_arguments",
    "keys_only_schema",
    "missing_required",
    "missing_required_message",
    "schema_required",
    "validate_arguments",
    "validate_value",
]

_SHOWN_STRING_RUNES = 60


def schema_required(schema: Mapping[str, JsonValue]) -> list[str]:
    """The names in a schema's `required` list (non-string entries ignored), in order.

    Args:
        schema: A JSON schema object.

    Returns:
        The required property names.
    """
    listed = schema.get("required")
    return [name for name in listed if isinstance(name, str)] if isinstance(listed, list) else []


def missing_required(schema: Mapping[str, JsonValue], arguments: ToolArguments | str | bytes | None) -> list[str]:
    """The required parameters a call does not supply, in schema order.

    Args:
        schema: The tool's (merged) input schema.
        arguments: The decoded call, or the model's raw JSON.

    Returns:
        Missing names; empty when all are present or the input is not a single JSON object.
    """
    required = schema_required(schema)
    if not required:
        return []
    if not isinstance(arguments, ToolArguments):
        try:
            arguments = parse_arguments(arguments)
        except ArgumentsError:
            return []
    # fisk-ai decodes into Go's map[string]any with json.Unmarshal: trailing data, or a number beyond
    # float64, fails that decode, and then it reports nothing (execution rejects the call instead).
    if not arguments.single or _overflows_float64(dict(arguments.values)):
        return []
    return [name for name in required if name not in arguments.values]


def _overflows_float64(value: DecodedValue) -> bool:
    if isinstance(value, JsonNumber):
        return math.isinf(float(value.text))
    if isinstance(value, list):
        return any(_overflows_float64(item) for item in value)
    if isinstance(value, dict):
        return any(_overflows_float64(item) for item in value.values())
    return False


def missing_required_message(tool_name: str, schema: Mapping[str, JsonValue], missing: Sequence[str]) -> str:
    """The error text returned to the model for a call missing required parameters.

    Args:
        tool_name: The tool name.
        schema: The tool's (merged) input schema.
        missing: What `missing_required` returned.

    Returns:
        `tool "<name>" was called without required parameter(s): a, b. required: ...; optional: ...`
        (the optional part only when there are optional parameters, sorted).
    """
    required = schema_required(schema)
    properties = schema.get("properties")
    names = sorted(properties) if isinstance(properties, dict) else []
    optional = [name for name in names if name not in required]
    message = (
        f"tool {go_quote(tool_name)} was called without required parameter(s): {', '.join(missing)}. "
        f"required: {', '.join(required)}"
    )
    return f"{message}; optional: {', '.join(optional)}" if optional else message


def check_arguments(
    tool_name: str, schema: Mapping[str, JsonValue], arguments: ToolArguments, *, strict: bool = True
) -> None:
    """The checks every call gets before it is planned: required parameters first, then the schema.

    Args:
        tool_name: The tool, named in the messages.
        schema: Its input schema.
        arguments: The decoded call.
        strict: Check values against the schema; otherwise only its keys (see `keys_only_schema`).

    Raises:
        MissingArgumentsError: required parameters are absent (fisk-ai's pre-check message).
        ArgumentsError: a value or key does not fit the schema; every problem is named.
    """
    missing = missing_required(schema, arguments)
    if missing:
        raise MissingArgumentsError(missing_required_message(tool_name, schema, missing), missing=tuple(missing))
    problems = validate_arguments(schema if strict else keys_only_schema(schema), arguments)
    if problems:
        raise ArgumentsError(
            f"arguments for tool {go_quote(tool_name)} do not match its schema: {'; '.join(problems)}. "
            "Nothing was run; correct the arguments and call again."
        )


def validate_arguments(schema: Mapping[str, JsonValue], arguments: ToolArguments) -> list[str]:
    """Check a decoded call against the tool's input schema.

    Args:
        schema: The tool's input schema.
        arguments: The decoded call.

    Returns:
        Human-readable problems naming the property, e.g.
        `property "count": expected integer, got string "abc"`; empty when the arguments fit.
    """
    return validate_value(schema, dict(arguments.values))


def validate_value(schema: Mapping[str, JsonValue], value: DecodedValue, *, where: str = "arguments") -> list[str]:
    """Check one decoded value against a schema.

    Args:
        schema: A schema (object form; boolean schemas and unknown keywords are ignored).
        value: The decoded value.
        where: How problems name the value (`arguments`, `property "x"`, `property "x"[2]`).

    Returns:
        The problems found, empty when the value fits.
    """
    type_problem = _check_type(schema.get("type"), value, where)
    if type_problem:
        return [type_problem]
    problems = _check_scalar(schema, value, where)
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                problems.extend(validate_value(items, item, where=f"{where}[{index}]"))
    if isinstance(value, dict):
        problems.extend(_check_object(schema, value, where))
    one_of = schema.get("oneOf")
    if isinstance(one_of, list):
        matching = sum(1 for option in one_of if isinstance(option, dict) and not validate_value(option, value))
        if matching != 1:
            shown = ", ".join(_alternative(index, option) for index, option in enumerate(one_of, 1))
            problems.append(f"{where}: {_describe(value)} must match exactly one of: {shown}")
    return problems


def _alternative(index: int, option: JsonValue) -> str:
    if isinstance(option, dict):
        fmt, kind = option.get("format"), option.get("type")
        if isinstance(fmt, str):
            return f"{fmt} format"
        if isinstance(kind, str):
            return kind
    return f"alternative {index}"


def _check_object(schema: Mapping[str, JsonValue], value: Mapping[str, DecodedValue], where: str) -> list[str]:
    problems: list[str] = []
    properties = schema.get("properties")
    known = properties if isinstance(properties, dict) else {}
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        inner = _name(where, name)
        sub = known.get(name)
        if isinstance(sub, dict):
            problems.extend(validate_value(sub, item, where=inner))
        elif extra is False:
            allowed = ", ".join(sorted(known)) or "none"
            problems.append(f"{inner}: not an accepted parameter (accepted: {allowed})")
        elif isinstance(extra, dict):
            problems.extend(validate_value(extra, item, where=inner))
    missing = [name for name in schema_required(schema) if name not in value]
    problems.extend(f"{_name(where, name)}: required but missing" for name in missing)
    return problems


def _name(where: str, key: str) -> str:
    return f"property {go_quote(key)}" if where == "arguments" else f"{where}.{go_quote(key)}"


def _json_type(value: DecodedValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, JsonNumber):
        return "integer" if _is_integral(value) else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _is_integral(number: JsonNumber) -> bool:
    try:
        decimal = Decimal(number.text)
    except InvalidOperation:
        return False
    # JSON Schema: a number with a zero fraction (1.0, 1e3) is an integer.
    return decimal == decimal.to_integral_value()


def _check_type(expected: JsonValue, value: DecodedValue, where: str) -> str | None:
    if isinstance(expected, str):
        wanted = [expected]
    elif isinstance(expected, list):
        wanted = [kind for kind in expected if isinstance(kind, str)]
    else:
        wanted = []
    if not wanted:
        return None
    actual = _json_type(value)
    if actual in wanted or (actual == "integer" and "number" in wanted):
        return None
    return f"{where}: expected {' or '.join(wanted)}, got {_describe(value)}"


def _check_scalar(schema: Mapping[str, JsonValue], value: DecodedValue, where: str) -> list[str]:
    problems: list[str] = []
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_equal(option, value) for option in enum):
        shown = ", ".join(_show_json(option) for option in enum)
        problems.append(f"{where}: {_describe(value)} is not one of {shown}")
    if isinstance(value, str):
        problems.extend(_check_string(schema, value, where))
    if isinstance(value, JsonNumber):
        problems.extend(_check_bounds(schema, Decimal(value.text), where))
    return problems


def _check_string(schema: Mapping[str, JsonValue], value: str, where: str) -> list[str]:
    problems: list[str] = []
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True
        if not matched:
            problems.append(f"{where}: {_describe(value)} does not match the pattern {pattern}")
    fmt = schema.get("format")
    if isinstance(fmt, str) and not _format_ok(fmt, value):
        problems.append(f"{where}: {_describe(value)} is not a valid {fmt}")
    return problems


def _format_ok(fmt: str, value: str) -> bool:
    try:
        if fmt == "ipv4":
            ipaddress.IPv4Address(value)
        elif fmt == "ipv6":
            ipaddress.IPv6Address(value)
        elif fmt == "uri":
            return bool(urlsplit(value).scheme)
    except ValueError:
        return False
    return True


def _check_bounds(schema: Mapping[str, JsonValue], number: Decimal, where: str) -> list[str]:
    checks = (
        ("minimum", operator.ge, "at least"),
        ("maximum", operator.le, "at most"),
        ("exclusiveMinimum", operator.gt, "greater than"),
        ("exclusiveMaximum", operator.lt, "less than"),
    )
    problems: list[str] = []
    for keyword, holds, wording in checks:
        limit = schema.get(keyword)
        if isinstance(limit, (int, float)) and not isinstance(limit, bool) and not holds(number, Decimal(str(limit))):
            problems.append(f"{where}: must be {wording} {limit}, got {number}")
    return problems


def _equal(option: JsonValue, value: DecodedValue) -> bool:
    if isinstance(value, JsonNumber):
        if isinstance(option, bool) or not isinstance(option, (int, float)):
            return False
        return Decimal(value.text) == Decimal(str(option))
    if isinstance(value, bool) or isinstance(option, bool):
        return isinstance(value, bool) and isinstance(option, bool) and value == option
    if isinstance(value, list):
        return isinstance(option, list) and len(option) == len(value) and all(map(_equal, option, value))
    if isinstance(value, dict):
        return (
            isinstance(option, dict)
            and option.keys() == value.keys()
            and all(_equal(option[key], value[key]) for key in value)
        )
    return option == value


def _show_json(option: JsonValue) -> str:
    if isinstance(option, str):
        return go_quote(option)
    if isinstance(option, bool) or option is None:
        return {True: "true", False: "false", None: "null"}[option]
    return str(option)


def _describe(value: DecodedValue) -> str:
    kind = _json_type(value)
    if isinstance(value, str):
        shown = value if len(value) <= _SHOWN_STRING_RUNES else value[:_SHOWN_STRING_RUNES] + "..."
        return f"string {go_quote(shown)}"
    if isinstance(value, JsonNumber):
        return f"{kind} {value.text}"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    return kind


def keys_only_schema(schema: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """The schema's property names without value constraints: refuses unknown keys and nothing else.

    Args:
        schema: A command's input schema.

    Returns:
        A new object schema with `additionalProperties: false` and unconstrained properties.
    """
    properties = schema.get("properties")
    names = list(properties) if isinstance(properties, dict) else []
    return {"type": "object", "additionalProperties": False, "properties": {name: {} for name in names}}
