"""Memory key rules: the format every backend accepts, and the path-traversal defence.

A key is letters, digits and `. _ = -`, with no leading or trailing dot and no `..`. The slash a NATS KV
key would allow is left out on purpose, so a key maps one-to-one to a flat file name with no separator to
traverse. Every operation validates its key, and listings skip names that are not valid keys, so a key can
never name anything outside the store.
"""

from __future__ import annotations

import re

from .errors import MemoryKeyError

__all__ = ["MAX_KEY_LENGTH", "is_valid_key", "validate_key"]

MAX_KEY_LENGTH = 200
"""The longest key, in characters (all of them ASCII, so also in bytes)."""

# `fullmatch`, not `match` with `$`: `$` also matches before a trailing newline.
_KEY_RE = re.compile(r"[A-Za-z0-9._=-]+", re.ASCII)


def validate_key(key: str) -> str:
    """Check a key against the memory key rules.

    Args:
        key: The key as given by the model or the operator.

    Returns:
        The key, unchanged.

    Raises:
        MemoryKeyError: The key is empty, too long, has a character outside the allowed set (a slash, a
            space, NUL, a look-alike from another script), starts or ends with `.`, or contains `..`.
    """
    if not key:
        raise MemoryKeyError("memory key must not be empty", key=key)
    if len(key) > MAX_KEY_LENGTH:
        raise MemoryKeyError(f"memory key is too long: at most {MAX_KEY_LENGTH} characters", key=key)
    if _KEY_RE.fullmatch(key) is None:
        raise MemoryKeyError(
            f"memory key {_quote(key)} is invalid: use only letters, digits and '.', '_', '=' or '-' "
            "(no slashes or spaces)",
            key=key,
        )
    if key.startswith(".") or key.endswith("."):
        raise MemoryKeyError(f"memory key {_quote(key)} is invalid: it must not start or end with '.'", key=key)
    if ".." in key:
        raise MemoryKeyError(f"memory key {_quote(key)} is invalid: it must not contain '..'", key=key)
    return key


def is_valid_key(key: str) -> bool:
    """Whether `key` passes `validate_key`; listings use it to skip foreign names."""
    try:
        validate_key(key)
    except MemoryKeyError:
        return False
    return True


def _quote(key: str) -> str:
    # Go's %q: double quotes, with control and invisible characters escaped so a NUL or a zero-width space
    # is visible in the message instead of silently corrupting it.
    escaped = key.encode("unicode_escape").decode("ascii").replace('"', '\\"')
    return f'"{escaped}"'
