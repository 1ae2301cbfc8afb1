"""Backend names and their `options` blocks, checked strictly so a typo fails at run start.

The caller (the agent, or the `fiskai memory` command) reads `harness.memory.backend` and
`harness.memory.options` from its configuration and passes them here; this package never reads
agent.yaml itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .errors import MemoryConfigError

__all__ = ["KNOWN_BACKENDS", "FileOptions", "KvOptions", "check_backend", "parse_file_options", "parse_kv_options"]

KNOWN_BACKENDS = ("file", "jetstream")
"""Backend names accepted in `harness.memory.backend` (`jetstream` is the NATS KV backend, extra `nats`)."""


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
