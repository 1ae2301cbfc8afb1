"""JSON whose numbers keep the text they were written with, both ways.

A model (or a peer, or an MCP client) that sends `{"ratio": 1.50, "count": 1e2}` means the command to
receive `1.50` and `1e2`, as fisk's `ArgsFromJSON` passes them (Go's `json.Number`). Python's decoders
turn both into floats (`1.5`, `100.0`), so every path that carries arguments decodes with this module
instead, once, at the edge where the bytes arrive:

* `loads_exact`: the standard library's C scanner with number hooks, for transport bodies (an HTTP
  response, an A2A message, an MCP request) that are JSON already checked to be well formed by their
  own framing; numbers become `JsonNumber`s. `fiskai_core.tools.parse_arguments` is the one decoder for
  raw argument text, with Go's exact error words.
* `dumps_exact`: the reverse, writing a `JsonNumber` verbatim (for a remote call, a digest, a display).
"""

from __future__ import annotations

import json
from typing import cast

from fiskai_core._gojson import DecodedValue, JsonNumber

__all__ = ["dumps_exact", "exact_of", "loads_exact", "plain_json"]


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def loads_exact(data: str | bytes) -> DecodedValue:
    """Decode one JSON document, keeping every number's text as a `JsonNumber`.

    Raises:
        ValueError: The text is not valid JSON (NaN and Infinity included), or nests too deeply.
    """
    try:
        return cast(
            "DecodedValue",
            json.loads(data, parse_int=JsonNumber, parse_float=JsonNumber, parse_constant=_no_constant),
        )
    except RecursionError:
        raise ValueError("JSON nests too deeply") from None


def dumps_exact(value: DecodedValue, *, sort_keys: bool = False) -> str:
    """Compact JSON text for a decoded value; `JsonNumber`s are written as they were read."""
    out: list[str] = []
    _write(value, out, sort_keys)
    return "".join(out)


# One encoder for every leaf: json.dumps with any option set builds a new JSONEncoder per call, and a
# remote call's request writes a few dozen keys and strings.
_encode_leaf = json.JSONEncoder(ensure_ascii=False).encode


def _write(value: DecodedValue, out: list[str], sort_keys: bool) -> None:
    if isinstance(value, JsonNumber):
        out.append(value.text)
    elif isinstance(value, dict):
        out.append("{")
        items = sorted(value.items()) if sort_keys else value.items()
        for index, (key, item) in enumerate(items):
            if index:
                out.append(",")
            out.append(_encode_leaf(key))
            out.append(":")
            _write(item, out, sort_keys)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out, sort_keys)
        out.append("]")
    else:
        out.append(_encode_leaf(value))


def plain_json(value: DecodedValue) -> object:
    """The value with numbers as Python ints and floats (for APIs that take plain JSON values)."""
    if isinstance(value, JsonNumber):
        text = value.text
        if any(ch in text for ch in ".eE"):
            return float(text)
        return int(text)
    if isinstance(value, dict):
        return {key: plain_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_json(item) for item in value]
    return value


def exact_of(value: object) -> DecodedValue:
    """Plain JSON as decoded values, each number as the text Python writes for it (when no exact text exists)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return JsonNumber(json.dumps(value))
    if isinstance(value, dict):
        return {str(k): exact_of(v) for k, v in cast("dict[object, object]", value).items()}
    if isinstance(value, list):
        return [exact_of(v) for v in cast("list[object]", value)]
    return str(value)
