"""Durable key/value notes for fiskai agents.

A leaf library: imports no fiskai package. The NATS KV backend lives in `fiskai_memory.kv` (extra `nats`)
and is imported from there, so this package never needs nats-py.
"""

from .errors import (
    MemoryConfigError,
    MemoryExistsError,
    MemoryFullError,
    MemoryIOError,
    MemoryKeyError,
    MemoryNotFoundError,
    MemoryStaleError,
    MemoryStoreError,
    MemoryValueError,
)
from .file import FileMemoryStore, default_memory_directory, open_file_store
from .index import build_memory_index, format_memory_index
from .keys import MAX_KEY_LENGTH, is_valid_key, validate_key
from .options import (
    KNOWN_BACKENDS,
    FileOptions,
    KvOptions,
    check_backend,
    default_bucket_name,
    kv_prefix,
    parse_file_options,
    parse_kv_options,
)
from .store import (
    MAX_CONTENT_BYTES,
    MAX_DESCRIPTION_LENGTH,
    MAX_ENTRIES,
    MAX_ENTRY_BYTES,
    Entry,
    Item,
    Store,
    normalize_description,
    validate_write,
)
from .tool_access import Note, ToolAccess

__all__ = [
    "KNOWN_BACKENDS",
    "MAX_CONTENT_BYTES",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "MAX_KEY_LENGTH",
    "Entry",
    "FileMemoryStore",
    "FileOptions",
    "Item",
    "KvOptions",
    "MemoryConfigError",
    "MemoryExistsError",
    "MemoryFullError",
    "MemoryIOError",
    "MemoryKeyError",
    "MemoryNotFoundError",
    "MemoryStaleError",
    "MemoryStoreError",
    "MemoryValueError",
    "Note",
    "Store",
    "ToolAccess",
    "build_memory_index",
    "check_backend",
    "default_bucket_name",
    "default_memory_directory",
    "format_memory_index",
    "is_valid_key",
    "kv_prefix",
    "normalize_description",
    "open_file_store",
    "parse_file_options",
    "parse_kv_options",
    "validate_key",
    "validate_write",
]
