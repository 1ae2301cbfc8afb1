"""The Go agent's fingerprint hashes, byte for byte, so a session either implementation wrote resumes in the other.

The Go agent hashes what `encoding/json` makes of its values: compact, map keys sorted by their bytes, a
struct's fields in declaration order (its untagged `ToolDef`: `Name`, `Description`, `InputSchema`,
`DeferLoading`), `<`, `>` and `&` escaped as `\\u003c`, `\\u003e`, `\\u0026`, U+2028 and U+2029 escaped,
and a float64 written in its shortest form without a trailing `.0` (`1`, `0.5`, `1e+21`, `1e-7`).
`sha256_json` (sorted keys, Python's spelling) is what fiskai wrote before issue 31; a resume accepts
either, so older fiskai sessions keep resuming.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, cast

__all__ = ["GoToolDef", "go_json", "go_system_hash", "go_tools_hash"]

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_ESCAPES.update({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


class GoToolDef:
    """A tool definition as the Go agent's struct: encoded with its fields in declaration order."""

    __slots__ = ("defer_loading", "description", "input_schema", "name")

    def __init__(self, name: str, description: str, input_schema: Mapping[str, Any], defer_loading: bool) -> None:
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.defer_loading = defer_loading


def _string(text: str) -> str:
    out: list[str] = ['"']
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char < " ":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _float(value: float) -> str:
    """Go's `strconv.FormatFloat(f, 'f' or 'e', -1, 64)` as `encoding/json` picks between them."""
    if not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {value}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        text = repr(value)
        if "e" in text:  # Python switches to exponents earlier than Go does: the same digits, positional
            text = format(Decimal(text), "f")
        return text.removesuffix(".0")
    text = repr(value)  # shortest digits, exponent form: 1e+21, 1e-07
    mantissa, _, exponent = text.partition("e")
    sign = exponent[0]
    digits = exponent[1:].lstrip("0") or "0"
    return f"{mantissa.removesuffix('.0')}e{sign}{digits}"


def go_json(value: Any) -> str:
    """`value` as Go's `json.Marshal` writes it (maps sorted by key bytes; a `GoToolDef` in field order)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, GoToolDef):
        return (
            f'{{"Name":{_string(value.name)},"Description":{_string(value.description)},'
            f'"InputSchema":{go_json(value.input_schema)},"DeferLoading":{go_json(value.defer_loading)}}}'
        )
    if isinstance(value, Mapping):
        mapping = cast("Mapping[object, Any]", value)
        items = sorted(((str(k), v) for k, v in mapping.items()), key=lambda item: item[0].encode())
        return "{" + ",".join(f"{_string(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        sequence = cast("Sequence[Any]", value)
        return "[" + ",".join(go_json(item) for item in sequence) + "]"
    text = getattr(value, "text", None)  # a JSON number kept as written (json.Number)
    if isinstance(text, str):
        return text
    raise TypeError(f"json: unsupported type: {type(value).__name__}")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def go_system_hash(blocks: Sequence[str]) -> str:
    """The Go agent's `system_hash`: hex SHA-256 of the JSON array of the system blocks' texts."""
    return _sha256(go_json(list(blocks)))


def go_tools_hash(defs: Sequence[GoToolDef]) -> str:
    """The Go agent's `tools_hash`: hex SHA-256 of the JSON of its `[]ToolDef` in request order."""
    return _sha256(go_json(list(defs)))
