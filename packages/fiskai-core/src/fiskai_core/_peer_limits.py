"""The local limits applied to what a remote peer advertises and returns, whatever the peer sends.

A peer's card and replies are untrusted input that ends up in the model's request, so each part gets
the limit a local tool has, or a bound chosen from what real local tools use:
* Output: `MAX_TOOL_OUTPUT_BYTES` (64 KiB), head and tail kept around the same marker, as a local
  command's capture does; the command line a reply names gets 4 KiB the same way.
* Names: `MAX_TOOL_NAME_LENGTH` (128), as for an application's commands.
* Input schemas: a JSON object schema (`type`, when present, is "object"; `properties` an object of
  schemas; `required` a list of names), at most `MAX_REMOTE_SCHEMA_BYTES` (64 KiB) as JSON. The largest
  schema of the 221 NATS CLI tools is 5,034 bytes.
* Descriptions: at most `MAX_REMOTE_DESCRIPTION_CHARS` (4,096 characters); the longest of the NATS CLI
  tools is 1,222. Local descriptions are the binary's own help and are not capped.
* Tags: the `Tags: a, b` line that ends a fisk tool's description (the only place a card carries them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Final, cast

from fiskai_core.exec import MAX_TOOL_OUTPUT_BYTES, HeadTailCapture

__all__ = [
    "MAX_REMOTE_COMMAND_BYTES",
    "MAX_REMOTE_DESCRIPTION_CHARS",
    "MAX_REMOTE_SCHEMA_BYTES",
    "capped_description",
    "capped_text",
    "description_tags",
    "schema_problem",
    "shown_name",
]

MAX_REMOTE_SCHEMA_BYTES: Final = 65536
MAX_REMOTE_DESCRIPTION_CHARS: Final = 4096
MAX_REMOTE_COMMAND_BYTES: Final = 4096
_MAX_TAGS: Final = 32
_TAG = re.compile(r"[^\s,]{1,64}")
_TAGS_PREFIX: Final = "Tags: "
_DESCRIPTION_MARKER: Final = "\n...[description truncated]..."
_SHOWN_NAME_CHARS: Final = 64


def capped_text(text: str, limit: int = MAX_TOOL_OUTPUT_BYTES) -> tuple[str, bool]:
    """`text` within `limit` UTF-8 bytes: whole, or head and tail halves around the truncation marker.

    Returns:
        The text and whether anything was dropped.
    """
    if len(text) * 4 <= limit:  # no character takes more than 4 bytes
        return text, False
    data = text.encode("utf-8", "surrogatepass")  # JSON can carry lone surrogates; they become U+FFFD
    if len(data) <= limit:
        return text, False
    capture = HeadTailCapture(limit)
    capture.write(data)
    return capture.result().text(), True


def description_tags(description: str) -> tuple[str, ...]:
    """The tags a fisk tool lists on its description's last line (`Tags: a, b`, after a blank line).

    Anything that does not look exactly like that line gives no tags.
    """
    before, newline, last = description.rpartition("\n")
    if not last.startswith(_TAGS_PREFIX) or (newline and not before.endswith("\n")):
        return ()
    tags = last[len(_TAGS_PREFIX) :].split(", ")
    if len(tags) > _MAX_TAGS or not all(_TAG.fullmatch(tag) for tag in tags):
        return ()
    return tuple(tags)


def capped_description(description: str, tags: tuple[str, ...]) -> str:
    """`description` within `MAX_REMOTE_DESCRIPTION_CHARS`, its head kept and its `Tags:` line still last."""
    if len(description) <= MAX_REMOTE_DESCRIPTION_CHARS:
        return description
    tail = f"\n\n{_TAGS_PREFIX}{', '.join(tags)}" if tags else ""
    keep = MAX_REMOTE_DESCRIPTION_CHARS - len(_DESCRIPTION_MARKER) - len(tail)
    return description[:keep] + _DESCRIPTION_MARKER + tail


def schema_problem(schema: Mapping[str, object]) -> str:
    """Why `schema` cannot be a tool's input schema, or "" when it can."""
    kind = schema.get("type", "object")
    if kind != "object":
        return f"its input schema has type {json.dumps(kind)[:40]}, not an object schema"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or not all(
        isinstance(p, dict | bool) for p in cast("dict[str, object]", properties).values()
    ):
        return 'its input schema\'s "properties" is not an object of schemas'
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in cast("list[object]", required)):
        return 'its input schema\'s "required" is not a list of names'
    size = len(json.dumps(schema, ensure_ascii=False).encode())
    if size > MAX_REMOTE_SCHEMA_BYTES:
        return f"its input schema is {size} bytes, over the {MAX_REMOTE_SCHEMA_BYTES}-byte limit"
    return ""


def shown_name(name: str) -> str:
    """A peer's tool name as safe to print in a warning: control characters escaped, clipped."""
    clipped = name if len(name) <= _SHOWN_NAME_CHARS else f"{name[:_SHOWN_NAME_CHARS]}…"
    return json.dumps(clipped, ensure_ascii=False)[1:-1]
