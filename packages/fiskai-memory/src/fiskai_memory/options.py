"""Backend names and their `options` blocks, checked strictly so a typo fails at run start.

The caller (the agent, or the `fiskai memory` command) reads `harness.memory.backend` and
`harness.memory.options` from its configuration and passes them here; this package never reads
agent.yaml itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import MemoryConfigError, MemoryKeyError
from .keys import validate_key

__all__ = [
    "KNOWN_BACKENDS",
    "FileOptions",
    "KvOptions",
    "check_backend",
    "default_bucket_name",
    "kv_prefix",
    "parse_file_options",
    "parse_kv_options",
]

KNOWN_BACKENDS = ("file", "jetstream")
"""Backend names accepted in `harness.memory.backend` (`jetstream` is the NATS KV backend, extra `nats`)."""

_BUCKET_PREFIX = "fiskai-memory-"
_NOT_BUCKET_CHARS = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True, kw_only=True)
class FileOptions:
    """`options` of the `file` backend."""

    directory: str | None = None
    """The store directory; `None` means `$XDG_STATE_HOME/fiskai/memory/<identity>`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KvOptions:
    """`options` of the `jetstream` backend (see `fiskai_memory.kv.open_kv_store`)."""

    bucket: str | None = None
    """An existing KV bucket; `None` means the per-identity bucket, created on first use."""
    prefix: str | None = None
    """The key prefix: `None` means the default for the bucket, `""` a flat keyspace."""
    require_read_before_update: bool = True


def check_backend(name: str) -> str:
    """Return `name` (empty means `file`) when it is a known backend.

    Raises:
        MemoryConfigError: `unknown memory backend "<b>": known backends are [file jetstream]`.
    """
    backend = name or "file"
    if backend not in KNOWN_BACKENDS:
        raise MemoryConfigError(f'unknown memory backend "{backend}": known backends are [{" ".join(KNOWN_BACKENDS)}]')
    return backend


def parse_file_options(options: Mapping[str, object]) -> FileOptions:
    """Check the `file` backend's options.

    Raises:
        MemoryConfigError: `invalid file memory options: ...` for an unknown key or a non-string directory.
    """
    _only(options, ("directory",), "file")
    return FileOptions(directory=_text(options, "directory", "file") or None)


def parse_kv_options(options: Mapping[str, object]) -> KvOptions:
    """Check the `jetstream` backend's options.

    Raises:
        MemoryConfigError: `invalid jetstream memory options: ...` for an unknown key or a wrong type.
    """
    _only(options, ("bucket", "prefix", "no_require_read_before_update"), "jetstream")
    guard_off = options.get("no_require_read_before_update", False)
    if not isinstance(guard_off, bool):
        raise MemoryConfigError(
            'invalid jetstream memory options: "no_require_read_before_update" must be true or false'
        )
    return KvOptions(
        bucket=_text(options, "bucket", "jetstream") or None,
        prefix=_text(options, "prefix", "jetstream") if options.get("prefix") is not None else None,
        require_read_before_update=not guard_off,
    )


def _only(options: Mapping[str, object], allowed: tuple[str, ...], backend: str) -> None:
    for key in sorted(options):
        if key not in allowed:
            known = ", ".join(allowed)
            raise MemoryConfigError(f'invalid {backend} memory options: unknown option "{key}" (known: {known})')


def _text(options: Mapping[str, object], key: str, backend: str) -> str:
    value = options.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MemoryConfigError(f'invalid {backend} memory options: "{key}" must be a string')
    return value


def default_bucket_name(identity: str) -> str:
    """The per-identity KV bucket used when no bucket is configured: `fiskai-memory-<identity>`.

    Bucket names cannot hold `.` or `=`, so those become `_` (`app.v2` and `app_v2` share a bucket).

    Raises:
        MemoryConfigError: The identity is not a valid key.
    """
    _identity_key(identity)
    return _BUCKET_PREFIX + _NOT_BUCKET_CHARS.sub("_", identity)


def kv_prefix(identity: str, *, bucket: str | None, prefix: str | None) -> str:
    """The key prefix inside a KV bucket (fiskai-reference 9.3).

    An explicit `prefix` must be a valid key, or `""` for a flat keyspace. Without one, a configured
    (shared) bucket is prefixed with the identity, and the per-identity bucket needs no prefix.

    Raises:
        MemoryConfigError: The prefix, or the identity standing in for it, is not a valid key.
    """
    if prefix is not None:
        if prefix:
            try:
                validate_key(prefix)
            except MemoryKeyError as err:
                raise MemoryConfigError(f'jetstream memory: options.prefix "{prefix}" is invalid: {err}') from err
        return prefix
    if bucket is None:
        return ""
    return _identity_key(identity)


def _identity_key(identity: str) -> str:
    try:
        return validate_key(identity)
    except MemoryKeyError as err:
        raise MemoryConfigError(
            f'jetstream memory: the agent identity "{identity}" cannot be used as a key prefix ({err}); '
            'set options.prefix to a legal value, or "" for a flat keyspace'
        ) from err
