"""The memory `Store` seam, its values, and the write rules every backend shares."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from .errors import MemoryFullError, MemoryValueError
from .keys import validate_key

__all__ = [
    "MAX_CONTENT_BYTES",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "Entry",
    "Item",
    "Store",
    "check_capacity",
    "normalize_description",
    "validate_write",
]

MAX_CONTENT_BYTES = 65536
"""The largest content, in UTF-8 bytes (64 KiB)."""

MAX_DESCRIPTION_LENGTH = 500
"""The longest description after normalization, in characters."""

MAX_ENTRIES = 1024
"""The most entries a store holds; only a create is refused at the limit."""

MAX_ENTRY_BYTES = MAX_CONTENT_BYTES + (2 * MAX_DESCRIPTION_LENGTH * 4 + 64)
"""The largest stored value, header included (69600): the smallest KV `max_value_size` that fits."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Item:
    """One entry as a listing shows it: no content."""

    key: str
    description: str
    created: datetime | None = None
    """When the entry was first written, if the stored value says (timezone-aware, UTC)."""
    updated: datetime | None = None
    """When the entry was last written, if the stored value says (timezone-aware, UTC)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One entry as a read returns it."""

    key: str
    description: str
    content: str
    created: datetime | None = None
    updated: datetime | None = None


class Store(Protocol):
    """A small, durable key/value memory that a model reads and writes across runs.

    Called by the memory tools from the agent's run task, by the start-of-run index, and by the `fiskai
    memory` operator commands. A store is used from one task at a time; several processes may share one
    backing store, and each backend keeps creates race-safe across them: of two concurrent creates of the
    same key exactly one succeeds and the other raises `MemoryExistsError`.

    Every method validates its key first (`MemoryKeyError`), so a key can never reach outside the store.
    Backend failures raise `MemoryIOError` (or `MemoryConfigError` when opening); nothing here is
    default-deny: the caller (the agent) decides whether the model gets memory at all.
    """

    async def list(self) -> list[Item]:
        """The stored entries' keys and descriptions, sorted by key.

        Names in the backing store that are not valid keys, symlinks, and entries that cannot be read are
        skipped, not reported.
        """
        ...

    async def read(self, key: str) -> Entry:
        """The entry stored under `key`.

        Raises:
            MemoryKeyError: The key is invalid.
            MemoryNotFoundError: Nothing is stored under the key.
            MemoryIOError: The entry exists but cannot be read (for example it is a symlink).
        """
        ...

    async def write(self, key: str, description: str, content: str, *, overwrite: bool = False) -> None:
        """Store an entry: create it, or with `overwrite` replace what is there.

        The description is normalized to one line (`normalize_description`). A create keeps the entry
        limit; an overwrite keeps the entry's `created` time when it can read it.

        Raises:
            MemoryKeyError: The key is invalid.
            MemoryValueError: The description is empty or the content is over `MAX_CONTENT_BYTES`.
            MemoryExistsError: `overwrite` is off and the key is already stored.
            MemoryFullError: A create would go past `MAX_ENTRIES`.
            MemoryStaleError: A read-before-update backend has no current read of the key from this run.
            MemoryIOError: The backend failed.
        """
        ...

    async def delete(self, key: str) -> bool:
        """Remove the entry under `key`; idempotent.

        Returns:
            Whether an entry was there (best effort on backends that cannot tell atomically).

        Raises:
            MemoryKeyError: The key is invalid.
            MemoryIOError: The backend failed.
        """
        ...


def normalize_description(description: str, *, limit: int = MAX_DESCRIPTION_LENGTH) -> str:
    """Collapse a description to one trimmed line of at most `limit` characters.

    Control characters (newline and tab included) become spaces and runs of whitespace become one space,
    so a description can never break out of the frontmatter line or the memory index.
    """
    spaced = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in description)
    return " ".join(spaced.split())[:limit].rstrip()


def validate_write(key: str, description: str, content: str) -> str:
    """Apply the shared write rules.

    Args:
        key: The entry's key.
        description: The description as given.
        content: The content as given.

    Returns:
        The normalized description to store.

    Raises:
        MemoryKeyError: The key is invalid.
        MemoryValueError: The description is empty after normalization, the content is too large, or either
            holds a lone surrogate.
    """
    validate_key(key)
    normalized = normalize_description(description)
    if not normalized:
        raise MemoryValueError("a memory description must not be empty")
    try:
        # Strict: a lone surrogate (legal in a Python str, not in UTF-8) cannot be stored by any backend.
        normalized.encode("utf-8")
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError as err:
        raise MemoryValueError("memory description and content must be valid Unicode text") from err
    if size > MAX_CONTENT_BYTES:
        raise MemoryValueError(f"memory content is too large: {size} bytes, limit is {MAX_CONTENT_BYTES}")
    return normalized


def check_capacity(entries: int) -> None:
    """Refuse a create when the store already holds `MAX_ENTRIES` entries.

    Raises:
        MemoryFullError: `entries` is at or over the limit.
    """
    if entries >= MAX_ENTRIES:
        raise MemoryFullError(
            f"memory is full: {entries} entries, limit is {MAX_ENTRIES}; delete an entry before creating another",
            entries=entries,
            limit=MAX_ENTRIES,
        )
