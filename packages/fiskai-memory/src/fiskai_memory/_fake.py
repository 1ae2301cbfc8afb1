"""`InMemoryMemoryStore`: a working memory `Store` held in a dict, for tests of the store's callers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from .errors import MemoryExistsError, MemoryNotFoundError, MemoryStaleError
from .keys import validate_key
from .store import Entry, Item, check_capacity, validate_write

__all__ = ["InMemoryMemoryStore"]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Stored:
    description: str
    content: str
    created: datetime
    updated: datetime
    revision: int


class InMemoryMemoryStore:
    """A memory `Store` in process memory, following the same rules as the real backends.

    With `require_read_before_update` it also behaves like the NATS KV backend's guard: an overwrite needs a
    read (or this store's own write) of the current revision, else `MemoryStaleError`; `bump` simulates
    another writer changing an entry behind this store's back.
    """

    def __init__(self, *, require_read_before_update: bool = False) -> None:
        """Start empty."""
        self._entries: dict[str, _Stored] = {}
        self._seen: dict[str, int] = {}
        self._revision = 0
        self._require_read = require_read_before_update

    async def list(self) -> list[Item]:
        return [
            Item(key=key, description=stored.description, created=stored.created, updated=stored.updated)
            for key, stored in sorted(self._entries.items())
        ]

    async def read(self, key: str) -> Entry:
        validate_key(key)
        stored = self._entries.get(key)
        if stored is None:
            raise MemoryNotFoundError(key)
        self._seen[key] = stored.revision
        return Entry(
            key=key,
            description=stored.description,
            content=stored.content,
            created=stored.created,
            updated=stored.updated,
        )

    async def write(self, key: str, description: str, content: str, *, overwrite: bool = False) -> None:
        description = validate_write(key, description, content)
        current = self._entries.get(key)
        if current is not None and not overwrite:
            raise MemoryExistsError(key)
        if current is not None and self._require_read and self._seen.get(key) != current.revision:
            self._seen.pop(key, None)
            raise MemoryStaleError(key)
        if current is None:
            check_capacity(len(self._entries))
        now = datetime.now(UTC)
        self._store(key, description, content, created=current.created if current else now, updated=now)
        self._seen[key] = self._revision

    async def delete(self, key: str) -> bool:
        validate_key(key)
        self._seen.pop(key, None)
        return self._entries.pop(key, None) is not None

    def bump(self, key: str, content: str) -> None:
        """Change an entry as another writer would, so a guarded overwrite from this store goes stale.

        Raises:
            MemoryNotFoundError: Nothing is stored under `key`.
        """
        current = self._entries.get(key)
        if current is None:
            raise MemoryNotFoundError(key)
        self._store(key, current.description, content, created=current.created, updated=datetime.now(UTC))

    def _store(self, key: str, description: str, content: str, *, created: datetime, updated: datetime) -> None:
        self._revision += 1
        self._entries[key] = _Stored(
            description=description, content=content, created=created, updated=updated, revision=self._revision
        )
