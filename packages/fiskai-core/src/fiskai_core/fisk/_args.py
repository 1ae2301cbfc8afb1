"""JSON tool arguments to an argv tail: a port of fisk's `CmdModel.ArgsFromJSON`, the trust boundary.

Everything a model supplies reaches the wrapped application through this function, so it reproduces
fisk's rules exactly, error text included (a model that knows fisk recognizes the messages):

* Only the first JSON value is decoded, numbers keep their literal text, a repeated key keeps its
  last value; empty input and `null` give no arguments.
* Every key must name a flag or a positional of the command (hidden ones included).
* Flags come first, in declared order, each as ONE token `--name=value`, `--name` or `--no-name`;
  positionals follow a literal `--`. So no model-supplied value can ever be read as an option: the
  argv never passes through a shell and a value is never a token of its own before `--`.
* No value checking happens here (types, enums, required): the application's own parser decides.
  Checking values against the advertised schema is a separate pre-step (`fiskai_core.tools`).

`build_argv` is the one entry tools use: it takes the `ToolArguments` decoded once by
`fiskai_core.exec.parse_arguments`, renders exposed global flags and the command's own, and prefixes
the command path. `args_from_json` is fisk's function itself (raw text in), kept for conformance.

Note one deliberate difference from Go: with several unknown keys fisk names whichever one Go's map
iteration meets first (random); this names the first unknown key in input order, so it is stable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fiskai_core._gojson import DecodedValue, JsonNumber, go_quote
from fiskai_core.errors import ArgumentsError
from fiskai_core.tools._arguments import ToolArguments, parse_arguments

from ._model import ArgModel, CmdModel, FlagModel

__all__ = ["args_from_json", "build_argv", "render_argv"]

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
"""Strings Go's `strconv.ParseBool` reads as true."""
_JSON_KIND = {str: "string", JsonNumber: "number", list: "array", dict: "object"}


def args_from_json(cmd: CmdModel, raw: str | bytes | None) -> list[str]:
    """Fisk's `CmdModel.ArgsFromJSON`, exactly: the argv tail for `cmd` (no program name, no command path).

    The conformance port, checked against fisk's own vectors; tools go through `build_argv`.

    Args:
        cmd: The command; only its flags and args are read.
        raw: The JSON text as the model sent it. `None`, empty input and `null` mean no arguments.

    Returns:
        The flag tokens in declared flag order, then `--` and the positionals when there are any.

    Raises:
        ArgumentsError: With fisk's exact message: `invalid JSON arguments: ...`, `unknown property "k"`,
            `flag "f": ...`, `argument "a": ...`.
    """
    return render_argv(cmd.flags, cmd.args, parse_arguments(raw).values)


def build_argv(
    path: Sequence[str], cmd: CmdModel, globals_: Sequence[FlagModel], arguments: ToolArguments
) -> list[str]:
    """The argv of one call (command path included, binary excluded), as fisk-ai builds it: the one entry.

    The object is split into exposed global flags and the command's own keys; globals render through
    ArgsFromJSON on a synthetic command holding only them, locals through the command's own, so
    argv = path + global tokens + local tokens and globals always precede `--`. Like fisk-ai, input
    that is not exactly one object (trailing data) is not split: it all goes to the command's own rules.

    Args:
        path: The command path words.
        cmd: The leaf command.
        globals_: The globals applicable to this command.
        arguments: The decoded call.

    Returns:
        Path, then global flag tokens, then the command's own tokens.

    Raises:
        ArgumentsError: `building global flags for "<cmd>": ...` or `building command line for "<cmd>": ...`
            around fisk's ArgsFromJSON message.
    """
    command = go_quote(" ".join(path))
    values = arguments.values
    global_tail: list[str] = []
    if globals_ and arguments.single:
        names = {flag.name for flag in globals_}
        global_values = {key: value for key, value in values.items() if key in names}
        if global_values:
            try:
                global_tail = render_argv(globals_, (), global_values)
            except ArgumentsError as err:
                raise ArgumentsError(f"building global flags for {command}: {err}") from err
        values = {key: value for key, value in values.items() if key not in names}
    try:
        local_tail = render_argv(cmd.flags, cmd.args, values)
    except ArgumentsError as err:
        raise ArgumentsError(f"building command line for {command}: {err}") from err
    return [*path, *global_tail, *local_tail]


def render_argv(flags: Sequence[FlagModel], args: Sequence[ArgModel], values: Mapping[str, DecodedValue]) -> list[str]:
    """Render decoded arguments against a flag and arg list (the body of fisk's `ArgsFromJSON`).

    Args:
        flags: The flags, in declared order.
        args: The positional args, in declared order.
        values: The decoded JSON object.

    Returns:
        The argv tail.

    Raises:
        ArgumentsError: An unknown key, or a value the flag or positional cannot take.
    """
    known = {flag.name for flag in flags} | {arg.name for arg in args}
    for key in values:
        if key not in known:
            raise ArgumentsError(f"unknown property {go_quote(key)}")
    out: list[str] = []
    for flag in flags:
        if flag.name in values:
            try:
                out.extend(_flag_tokens(flag, values[flag.name]))
            except _ValueError as err:
                raise ArgumentsError(f"flag {go_quote(flag.name)}: {err}") from None
    positionals = _positional_tokens(args, values)
    if positionals:
        out.append("--")
        out.extend(positionals)
    return out


class _ValueError(Exception):
    """A value a flag or positional cannot take; the caller prefixes which one."""


def _kind(value: DecodedValue) -> str:
    """Name a value's kind as fisk's `jsonKindOf` does: the word in `expected boolean, got <kind>`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return _JSON_KIND[type(value)]


def _scalar(value: DecodedValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, JsonNumber):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    raise _ValueError(f"unsupported value type {_kind(value)}")


def _flag_tokens(flag: FlagModel, value: DecodedValue) -> list[str]:
    if flag.boolean:
        if not isinstance(value, bool):
            raise _ValueError(f"expected boolean, got {_kind(value)}")
        if flag.negatable:
            return [f"--{flag.name}" if value else f"--no-{flag.name}"]
        if value:
            return [f"--{flag.name}"]
        # Leaving the flag out would leave a true default in force: the opposite of what was asked.
        if any(default in _GO_TRUE for default in flag.default):
            raise _ValueError("cannot be set to false: the flag has no negation and defaults to true")
        return []
    if isinstance(value, list):
        return [f"--{flag.name}={_scalar(item)}" for item in value]
    if isinstance(value, dict):
        # Go's sort.Strings orders by bytes; UTF-8 byte order equals code point order.
        return [f"--{flag.name}={key}={_scalar(value[key])}" for key in sorted(value)]
    return [f"--{flag.name}={_scalar(value)}"]


def _positional_tokens(args: Sequence[ArgModel], values: Mapping[str, DecodedValue]) -> list[str]:
    for index, arg in enumerate(args):
        if arg.cumulative and index != len(args) - 1:
            raise ArgumentsError(f"argument {go_quote(arg.name)} is cumulative but is not the last argument")
    last = max((index for index, arg in enumerate(args) if arg.name in values), default=-1)
    out: list[str] = []
    for arg in args[: last + 1]:
        if arg.name not in values:
            # A command line cannot skip a positional, so a gap before a supplied one needs a default.
            if not arg.default:
                raise ArgumentsError(f"argument {go_quote(arg.name)} must be set because a later argument is set")
            out.extend(arg.default)
            continue
        value = values[arg.name]
        items = value if isinstance(value, list) else [value]
        try:
            out.extend(_scalar(item) for item in items)
        except _ValueError as err:
            raise ArgumentsError(f"argument {go_quote(arg.name)}: {err}") from None
    return out
