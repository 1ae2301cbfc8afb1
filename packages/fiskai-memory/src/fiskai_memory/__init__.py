"""Durable key/value notes for fiskai agents.

A leaf library: imports no fiskai package. The top level holds what a caller that opens a store and hands it
to an agent needs; everything else is importable from the public module that defines it:

- `fiskai_memory.store`: the `Store` seam, `Item`, `Entry`, the size limits (`MAX_ENTRIES`, `MAX_ENTRY_BYTES`,
  `MAX_CONTENT_BYTES`, `MAX_DESCRIPTION_LENGTH`), `validate_write`, `normalize_description`.
- `fiskai_memory.file`: `FileMemoryStore`, `open_file_store`, `default_memory_directory`.
- `fiskai_memory.kv`: the NATS KV backend (extra `nats`: `open_kv_store`, `connect_kv_store`); not imported
  here, so this package never needs nats-py.
- `fiskai_memory.keys`: `validate_key`, `is_valid_key`, `MAX_KEY_LENGTH`.
- `fiskai_memory.index`: `build_memory_index`, `format_memory_index`.
- `fiskai_memory.options`: the typed `harness.memory` parsers (`check_backend`, `parse_file_options`,
  `parse_kv_options`, `FileOptions`, `KvOptions`, `KNOWN_BACKENDS`) and bucket naming (`default_bucket_name`,
  `kv_prefix`).
- `fiskai_memory.tool_access`: `ToolAccess` (a store as the memory tools use it) and `Note`.
- `fiskai_memory.errors`: the `MemoryStoreError` tree.
- `fiskai_memory.frontmatter`: the stored value's text format.
- `fiskai_memory.testing`: `InMemoryMemoryStore` and the backend contract suite.
"""

from .errors import MemoryNotFoundError, MemoryStoreError
from .file import FileMemoryStore, open_file_store
from .index import build_memory_index
from .keys import is_valid_key
from .options import check_backend, parse_file_options, parse_kv_options
from .store import Entry, Item, Store
from .tool_access import ToolAccess

__all__ = [
    "Entry",
    "FileMemoryStore",
    "Item",
    "MemoryNotFoundError",
    "MemoryStoreError",
    "Store",
    "ToolAccess",
    "build_memory_index",
    "check_backend",
    "is_valid_key",
    "open_file_store",
    "parse_file_options",
    "parse_kv_options",
]
