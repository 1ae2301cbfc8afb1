"""The trust-boundary entry: a model's raw JSON arguments decoded once into one validated value.

Every tool kind that turns arguments into a process (today the fisk command source) receives a
`ToolArguments` from `parse_arguments`, never the raw text, so the model's JSON is read by one decoder
with one set of rules: Go's `encoding/json` as fisk's `ArgsFromJSON` uses it (only the first value is
read, numbers keep their literal text as `JsonNumber`, a repeated key keeps its last value, invalid
UTF-8 becomes U+FFFD as in Go). Empty input and `null` are `{}`; anything but an object is refused
with fisk's own `invalid JSON arguments: ...` text.

What it does not do: check values against a schema (`validate_arguments`) or turn them into an argv
(the source's `build_argv`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fiskai_core._exact_json import dumps_exact
from fiskai_core._gojson import DecodedValue, GoJSONError, JsonNumber, decode_prefix, go_quote, is_only_space
from fiskai_core.errors import ArgumentsError

__all__ = ["ToolArguments", "arguments_from_value", "parse_arguments"]

_GO_KIND = {str: "string", JsonNumber: "number", bool: "bool", list: "array", dict: "object"}
"""Kind names in Go's `cannot unmarshal <kind>` message (note `bool`, where fisk itself says `boolean`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolArguments:
    """A model's tool call arguments: one JSON object, decoded."""

    values: Mapping[str, DecodedValue]
    """The object's members in first-seen key order (the last value of a repeated key)."""
    single: bool = True
    """False when more than whitespace followed the object. fisk's decoder ignores the rest; Go's
    `json.Unmarshal` (fisk-ai's global-flag split and required check) refuses such input."""
    null: bool = False
    """The input was JSON `null`: fisk reads it as `{}`, but a model that sends it did not send an object."""

    def json(self, *, sort_keys: bool = False) -> str:
        """The object as compact JSON, every number as written (sorted keys give a canonical form)."""
        return dumps_exact(dict(self.values), sort_keys=sort_keys)


def arguments_from_value(value: DecodedValue) -> ToolArguments:
    """Arguments a transport already decoded (numbers kept as `JsonNumber`): `None` is `null`.

    Raises:
        ArgumentsError: The value is not an object (nor null), in fisk's words.
    """
    if value is None:
        return ToolArguments(values={}, null=True)
    if not isinstance(value, dict):
        raise ArgumentsError(_not_object(value))
    return ToolArguments(values=value)


def _not_object(value: str | JsonNumber | bool | list[DecodedValue]) -> str:
    return (
        "invalid JSON arguments: json: cannot unmarshal "
        f"{_GO_KIND[type(value)]} into Go value of type map[string]interface {{}}"
    )


def parse_arguments(raw: str | bytes | None, *, command: str | None = None) -> ToolArguments:
    """Decode a model's tool arguments, as fisk's `ArgsFromJSON` does before rendering them.

    Args:
        raw: The JSON text as the model sent it; a `str` is encoded as UTF-8 (lone surrogates pass
            through as invalid bytes and, as in Go, decode to U+FFFD). `None`, empty input and `null`
            mean no arguments.
        command: The command the call is for (`cluster node drain`); when given, an error names it
            as fisk-ai does: `building command line for "<command>": invalid JSON arguments: ...`.

    Returns:
        The decoded object.

    Raises:
        ArgumentsError: `invalid JSON arguments: <Go decoder message>` for malformed or non-object input.
    """
    try:
        return _parse(raw)
    except ArgumentsError as err:
        if command is None:
            raise
        raise ArgumentsError(f"building command line for {go_quote(command)}: {err}") from err


def _parse(raw: str | bytes | None) -> ToolArguments:
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else (raw or b"")
    if not data:
        return ToolArguments(values={})
    try:
        value, end = decode_prefix(data)
    except GoJSONError as err:
        raise ArgumentsError(f"invalid JSON arguments: {err}") from err
    single = is_only_space(data[end:])
    if value is None:
        return ToolArguments(values={}, single=single, null=True)
    if not isinstance(value, dict):
        raise ArgumentsError(_not_object(value))
    return ToolArguments(values=value, single=single)
