"""The fiskai_memory exception tree.

fiskai_memory is a leaf library, so it has its own base rather than fiskai_core's `FiskaiError`
(`MemoryError` is a Python builtin, hence `MemoryStoreError`). The memory tools turn the expected
outcomes (exists, not found, stale) into in-band results for the model; the rest become error results.

    MemoryStoreError               base of every error raised on purpose
    +-- MemoryKeyError             the key breaks the key rules (also the path-traversal defence)
    +-- MemoryValueError           empty description or content over the size limit
    +-- MemoryFullError            the store holds the entry limit; delete one before creating another
    +-- MemoryExistsError          a create found the key already present
    +-- MemoryNotFoundError        nothing is stored under the key
    +-- MemoryStaleError           an overwrite without (or after a changed) read; read it again first
    +-- MemoryConfigError          the backend cannot be opened as configured
    +-- MemoryIOError              the backend failed (a file that is not a regular file, IO, network)
"""

from __future__ import annotations

__all__ = [
    "MemoryConfigError",
    "MemoryExistsError",
    "MemoryFullError",
    "MemoryIOError",
    "MemoryKeyError",
    "MemoryNotFoundError",
    "MemoryStaleError",
    "MemoryStoreError",
    "MemoryValueError",
]


class MemoryStoreError(Exception):
    """Base of every error fiskai_memory raises on purpose."""


class MemoryKeyError(MemoryStoreError, ValueError):
    """A key breaks the key rules; the message says which rule, in fisk-ai's words."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class MemoryValueError(MemoryStoreError, ValueError):
    """A write's description is empty after normalization or its content is too large."""


class MemoryFullError(MemoryStoreError):
    """A create would take the store past its entry limit."""

    def __init__(self, message: str, *, entries: int, limit: int) -> None:
        super().__init__(message)
        self.entries = entries
        self.limit = limit


class MemoryExistsError(MemoryStoreError):
    """A create (overwrite off) found an entry already stored under the key."""

    def __init__(self, key: str) -> None:
        super().__init__(f'a memory already exists under key "{key}"')
        self.key = key


class MemoryNotFoundError(MemoryStoreError, LookupError):
    """Nothing is stored under the key."""

    def __init__(self, key: str) -> None:
        super().__init__(f'no memory is stored under key "{key}"')
        self.key = key


class MemoryStaleError(MemoryStoreError):
    """An overwrite was refused because this run has not read the current value.

    Read-before-update backends (NATS KV) raise it when the entry was never read in this run, or when it
    changed since it was read. The message tells the model what to do next.
    """

    def __init__(self, key: str) -> None:
        super().__init__(
            f'cannot overwrite memory "{key}": read it first with memory_read to get the current value, '
            "then call memory_write again with overwrite true. This guards against replacing a memory you "
            "have not seen or that changed since you read it."
        )
        self.key = key


class MemoryConfigError(MemoryStoreError):
    """The backend cannot be opened as configured; the message names the setting and the fix."""


class MemoryIOError(MemoryStoreError):
    """The backend failed to store or fetch an entry (a planted symlink, a disk error, a lost server)."""
