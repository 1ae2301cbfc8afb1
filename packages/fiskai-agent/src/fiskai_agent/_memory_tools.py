"""memory_list / memory_read / memory_write / memory_delete over a `fiskai_memory` Store (reference 9.4).

Agent runs only (never MCP or A2A). Expected outcomes are in-band results the model can act on: a miss,
an existing key on create, a stale overwrite. Anything else (an invalid key, too large, full, IO) is an
error result naming the key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic import JsonValue

from fiskai_core.sanitize import sanitize_for_terminal
from fiskai_core.tools import ToolResult
from fiskai_memory import (
    MemoryExistsError,
    MemoryNotFoundError,
    MemoryStaleError,
    MemoryStoreError,
    Store,
)

__all__ = ["MEMORY_TOOL_NAMES", "MemoryTool", "memory_tools"]

MEMORY_TOOL_NAMES = ("memory_list", "memory_read", "memory_write", "memory_delete")
_TRACE_KEY_RUNES = 200

_KEY: dict[str, JsonValue] = {
    "type": "string",
    "description": "The memory key: letters, digits and '.', '_', '=' or '-' (no slashes or spaces).",
}

_SPECS: dict[str, tuple[str, dict[str, JsonValue]]] = {
    "memory_list": (
        "List the keys and descriptions of every memory saved on earlier runs (the live view; the index in "
        "the system prompt shows the state at the start of the run).",
        {"type": "object", "properties": {}},
    ),
    "memory_read": (
        "Read one memory by key: its description and full content. A key that holds nothing is answered with "
        '{"found": false}, not an error.',
        {"type": "object", "properties": {"key": _KEY}, "required": ["key"]},
    ),
    "memory_write": (
        "Save a durable fact for future runs under a key, with a one-line description. Creating fails when "
        "the key already exists unless overwrite is true; read a memory before you overwrite it.",
        {
            "type": "object",
            "properties": {
                "key": _KEY,
                "description": {"type": "string", "description": "One line saying what the memory holds."},
                "content": {"type": "string", "description": "The memory itself (at most 64 KiB)."},
                "overwrite": {
                    "type": "boolean",
                    "description": "Replace an existing memory under the key (default false).",
                },
            },
            "required": ["key", "description", "content"],
        },
    ),
    "memory_delete": (
        "Delete the memory under a key. Deleting a key that holds nothing is not an error.",
        {"type": "object", "properties": {"key": _KEY}, "required": ["key"]},
    ),
}


def _json(body: dict[str, object]) -> ToolResult:
    return ToolResult(text=json.dumps(body, ensure_ascii=False, separators=(",", ":")))


class MemoryTool:
    """One of the four memory tools bound to a store."""

    def __init__(self, name: str, store: Store) -> None:
        self._name = name
        self._store = store
        self._description, self._schema = _SPECS[name]

    @property
    def name(self) -> str:
        """The tool name."""
        return self._name

    @property
    def tags(self) -> Sequence[str]:
        """Built-ins carry no tags."""
        return ()

    @property
    def description(self) -> str:
        """What the model reads."""
        return self._description

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        """The argument schema (shared; never mutate it)."""
        return self._schema

    def trace_line(self, arguments: str | bytes | None) -> str:
        """`memory_read <key>`, or just the name (the key sanitized and capped)."""
        data = _decode(arguments)
        key = data.get("key") if isinstance(data, dict) else None
        if self._name == "memory_list" or not isinstance(key, str):
            return self._name
        return f"{self._name} {sanitize_for_terminal(key, _TRACE_KEY_RUNES)}"

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """Run the operation; every outcome is a result."""
        data = _decode(arguments)
        if not isinstance(data, dict):
            return ToolResult(text=f"invalid {self._name} input: {data}", is_error=True)
        if self._name == "memory_list":
            return await self._list()
        key = data.get("key")
        if not isinstance(key, str):
            return ToolResult(text=f'invalid {self._name} input: "key" must be a string', is_error=True)
        if self._name == "memory_read":
            return await self._read(key)
        if self._name == "memory_delete":
            return await self._delete(key)
        return await self._write(key, data)

    async def _list(self) -> ToolResult:
        try:
            items = await self._store.list()
        except MemoryStoreError as err:
            return ToolResult(text=f"listing memory: {err}", is_error=True)
        return _json({"memories": [{"key": item.key, "description": item.description} for item in items]})

    async def _read(self, key: str) -> ToolResult:
        try:
            entry = await self._store.read(key)
        except MemoryNotFoundError:
            return _json(
                {
                    "found": False,
                    "reason": f'no memory is stored under key "{key}"; call memory_list for the current set',
                }
            )
        except MemoryStoreError as err:
            return ToolResult(text=f'reading memory "{key}": {err}', is_error=True)
        return _json({"found": True, "key": entry.key, "description": entry.description, "content": entry.content})

    async def _delete(self, key: str) -> ToolResult:
        try:
            existed = await self._store.delete(key)
        except MemoryStoreError as err:
            return ToolResult(text=f'deleting memory "{key}": {err}', is_error=True)
        return _json({"deleted": existed})

    async def _write(self, key: str, data: dict[str, Any]) -> ToolResult:
        description, content, overwrite = data.get("description"), data.get("content"), data.get("overwrite", False)
        if not isinstance(description, str) or not isinstance(content, str) or not isinstance(overwrite, bool):
            return ToolResult(
                text='invalid memory_write input: "description" and "content" must be strings and "overwrite" a '
                "boolean",
                is_error=True,
            )
        try:
            await self._store.write(key, description, content, overwrite=overwrite)
        except MemoryExistsError:
            return _json({"written": False, "reason": await self._exists_reason(key)})
        except MemoryStaleError:
            return _json(
                {
                    "written": False,
                    "reason": f'cannot overwrite memory "{key}": read it first with memory_read to get the current '
                    "value, then call memory_write again with overwrite true. This guards against replacing a "
                    "memory you have not seen or that changed since you read it.",
                }
            )
        except MemoryStoreError as err:
            return ToolResult(text=f'writing memory "{key}": {err}', is_error=True)
        return _json({"written": True})

    async def _exists_reason(self, key: str) -> str:
        try:
            existing = await self._store.read(key)
            described = f" (description: {json.dumps(existing.description, ensure_ascii=False)})"
        except MemoryStoreError:
            described = ""
        return (
            f'a memory already exists under key "{key}"{described}; call memory_write again with overwrite true to '
            "replace it, or choose a different key"
        )


def _decode(arguments: str | bytes | None) -> dict[str, Any] | str:
    try:
        text = arguments.decode() if isinstance(arguments, bytes) else (arguments or "")
        decoded: object = json.loads(text) if text.strip() else {}
    except (ValueError, UnicodeDecodeError) as err:
        return str(err)
    if decoded is None:
        return {}
    if not isinstance(decoded, dict):
        return "expected a JSON object"
    return cast("dict[str, Any]", decoded)


def memory_tools(store: Store) -> list[MemoryTool]:
    """The four memory tools over `store`, in their documented order."""
    return [MemoryTool(name, store) for name in MEMORY_TOOL_NAMES]
