"""A Python CLI command's parameters as a JSON schema, and a call's values as an argv: the trust boundary.

The same guarantees as fisk tools (`fiskai_core.fisk._args`), adapted to what click and argparse do:

* Every key must name an offered parameter; a denied or skipped one is refused by key, never filtered
  from strings (argparse would let an abbreviation reach it).
* Options come first, in declared order, as FULL option strings, each value inside its own token
  (`--name=value`; a short-only option as `-nVALUE`); positionals follow a literal `--`. The command
  path is written before any option, since a `--` before it would protect nothing (a click group stops
  at the first non-option and hands the rest to the command).
* Refused, because the app's parser would read them as something else: a value starting with `-` for a
  click option whose value may be left out (`--mode=--limit=99` also sets `limit`); a standalone token
  starting with an argparse `fromfile_prefix_chars` character (`@file` is replaced by the file's lines,
  even after `--`); `-` for a path or file that reads it as stdin/stdout; a literal `--` as an argparse
  positional (argparse drops it); a value starting with a prefix character where argparse needs it as
  a separate token (options taking several values); an empty value or one starting with `=` for a
  short-only option.
* A click confirmation option (`--yes`) is never shown to the model: the command is tagged `ai:confirm`
  and the flag is appended here, so the harness gate, not stdin, is what confirms.

Values are not type-checked here; the schema check before planning does that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from pydantic import JsonValue

from fiskai_core._gojson import DecodedValue, JsonNumber, go_quote
from fiskai_core.errors import ArgumentsError

from ._model import ParamModel, PyCommandModel

__all__ = ["DEFAULT_COUNT_CAP", "build_argv", "command_schema"]

DEFAULT_COUNT_CAP = 10
"""The most repetitions of a counting flag (`-vvv`) when the app sets no maximum."""


class _Refused(Exception):
    """A value the parameter cannot take; the caller names the parameter."""


def _is_multi(param: ParamModel) -> bool:
    return param.nargs in ("*", "+", -1) or (isinstance(param.nargs, int) and param.nargs > 1)


def _scalar_schema(param: ParamModel) -> dict[str, JsonValue]:
    kind = param.type
    schema: dict[str, JsonValue]
    if kind.kind == "choice" and kind.choices:
        schema = {"type": "string", "enum": list[JsonValue](kind.choices)}
    elif kind.kind in ("integer", "number"):
        schema = {"type": kind.kind}
        if kind.min is not None:
            schema["exclusiveMinimum" if kind.min_open else "minimum"] = _number(kind.min)
        if kind.max is not None:
            schema["exclusiveMaximum" if kind.max_open else "maximum"] = _number(kind.max)
    elif kind.kind == "boolean":
        schema = {"type": "boolean"}
    else:
        schema = {"type": "string"}
    return schema


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _property(param: ParamModel) -> dict[str, JsonValue]:
    if param.action in ("flag", "bool_pair"):
        schema: dict[str, JsonValue] = {"type": "boolean"}
    elif param.action == "switch":
        schema = {"type": "string", "enum": [_text(choice.value) for choice in param.switch]}
    elif param.action == "count":
        schema = {"type": "integer", "minimum": 0, "maximum": param.max or DEFAULT_COUNT_CAP}
    else:
        item = _scalar_schema(param)
        if _is_multi(param):
            schema = {"type": "array", "items": item}
            if isinstance(param.nargs, int) and param.nargs > 1:
                schema["minItems"] = schema["maxItems"] = param.nargs
            elif param.nargs == "+":
                schema["minItems"] = 1
            if param.multiple or param.action == "append":
                schema = {"type": "array", "items": schema}
        elif param.multiple or param.action == "append":
            schema = {"type": "array", "items": item}
        else:
            schema = item
    description = param.help.strip()
    if param.default is not None and param.default != [] and param.default is not False:
        note = f"default: {_text(param.default)}"
        description = f"{description} ({note})" if description else note
    if description:
        schema = {"description": description, **schema}
    return schema


def command_schema(params: Sequence[ParamModel]) -> dict[str, JsonValue]:
    """The input schema of a command's offered parameters: positionals, then options, fisk's shape."""
    ordered = [p for p in params if p.kind == "argument"] + [p for p in params if p.kind == "option"]
    properties: dict[str, JsonValue] = {param.name: _property(param) for param in ordered}
    required: list[JsonValue] = [param.name for param in ordered if param.required or param.prompt]
    schema: dict[str, JsonValue] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = required
    return schema


def build_argv(
    path: Sequence[str],
    node: PyCommandModel,
    params: Sequence[ParamModel],
    values: Mapping[str, DecodedValue],
    *,
    framework: str,
    denied: Mapping[str, str] | None = None,
) -> list[str]:
    """The argv of one call, binary excluded: command path, option tokens, then `--` and positionals.

    Args:
        path: The command path words.
        node: The leaf command (prefix and fromfile characters, exclusive groups, confirmation option).
        params: The offered parameters, in declared order.
        values: The decoded JSON object.
        framework: `click`, `typer` or `argparse` (their parsers differ in what a token means).
        denied: Parameter names refused by configuration or as unsupported, with why.

    Raises:
        ArgumentsError: an unknown or denied key, or a value the app's parser would misread.
    """
    command = go_quote(" ".join(path) or node.name)
    by_name = {param.name: param for param in params}
    for key in values:
        if key in by_name:
            continue
        why = (denied or {}).get(key)
        if why:
            raise ArgumentsError(
                f"building command line for {command}: parameter {go_quote(key)} is not offered: {why}"
            )
        raise ArgumentsError(f"building command line for {command}: unknown property {go_quote(key)}")
    for group in node.exclusive:
        given = [name for name in group if name in values]
        if len(given) > 1:
            raise ArgumentsError(
                f"building command line for {command}: {', '.join(go_quote(n) for n in given)} cannot be used together"
            )
    argparse = framework == "argparse"
    out = list(path)
    for param in params:
        if param.kind == "option" and param.name in values:
            try:
                out.extend(_option_tokens(param, values[param.name], node, argparse=argparse))
            except _Refused as err:
                raise ArgumentsError(
                    f"building command line for {command}: option {go_quote(param.name)}: {err}"
                ) from None
    if node.confirm_opt:
        # Reached only after the gate approved the call (the command carries ai:confirm).
        out.append(node.confirm_opt)
    positionals = [param for param in params if param.kind == "argument"]
    last = max((index for index, param in enumerate(positionals) if param.name in values), default=-1)
    tail: list[str] = []
    for param in positionals[: last + 1]:
        if param.name not in values:
            raise ArgumentsError(
                f"building command line for {command}: argument {go_quote(param.name)} must be set because a "
                "later argument is set"
            )
        try:
            tail.extend(_positional_tokens(param, values[param.name], node, argparse=argparse))
        except _Refused as err:
            raise ArgumentsError(
                f"building command line for {command}: argument {go_quote(param.name)}: {err}"
            ) from None
    if tail:
        out.append("--")
        out.extend(tail)
    return out


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, JsonNumber):
        return value.text
    if isinstance(value, list):
        items = cast("list[object]", value)
        return ", ".join(_text(item) for item in items)
    return "" if value is None else str(value)


def _scalar(value: DecodedValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, JsonNumber):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    kind = "null" if value is None else "array" if isinstance(value, list) else "object"
    raise _Refused(f"expected a single value, got {kind}")


def _items(value: DecodedValue) -> list[DecodedValue]:
    if not isinstance(value, list):
        raise _Refused("expected an array")
    return value


def _check_value(param: ParamModel, text: str, node: PyCommandModel, *, standalone: bool, argparse: bool) -> str:
    if param.type.allow_dash and text == "-":
        raise _Refused('"-" would mean standard input or output here; name a file')
    if param.optional_value and text.startswith("-"):
        raise _Refused(
            "its value may be left out, so a value starting with '-' would be read as further options; "
            "send a value that does not start with '-'"
        )
    if argparse and text == "--":
        raise _Refused('a literal "--" is dropped by the app\'s parser; send another value')
    if standalone and argparse:
        if node.fromfile_prefix_chars and text[:1] and text[0] in node.fromfile_prefix_chars:
            raise _Refused(
                f"a value starting with {text[0]!r} would be replaced by the contents of a file (the app reads "
                "arguments from files); send the value without it"
            )
    return text


def _opt(param: ParamModel, node: PyCommandModel) -> tuple[str, bool]:
    """The full option string to write, and whether it is long (takes `=value`)."""
    doubled = tuple(char * 2 for char in node.prefix_chars or "-")
    longs = [opt for opt in param.opts if opt.startswith(doubled)]
    if longs:
        return max(longs, key=len), True
    return param.opts[0], False


def _option_tokens(param: ParamModel, value: DecodedValue, node: PyCommandModel, *, argparse: bool) -> list[str]:
    opt, is_long = _opt(param, node)
    if param.action in ("flag", "bool_pair"):
        if not isinstance(value, bool):
            raise _Refused("expected a boolean")
        if param.action == "bool_pair":
            off, _ = _opt(param.model_copy(update={"opts": param.off_opts}), node) if param.off_opts else ("", False)
            return [opt] if value else [off]
        if value == param.on_value:
            return [opt]
        if param.default == param.on_value:
            raise _Refused(f"cannot be set to {_text(value)}: the flag has no opposite and that is not its default")
        return []
    if param.action == "switch":
        wanted = _scalar(value)
        for choice in param.switch:
            if _text(choice.value) == wanted:
                return [choice.opt]
        raise _Refused(f"must be one of {', '.join(_text(c.value) for c in param.switch)}")
    if param.action == "count":
        if not isinstance(value, JsonNumber) or not value.text.isdigit():
            raise _Refused("expected a non-negative integer")
        times = int(value.text)
        if times > (param.max or DEFAULT_COUNT_CAP):
            raise _Refused(f"at most {param.max or DEFAULT_COUNT_CAP}")
        return [opt] * times
    groups: list[DecodedValue] = _items(value) if (param.multiple or param.action == "append") else [value]
    out: list[str] = []
    for group in groups:
        if _is_multi(param):
            items = [
                _check_value(param, _scalar(item), node, standalone=True, argparse=argparse) for item in _items(group)
            ]
            out.extend(_multi_tokens(param, opt, is_long, items, node, argparse=argparse))
        else:
            text = _check_value(param, _scalar(group), node, standalone=False, argparse=argparse)
            out.append(_value_token(opt, is_long, text, argparse=argparse))
    return out


def _multi_tokens(
    param: ParamModel, opt: str, is_long: bool, items: list[str], node: PyCommandModel, *, argparse: bool
) -> list[str]:
    if not argparse:
        # click consumes exactly nargs tokens after the option, whatever they look like.
        if not items:
            raise _Refused("expected at least one value")
        return [_value_token(opt, is_long, items[0], argparse=False), *items[1:]]
    # argparse cannot take `--point=1 2`; the values are separate tokens, which it refuses when option-like.
    for item in items:
        if item[:1] and item[0] in (node.prefix_chars or "-"):
            raise _Refused(f"a value of an option taking several values cannot start with {item[0]!r}")
    return [opt, *items]


def _value_token(opt: str, is_long: bool, text: str, *, argparse: bool) -> str:
    if is_long:
        return f"{opt}={text}"
    if not text:
        raise _Refused(f"{opt} has no long form, and an empty value cannot follow it in the same token")
    if argparse and text.startswith("="):
        raise _Refused(f"{opt} has no long form, and argparse drops a leading '=' from its value")
    return f"{opt}{text}"


def _positional_tokens(param: ParamModel, value: DecodedValue, node: PyCommandModel, *, argparse: bool) -> list[str]:
    items = _items(value) if _is_multi(param) else [value]
    return [_check_value(param, _scalar(item), node, standalone=True, argparse=argparse) for item in items]
