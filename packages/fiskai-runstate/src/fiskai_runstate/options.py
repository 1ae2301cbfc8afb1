"""Session backend names and their `options` blocks, checked strictly so a typo fails before a run starts.

The caller (the `fiskai` command's wiring) reads `harness.sessions.backend` and `harness.sessions.options`
from its configuration and passes them here; this package never reads agent.yaml itself. The wording
of each error is the original's (fiskai-reference 8.7, 8.9).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .errors import JournalConfigError

__all__ = [
    "KNOWN_BACKENDS",
    "FileOptions",
    "JetStreamOptions",
    "check_backend",
    "parse_file_options",
    "parse_jetstream_options",
]

KNOWN_BACKENDS = ("file", "jetstream")
"""Backend names accepted in `harness.sessions.backend` (`jetstream` needs the extra `nats`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileOptions:
    """`options` of the `file` backend."""

    directory: str | None = None
    """The journal directory as written (`~` allowed); `None` means `$XDG_STATE_HOME/fiskai/runs`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JetStreamOptions:
    """`options` of the `jetstream` backend."""

    stream: str
    """An existing JetStream stream whose subjects are `<prefix>.>`."""


def check_backend(name: str) -> str:
    """Return `name` (empty means `file`) when it is a known backend.

    Raises:
        JournalConfigError: `unknown session backend "<b>": known backends are [file jetstream]`.
    """
    backend = name or "file"
    if backend not in KNOWN_BACKENDS:
        raise JournalConfigError(
            f'unknown session backend "{backend}": known backends are [{" ".join(KNOWN_BACKENDS)}]'
        )
    return backend


def parse_file_options(options: Mapping[str, object]) -> FileOptions:
    """Check the `file` backend's options.

    Raises:
        JournalConfigError: `invalid file session options: ...` for an unknown key or a non-string directory.
    """
    _only(options, ("directory",), "file")
    return FileOptions(directory=_text(options, "directory", "file") or None)


def parse_jetstream_options(options: Mapping[str, object]) -> JetStreamOptions:
    """Check the `jetstream` backend's options.

    Raises:
        JournalConfigError: an unknown key, a non-string stream, or no stream.
    """
    _only(options, ("stream",), "jetstream")
    stream = _text(options, "stream", "jetstream")
    if not stream:
        raise JournalConfigError(
            "jetstream session: options.stream is required (the JetStream stream name); the stream must already exist"
        )
    return JetStreamOptions(stream=stream)


def _only(options: Mapping[str, object], allowed: tuple[str, ...], backend: str) -> None:
    for key in sorted(options):
        if key not in allowed:
            known = ", ".join(allowed)
            raise JournalConfigError(f'invalid {backend} session options: unknown option "{key}" (known: {known})')


def _text(options: Mapping[str, object], key: str, backend: str) -> str:
    value = options.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise JournalConfigError(f'invalid {backend} session options: "{key}" must be a string')
    return value
