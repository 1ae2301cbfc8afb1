"""The shipped v1 schemas and the validators built from them.

Each message schema is `allOf: [header]` plus its own properties and `unevaluatedProperties: false`.
`unevaluatedProperties` makes a validator collect annotations through the `allOf`, which costs most of a
millisecond per message here. For a schema of exactly that shape, the same rule can be written flat:
the header's properties and the message's in one `properties` (combined with `allOf` where both name a
key), the union of both `required` lists, and `additionalProperties: false`. A document is valid
against one exactly when it is valid against the other; the flat form is derived from the shipped file
when a validator is built, any schema of another shape is used as shipped, and the tests check both
forms give the same verdict on every example.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

__all__ = ["COMMON", "SCHEMA_BASE", "Checker", "checker_for", "flat_schema", "registry", "shipped_schema"]

SCHEMA_BASE: Final = "https://choria.io/schemas/io.choria.fisk-ai.v1/"
COMMON: Final = "common.json"
_HEADER_REF: Final = f"{COMMON}#/$defs/header"
_FLATTENABLE_KEYS: Final = {"$schema", "$id", "title", "allOf", "properties", "required", "unevaluatedProperties"}


@dataclass(frozen=True, slots=True)
class Checker:
    """A compiled schema: a fast yes/no, and the errors when the answer is no."""

    is_valid: Callable[[Mapping[str, Any]], bool]
    iter_errors: Callable[[Mapping[str, Any]], Iterator[ValidationError]]


@cache
def registry() -> Registry[Any]:
    """Every shipped schema, by its `$id`."""
    folder = resources.files("fiskai_a2a.protocol").joinpath("schemas", "v1")
    pairs: list[tuple[str, Resource[Any]]] = []
    for entry in folder.iterdir():
        if entry.name.endswith(".json"):
            contents = json.loads(entry.read_text(encoding="utf-8"))
            pairs.append((contents["$id"], Resource.from_contents(contents, default_specification=DRAFT202012)))
    empty: Registry[Any] = Registry()
    return empty.with_resources(pairs)


def shipped_schema(file: str) -> dict[str, Any]:
    """A shipped schema document, as shipped (a copy)."""
    return copy.deepcopy(registry()[SCHEMA_BASE + file].contents)


def flat_schema(file: str) -> dict[str, Any] | None:
    """The flat equivalent of a message schema (see the module docstring); None for any other shape."""
    schema = shipped_schema(file)
    header = shipped_schema(COMMON)["$defs"]["header"]
    if (
        set(schema) - _FLATTENABLE_KEYS
        or schema.get("allOf") != [{"$ref": _HEADER_REF}]
        or schema.get("unevaluatedProperties") is not False
        or set(header) - {"type", "required", "properties"}
        or header.get("type") != "object"
    ):
        return None
    properties: dict[str, Any] = {key: _rebase(value) for key, value in header["properties"].items()}
    for key, value in schema.get("properties", {}).items():
        properties[key] = {"allOf": [properties[key], value]} if key in properties else value
    required = list(dict.fromkeys([*header.get("required", []), *schema.get("required", [])]))
    return {
        "$schema": schema["$schema"],
        "$id": schema["$id"],
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


@cache
def checker_for(file: str, *, flat: bool = True) -> Checker:
    """The validator of a shipped schema; the flat form when `flat` and the schema has that shape."""
    schema = (flat_schema(file) if flat else None) or shipped_schema(file)
    validator = Draft202012Validator(schema, registry=registry())
    return Checker(
        is_valid=cast("Callable[[Mapping[str, Any]], bool]", validator.is_valid),  # pyright: ignore[reportUnknownMemberType]
        iter_errors=cast(
            "Callable[[Mapping[str, Any]], Iterator[ValidationError]]",
            validator.iter_errors,  # pyright: ignore[reportUnknownMemberType]
        ),
    )


def _rebase(value: Any) -> Any:
    """Point the header's local references (`#/$defs/...`) at common.json, where they were written."""
    if isinstance(value, dict):
        mapping = cast("dict[str, Any]", value)
        return {
            key: (COMMON + item if key == "$ref" and isinstance(item, str) and item.startswith("#") else _rebase(item))
            for key, item in mapping.items()
        }
    if isinstance(value, list):
        return [_rebase(item) for item in cast("list[Any]", value)]
    return value
