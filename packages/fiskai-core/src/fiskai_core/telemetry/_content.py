"""Content capture within a byte cap: whole messages dropped oldest first, then text shortened.

A content attribute is one JSON document in the GenAI semantic-convention shape. Over `max_bytes`
(measured on the encoded JSON, so a control character costs its 6-byte escape) the oldest messages go
first, the newest is always kept, and then the longest strings are cut with a marker, so what is
exported always parses: a collector never receives half a document.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["OMITTED", "Fitted", "encoded_size", "fit_json", "fit_messages"]

OMITTED = "[omitted by fisk-ai]"
"""Stands in for thinking signatures and provider-specific payloads."""

_MARKER = "[truncated by fisk-ai: {n} bytes omitted]"
_MAX_ROUNDS = 64


@dataclass(frozen=True, slots=True)
class Fitted:
    """A document that fits, and what was left out to make it fit."""

    text: str
    dropped: int = 0
    """Whole messages dropped, oldest first."""
    truncated: bool = False
    """Some text was shortened (or, past hope, the document emptied)."""


def _encode(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encoded_size(value: object) -> int:
    """Bytes of `value` as compact JSON (UTF-8; a lone surrogate counted like the 6-byte escape it needs)."""
    return len(_encode(value).encode("utf-8", "backslashreplace"))


def fit_messages(messages: list[Any], max_bytes: int) -> Fitted:
    """`messages` as one document of at most `max_bytes`, dropping the oldest whole messages first."""
    kept = list(messages)
    size = encoded_size(kept)
    dropped = 0
    while size > max_bytes and len(kept) > 1:
        # The separator comma goes with the message.
        size -= encoded_size(kept[0]) + 1
        kept.pop(0)
        dropped += 1
    fitted = fit_json(kept, max_bytes)
    return Fitted(fitted.text, dropped=dropped, truncated=fitted.truncated)


def fit_json(value: object, max_bytes: int) -> Fitted:
    """`value` as JSON of at most `max_bytes`, its longest strings cut with a marker until it fits."""
    text = _encode(value)
    size = len(text.encode("utf-8", "backslashreplace"))
    if size <= max_bytes:
        return Fitted(text)
    # A private copy to cut, boxed so a bare string is cut like any other.
    box: list[Any] = [json.loads(text)]
    for _ in range(_MAX_ROUNDS):
        excess = size - max_bytes
        slot = _longest_string(box)
        if slot is None:
            break
        get, put = slot
        current = get()
        current_size = encoded_size(current) - 2
        keep = max(0, current_size - excess - len(_MARKER) - 12)
        put(_cut(current, keep) + _MARKER.format(n=max(1, current_size - keep)))
        text = _encode(box[0])
        size = len(text.encode("utf-8", "backslashreplace"))
        if size <= max_bytes:
            return Fitted(text, truncated=True)
    empty: object = [] if isinstance(value, list) else ""
    return Fitted(_encode(empty), truncated=True)


def _cut(text: str, budget: int) -> str:
    """The longest prefix of `text` whose JSON-escaped size is at most `budget` bytes."""
    prefix = text[:budget]
    while prefix and encoded_size(prefix) - 2 > budget:
        over = encoded_size(prefix) - 2 - budget
        prefix = prefix[: max(0, len(prefix) - max(1, over // 6))]
    return prefix


def _longest_string(doc: object) -> tuple[Callable[[], str], Callable[[str], None]] | None:
    """Accessors of the longest string in `doc` (a value or a key's value), or None when it has none."""
    best: tuple[int, Any, Any] | None = None
    stack: list[object] = [doc]
    while stack:
        node = stack.pop()
        holder: Any = node
        if isinstance(node, dict):
            items = cast("dict[str, object]", node).items()
        elif isinstance(node, list):
            items = enumerate(cast("list[object]", node))
        else:
            continue
        for key, child in cast("Iterable[tuple[str | int, object]]", items):
            if isinstance(child, str):
                if best is None or len(child) > best[0]:
                    best = (len(child), holder, key)
            else:
                stack.append(child)
    if best is None or best[0] <= len(_MARKER):
        return None
    _, container, key = best

    def get() -> str:
        return cast("str", container[key])

    def put(value: str) -> None:
        container[key] = value

    return get, put
