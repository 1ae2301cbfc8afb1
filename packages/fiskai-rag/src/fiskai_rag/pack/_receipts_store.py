"""Saved receipts for delta packs: bounded manifests of citations and content digests, never bodies.

Layout: `$XDG_STATE_HOME/fiskai/receipts/<store id>/<input_digest>.json.z` (else under
`~/.local/state`), where the store id is a digest of the store directory's real path. Directories are 0700
and files 0600; each file is zlib-compressed JSON (zlib rather than gzip, which costs the pack path more
import time) holding the query terms it was saved for and at most `MAX_ENTRIES` (citation, digest) pairs: every candidate the pack considered, so a later
`since_receipt` keeps only chunks that are new or changed. Loading a receipt refreshes its mtime; saving
one keeps the 16 most recently used per store and deletes the rest. Only an explicit save writes here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from fiskai_rag.errors import RagError, ReceiptNotFoundError, Remedy

__all__ = ["KEEP_PER_STORE", "MAX_ENTRIES", "load_manifest", "receipts_dir", "save_manifest"]

KEEP_PER_STORE = 16
MAX_ENTRIES = 512
_FORMAT = 1
_HEX = frozenset("0123456789abcdef")


def receipts_dir(store_dir: Path) -> Path:
    """Where this store's receipts live."""
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    store_id = hashlib.sha256(os.path.realpath(store_dir).encode()).hexdigest()[:16]
    return base / "fiskai" / "receipts" / store_id


def _check_digest(digest: str) -> None:
    if len(digest) != 16 or not set(digest) <= _HEX:
        raise ReceiptNotFoundError(
            f'"{digest}" is not a receipt digest: expected the 16 hex digits of a receipt\'s input_digest'
        )


def save_manifest(store_dir: Path, digest: str, *, terms: Sequence[str], entries: Sequence[tuple[str, str]]) -> Path:
    """Write one manifest (owner-only, compressed, atomically) and prune the store's oldest beyond 16.

    Raises:
        RagError: The state directory cannot be written.
    """
    folder = receipts_dir(store_dir)
    document = {"format": _FORMAT, "input_digest": digest, "terms": list(terms), "entries": list(entries)[:MAX_ENTRIES]}
    blob = zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 9)
    target = folder / f"{digest}.json.z"
    scratch = folder / f".{digest}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.chmod(0o700)
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(scratch, target)
        _touch(target)
    except OSError as err:
        with contextlib.suppress(OSError):
            scratch.unlink()
        raise RagError(f"cannot save the context receipt under {folder}: {err.strerror or err}") from err
    _prune(folder)
    return target


def _touch(path: Path) -> None:
    # An explicit nanosecond stamp: the filesystem's own clock ticks coarsely enough for two saves in a row
    # to tie, and the use order decides which 16 receipts survive.
    now = time.time_ns()
    os.utime(path, ns=(now, now))


def _prune(folder: Path) -> None:
    saved: list[tuple[int, str, Path]] = []
    for path in folder.glob("*.json.z"):
        with contextlib.suppress(OSError):
            saved.append((path.stat().st_mtime_ns, path.name, path))
    saved.sort(reverse=True)
    for _, _, path in saved[KEEP_PER_STORE:]:
        with contextlib.suppress(OSError):
            path.unlink()


def load_manifest(store_dir: Path, digest: str, *, terms: Sequence[str]) -> dict[str, str]:
    """The saved citation -> content digest map of a receipt, refreshing its use time.

    Raises:
        ReceiptNotFoundError: No such receipt for this store, an unreadable one, or one saved for other terms.
    """
    _check_digest(digest)
    path = receipts_dir(store_dir) / f"{digest}.json.z"
    try:
        document = cast(dict[str, Any], json.loads(zlib.decompress(path.read_bytes())))
        entries = cast(list[list[str]], document["entries"])
        saved_terms = cast(list[str], document["terms"])
    except FileNotFoundError:
        raise ReceiptNotFoundError(
            f"no saved receipt {digest} for this knowledge store (it was never saved, or only the 16 most "
            "recent are kept)",
            remedy=Remedy.RESEED,
        ) from None
    except (OSError, ValueError, KeyError, TypeError, zlib.error) as err:
        raise ReceiptNotFoundError(f"saved receipt {digest} is unreadable ({err})", remedy=Remedy.RESEED) from err
    if saved_terms != list(terms):
        raise ReceiptNotFoundError(
            f"saved receipt {digest} was made for the query terms {saved_terms}, not {list(terms)}; a receipt "
            "is bound to its query"
        )
    with contextlib.suppress(OSError):
        _touch(path)
    return {str(citation): str(content) for citation, content in entries}
