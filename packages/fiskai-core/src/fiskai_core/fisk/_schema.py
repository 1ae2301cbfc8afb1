"""Input schemas for commands whose introspection carries no `restricted_schema` (fisk v0.8 and older).

fisk v0.9+ precomputes `restricted_schema` on every command while the live flag values still exist;
that schema is always preferred and used verbatim. An older fisk prints only the flag and arg model,
and this module derives the best schema that model supports, shaped like fisk's own
(`{"type": "object", "additionalProperties": false, "properties": ..., "required": [...]}`, args then
flags, hidden ones left out, `required` only when non-empty).

What a v0.8 model cannot tell, so a derived schema cannot say:

* The value kind of a non-boolean flag or any arg: int, int64/uint ranges, float, duration, byte size,
  hex bytes, IP, URL, enum, file/dir, regexp and plain string all look the same
  (`"boolean": false`). Every non-boolean value is therefore `"type": "string"` (fisk parses text;
  the application's parser rejects a bad value with a non-zero exit the model can read).
* Enums: options appear only as `completions`, and only on single-choice enum *flags*; completions
  also appear on free-form flags with hints, so they are not proof of an enum. They are listed in
  the description as suggestions, never as `enum`. Repeatable enum flags have no completions, and
  positional args never have any, so an enum positional is invisible.
* Counters versus repeatable bools: a counter is `"boolean": true, "cumulative": true`; ArgsFromJSON
  accepts only a JSON boolean for any boolean flag, so a derived schema says `boolean` for both.
* String maps: a repeatable `KEY=VALUE` flag is just a cumulative string flag (array of strings; an
  object value would also be accepted by ArgsFromJSON but the model cannot know to send one).
* Patterns, formats and numeric bounds of any kind.

Defaults are mentioned in descriptions (`(default: 5s)`), as are completions (`suggested values`).

`flag_restricted_schema` is the other thing here: fisk's `FlagModel.RestrictedSchema()` after a JSON
round trip (no live value), which fisk-ai uses for exposed global flags: `boolean` or `string`,
wrapped in an array when cumulative.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from ._model import ArgModel, CmdModel, FlagModel

__all__ = ["derived_command_schema", "flag_restricted_schema", "value_description"]


def value_description(help_text: str, *, default: Sequence[str] = (), completions: Sequence[str] = ()) -> str:
    """A property description: the help, plus the default and suggested values when known.

    Args:
        help_text: The flag or arg help.
        default: Default values (fisk prints them as strings).
        completions: Completion hints.

    Returns:
        For example `Operation timeout (default: 5s)` or `Output format (default: text; suggested
        values: text, json, yaml)`.
    """
    notes: list[str] = []
    if default:
        notes.append("default: " + ", ".join(default))
    if completions:
        notes.append("suggested values: " + ", ".join(completions))
    if not notes:
        return help_text
    note = "; ".join(notes)
    return f"{help_text} ({note})" if help_text else note[0].upper() + note[1:]


def _array_wrapped(scalar: str, *, cumulative: bool) -> dict[str, JsonValue]:
    if cumulative:
        return {"type": "array", "items": {"type": scalar}}
    return {"type": scalar}


def flag_restricted_schema(flag: FlagModel) -> dict[str, JsonValue]:
    """Fisk's `FlagModel.RestrictedSchema()` on a deserialized model (a fresh dict every call).

    Args:
        flag: The flag.

    Returns:
        `{"description": help, "type": "boolean" | "string"}`, or an array of that type when cumulative.
    """
    schema: dict[str, JsonValue] = {"description": flag.help}
    schema.update(_array_wrapped("boolean" if flag.boolean else "string", cumulative=flag.cumulative))
    return schema


def _flag_property(flag: FlagModel) -> dict[str, JsonValue]:
    if flag.boolean:
        # Defaults of booleans ("true"/"false") are still worth saying: an unnegatable flag defaulting
        # to true cannot be switched off.
        return {"description": value_description(flag.help, default=flag.default), "type": "boolean"}
    schema: dict[str, JsonValue] = {
        "description": value_description(flag.help, default=flag.default, completions=flag.completions)
    }
    schema.update(_array_wrapped("string", cumulative=flag.cumulative))
    return schema


def _arg_property(arg: ArgModel) -> dict[str, JsonValue]:
    schema: dict[str, JsonValue] = {"description": value_description(arg.help, default=arg.default)}
    schema.update(_array_wrapped("string", cumulative=arg.cumulative))
    return schema


def derived_command_schema(cmd: CmdModel) -> dict[str, JsonValue]:
    """Derive a command input schema from its flag and arg model (for introspections without one).

    Args:
        cmd: The command.

    Returns:
        A new schema dict: non-hidden args then non-hidden flags; required args then required flags.
    """
    properties: dict[str, JsonValue] = {}
    required: list[JsonValue] = []
    for arg in cmd.args:
        if not arg.hidden:
            properties[arg.name] = _arg_property(arg)
            if arg.required:
                required.append(arg.name)
    for flag in cmd.flags:
        if not flag.hidden:
            properties[flag.name] = _flag_property(flag)
            if flag.required:
                required.append(flag.name)
    schema: dict[str, JsonValue] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = required
    return schema
