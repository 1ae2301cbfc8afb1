"""Turn a pydantic `ValidationError` into one readable line: file, line, key path, problem and fix.

Pydantic's own report is a multi-line dump of internal locations; an operator editing agent.yaml needs
the key, where it is, and what would be accepted. Of several problems the one earliest in the file is
reported, so fixing errors top to bottom converges.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Iterator
from functools import cache
from typing import Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from fiskai_core._gojson import go_quote
from fiskai_core.errors import ConfigError

from ._origin import KeyPath, Origin, format_path
from ._schema import MemorySettings, SessionsSettings, SettingError
from ._yaml import YamlFloat, YamlInt

__all__ = ["describe", "explain"]

# Option keys the backends accept (file, then jetstream), so a key written beside `options` instead of
# inside it gets a hint. The backends still validate `options` themselves.
_BACKEND_OPTION_KEYS: dict[type[BaseModel], frozenset[str]] = {
    MemorySettings: frozenset({"directory", "bucket", "prefix", "no_require_read_before_update"}),
    SessionsSettings: frozenset({"directory", "stream"}),
}

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "time_delta_type": "a duration such as 120s, 1m30s or 500ms",
    "invalid-json-value": "a plain YAML value (string, number, boolean, list or mapping)",
}


def explain(error: ValidationError, model: type[BaseModel], origin: Origin) -> ConfigError:
    """The `ConfigError` for the earliest problem in `error`.

    Args:
        error: what pydantic found while validating the file's data against `model`.
        model: the root model, used to list the keys allowed where an unknown key was found.
        origin: the file and its key lines.
    """
    details = error.errors(include_url=False)
    first = min(details, key=lambda detail: origin.line_of(_path(detail)) or 1 << 30)
    return _one(first, model, origin)


def describe(value: object) -> str:
    """How an error names a value the operator wrote."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, YamlInt | YamlFloat):
        return f"the number {value.text}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {go_quote(value)}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _path(detail: ErrorDetails) -> KeyPath:
    return tuple(part for part in detail["loc"] if isinstance(part, int) or not part.startswith("["))


def _one(detail: ErrorDetails, model: type[BaseModel], origin: Origin) -> ConfigError:
    path = _path(detail)
    kind = detail["type"]
    if kind == "extra_forbidden":
        return origin.error(path, _unknown_key(model, path))
    if kind == "value_error":
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, SettingError):
            return origin.error(path, str(cause), exact=True)
        return origin.error(path, str(cause) if cause is not None else detail["msg"])
    got = describe(detail["input"])
    if kind == "literal_error":
        expected = str((detail.get("ctx") or {}).get("expected", "")).replace("'", "")
        return origin.error(path, f"got {got}; expected one of {expected}")
    expected = _EXPECTED.get(kind)
    if expected is None:
        return origin.error(path, f"got {got}; {detail['msg'][:1].lower()}{detail['msg'][1:]}")
    if kind in ("model_type", "model_attributes_type"):
        block = _model_at(model, path)
        if block is not None:
            expected += " with keys " + ", ".join(field.alias or name for name, field in block.model_fields.items())
    if kind == "string_type" and isinstance(detail["input"], bool):
        expected += " (quote the value)"
    return origin.error(path, f"got {got}; expected {expected}")


def _unknown_key(model: type[BaseModel], path: KeyPath) -> str:
    key = str(path[-1])
    block = _model_at(model, path[:-1])
    if block is None:
        return "unknown key"
    # The YAML key is the field's alias where it has one (`pass`, a Python keyword).
    allowed = [field.alias or name for name, field in block.model_fields.items()]
    suggestion = _suggest(model, block, path, key, allowed)
    hint = f'did you mean "{suggestion}"? ' if suggestion else ""
    return f"unknown key; {hint}allowed keys: {', '.join(allowed)}"


def _suggest(model: type[BaseModel], block: type[BaseModel], path: KeyPath, key: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    if close:
        return close[0]
    parent = tuple(part for part in path[:-1] if isinstance(part, str))
    if key in _BACKEND_OPTION_KEYS.get(block, frozenset[str]()):
        return format_path((*parent, "options", key))
    # A key that exists exactly once elsewhere at the shallowest depth was probably put in the wrong
    # block (harness keys at the top level, `model` beside `llm`).
    homes = [home for home in _homes(model).get(key, []) if home[:-1] != parent]
    if homes:
        depth = min(len(home) for home in homes)
        shallowest = [home for home in homes if len(home) == depth]
        if len(shallowest) == 1:
            return format_path(shallowest[0])
    return ""


@cache
def _homes(model: type[BaseModel]) -> dict[str, list[tuple[str, ...]]]:
    """Every key of the schema mapped to the paths where it is allowed."""
    homes: dict[str, list[tuple[str, ...]]] = {}

    def walk(block: type[BaseModel], prefix: tuple[str, ...]) -> None:
        for name, info in block.model_fields.items():
            homes.setdefault(name, []).append((*prefix, name))
            nested = _nested_model(info.annotation)
            if nested is not None and len(prefix) < 8:
                walk(nested, (*prefix, name))

    walk(model, ())
    return homes


def _model_at(model: type[BaseModel], path: KeyPath) -> type[BaseModel] | None:
    """The model that validates the mapping at `path`, if it is a model (not a raw `options` dict)."""
    current: type[BaseModel] | None = model
    for part in path:
        if current is None:
            return None
        if isinstance(part, int):
            continue  # list items: the element model was already selected by the field's annotation
        info = current.model_fields.get(part)
        current = _nested_model(info.annotation) if info is not None else None
    return current


def _nested_model(annotation: object) -> type[BaseModel] | None:
    for candidate in _unwrap(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _unwrap(annotation: object) -> Iterator[object]:
    origin = get_origin(annotation)
    if origin in (list, Union, types.UnionType):
        for argument in get_args(annotation):
            yield from _unwrap(argument)
    else:
        yield annotation
