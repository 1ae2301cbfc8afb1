"""The memory store as the model's memory tools use it: outcomes as values, not exceptions.

`fiskai_core.builtins.memory_tools` takes anything shaped like `ToolAccess` (core's `MemoryAccess`
seam, satisfied structurally, so neither package imports the other): a miss is `None`, a taken key
or a stale overwrite is an outcome, and any other failure raises a `MemoryStoreError` whose message
the tool hands the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .errors import MemoryExistsError, MemoryNotFoundError, MemoryStaleError
from .store import Store

__all__ = ["Note", "ToolAccess"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """A memory's key, description and (when read) content."""

    key: str
    description: str
    content: str = ""


class ToolAccess:
    """A memory `Store` seen by the memory tools."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def list(self) -> list[Note]:
        """Every memory's key and description."""
        return [Note(key=item.key, description=item.description) for item in await self.store.list()]

    async def read(self, key: str) -> Note | None:
        """The memory under `key`, or None."""
        try:
            entry = await self.store.read(key)
        except MemoryNotFoundError:
            return None
        return Note(key=entry.key, description=entry.description, content=entry.content)

    async def write(
        self, key: str, description: str, content: str, *, overwrite: bool
    ) -> Literal["written", "exists", "stale"]:
        """Save a memory: `exists` when a create finds the key taken, `stale` for an unread overwrite."""
        try:
            await self.store.write(key, description, content, overwrite=overwrite)
        except MemoryExistsError:
            return "exists"
        except MemoryStaleError:
            return "stale"
        return "written"

    async def delete(self, key: str) -> bool:
        """Delete a memory; whether one existed."""
        return await self.store.delete(key)
