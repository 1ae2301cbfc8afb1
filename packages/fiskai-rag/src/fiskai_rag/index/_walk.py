"""Walk index roots: eligible files with the stat that lets unchanged files skip hashing.

Only `.md .markdown .txt .text` files are taken. Skipped directories: the store directory, any
dot-directory (`.git`) and any directory named `memory` (the agent's memory store, which must never be
cited back as documentation). Symlinked directories are never followed (no loops, no escapes); a
symlinked file is taken only when its target resolves inside the root it was found in.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["EXTENSIONS", "MAX_FILE_BYTES", "Candidate", "WalkResult", "real_root", "snapshot", "walk"]

EXTENSIONS = frozenset({".md", ".markdown", ".txt", ".text"})
MAX_FILE_BYTES = 512 * 1024


class Candidate(NamedTuple):
    """A file to consider for indexing."""

    key: str
    """The document key: the root's resolved absolute path joined with the file's path inside it."""
    path: str
    """Where to read it (the resolved target for an accepted symlink)."""
    size: int
    mtime_ns: int
    root: str
    """The resolved absolute path of the root it was found under."""


@dataclass(slots=True)
class WalkResult:
    """Every candidate found, the keys of the roots that were walked, and notes for the operator."""

    candidates: list[Candidate] = field(default_factory=lambda: [])
    root_keys: list[str] = field(default_factory=lambda: [])
    """The resolved absolute path of each root that exists."""
    missing: list[str] = field(default_factory=lambda: [])
    """Roots that do not exist, as given."""
    notes: list[str] = field(default_factory=lambda: [])


def real_root(root: str) -> str:
    """A root's document-key prefix: its resolved absolute path, `/`-separated.

    Keys never depend on the folder the index runs in, so indexing `.` in two folders keeps both.
    """
    key = os.path.realpath(root)
    if os.sep != "/":  # pragma: no cover - Windows only
        key = key.replace(os.sep, "/")
    return key


def _eligible(name: str) -> bool:
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in EXTENSIONS


def _utf8_name(name: str) -> bool:
    """Whether a file name is valid UTF-8.

    A store keeps names as UTF-8 text; the OS hands an invalid one over with surrogate escapes, which
    SQLite refuses (it failed the whole batch).
    """
    if name.isascii():
        return True
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


def _not_utf8(key: str) -> str:
    shown = os.fsencode(key).decode("utf-8", "backslashreplace")
    return f'skipping "{shown}": its name is not valid UTF-8; rename it to index it'


def walk(roots: list[str], *, exclude_dir: str | None) -> WalkResult:
    """Collect eligible files under each root, in lexical order.

    Args:
        roots: Files or directories, as the operator typed them.
        exclude_dir: The store directory, never walked.

    Returns:
        The candidates; missing roots and oversized files are reported in `notes`.
    """
    result = WalkResult()
    excluded: tuple[int, int] | None = None
    if exclude_dir is not None:
        try:
            st = os.stat(exclude_dir)
            excluded = (st.st_dev, st.st_ino)
        except OSError:
            excluded = None
    for root in roots:
        try:
            st = os.stat(root)
        except OSError:
            result.notes.append(f'skipping missing path "{root}"')
            result.missing.append(root)
            continue
        key = real_root(root)
        if not _utf8_name(key):
            result.notes.append(_not_utf8(key))
            continue
        result.root_keys.append(key)
        if stat.S_ISDIR(st.st_mode):
            _walk_dir(root, key, key, excluded, result)
        elif stat.S_ISREG(st.st_mode) and _eligible(os.path.basename(root)):
            if st.st_size > MAX_FILE_BYTES:
                result.notes.append(f'skipping oversized file "{key}" ({st.st_size} bytes)')
            else:
                result.candidates.append(Candidate(key, root, st.st_size, st.st_mtime_ns, key))
    return result


def _walk_dir(directory: str, key: str, real_root: str, excluded: tuple[int, int] | None, result: WalkResult) -> None:
    # Appends to `result` (a generator per level cost every file a resumption per level of depth).
    notes = result.notes
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as err:
        notes.append(f'skipping unreadable directory "{key}": {err.strerror}')
        return
    prefix = key.rstrip("/") + "/"
    add = result.candidates.append
    for entry in entries:
        name = entry.name
        child_key = prefix + name
        if not _utf8_name(name):
            if entry.is_dir(follow_symlinks=False) or _eligible(name):
                notes.append(_not_utf8(child_key))
            continue
        if entry.is_dir(follow_symlinks=False):
            if name.startswith(".") or name == "memory":
                continue
            st = entry.stat(follow_symlinks=False)
            if excluded is not None and (st.st_dev, st.st_ino) == excluded:
                continue
            _walk_dir(entry.path, child_key, real_root, excluded, result)
            continue
        if not _eligible(name):
            continue
        path = entry.path
        if entry.is_symlink():
            linked = _linked_file(path, child_key, real_root, notes)
            if linked is None:
                continue
            path, st = linked
        else:
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
        if st.st_size > MAX_FILE_BYTES:
            notes.append(f'skipping oversized file "{child_key}" ({st.st_size} bytes)')
            continue
        add(Candidate(child_key, path, st.st_size, st.st_mtime_ns, real_root))


def _linked_file(path: str, key: str, real_root: str, notes: list[str]) -> tuple[str, os.stat_result] | None:
    """The regular file a symlink inside the root points to, or None (with a note when it leaves the root)."""
    target = os.path.realpath(path)
    if os.path.commonpath([target, real_root]) != real_root:
        notes.append(f'skipping symlink "{key}": it points outside {real_root}')
        return None
    parts = os.path.relpath(target, real_root).split(os.sep)
    if any(p.startswith(".") or p == "memory" for p in parts[:-1]):
        return None  # a link must not smuggle in a directory the walk itself skips
    try:
        st = os.stat(target)
    except OSError:
        return None
    return (target, st) if stat.S_ISREG(st.st_mode) else None


def snapshot(paths: list[str], *, exclude_dir: str | None = None) -> dict[str, tuple[int, int]]:
    """The files indexing would consider, by document key, with their (size, mtime_ns).

    Two snapshots that differ mean a re-index has work to do; `knowledge watch` polls this.
    """
    return {c.key: (c.size, c.mtime_ns) for c in walk(paths, exclude_dir=exclude_dir).candidates}
