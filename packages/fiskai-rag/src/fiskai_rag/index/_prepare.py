"""Read, hash and chunk the files an index run has to look at, streaming results in groups.

Preparation runs on the caller's thread, one group at a time, and memory is bounded by the group size,
never the corpus. Tried and measured: a helper thread preparing the next files while SQLite writes the
previous batch with `executemany` gained nothing (the GIL is needed for every bound row; `_write`'s
helper writes in bulk statements instead), and a spawned process breaks library users whose
`__main__` has no import guard.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from typing import NamedTuple

from ._chunk import markdown_rows, text_rows
from ._fingerprint import fingerprint
from ._page_name import page_name
from ._walk import MAX_FILE_BYTES

__all__ = ["Job", "Prepared", "prepare", "prepared"]

_GROUP = 64
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class Job(NamedTuple):
    """One file to read: its key, where to read it, the size the walk saw, the stored hash if any.

    Named tuples here and in `Prepared` (and `_walk.Candidate`): immutable as frozen dataclasses, and
    built in a third of the time, once per file (7.4k files of tldr-pages: 18 ms of frozen inits).
    """

    key: str
    path: str
    size: int
    known_digest: str


class Prepared(NamedTuple):
    """What became of a job: chunks (`doc`), unchanged bytes (`same`), or a note saying why it was skipped."""

    outcome: str
    digest: str = ""
    title: str = ""
    date: str = ""
    """Front matter `date:` as `YYYY-MM-DD`, or `""`."""
    headings: tuple[str, ...] = ()
    """Each chunk's heading path, in order; `contents` and `prints` run in parallel (the indexer zips
    them into its rows in C, where a tuple per chunk cost a Python loop)."""
    contents: tuple[str, ...] = ()
    prints: tuple[int | None, ...] = ()
    """Each chunk's `_fingerprint.fingerprint`."""
    note: str = ""


def _read(path: str, size: int) -> bytes:
    # O_NOFOLLOW: a file swapped for a symlink after the walk is refused, not followed out of the root.
    # Raw os.read calls: a buffered file object per file is measurable across thousands of small files.
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    try:
        parts: list[bytes] = []
        total = 0
        while total <= MAX_FILE_BYTES:
            # Ask for one byte more than the walk saw, so a file that grew since is still read whole.
            want = max(min(size + 1, MAX_FILE_BYTES + 1) - total, 4096)
            part = os.read(fd, want)
            parts.append(part)
            total += len(part)
            if len(part) < want:
                break  # a short read from a regular file is its end
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def _prepare_one(job: Job) -> Prepared:
    try:
        data = _read(job.path, job.size)
    except OSError as err:
        return Prepared("note", note=f'skipping unreadable file "{job.key}": {err.strerror}')
    if len(data) > MAX_FILE_BYTES:
        return Prepared("note", note=f'skipping oversized file "{job.key}" ({len(data)} bytes)')
    digest = hashlib.sha256(data).hexdigest()
    if digest == job.known_digest:
        return Prepared("same", digest=digest)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Prepared("note", note=f'skipping non-UTF-8 file "{job.key}"')
    if job.key.lower().endswith((".txt", ".text")):
        document = text_rows(text)
    else:
        document = markdown_rows(text, page_name(job.key))
    root = document.root
    contents = document.contents
    prints = tuple([fingerprint(content, root) for content in contents])
    return Prepared(
        "doc",
        digest=digest,
        title=document.title,
        date=document.date,
        headings=tuple(document.headings),
        contents=tuple(contents),
        prints=prints,
    )


def prepare(jobs: list[Job]) -> list[Prepared]:
    """Read, hash and chunk a group of files."""
    return [_prepare_one(job) for job in jobs]


def prepared(jobs: list[Job]) -> Iterator[tuple[Job, Prepared]]:
    """Each job with its result, in order, prepared one group at a time."""
    for start in range(0, len(jobs), _GROUP):
        group = jobs[start : start + _GROUP]
        yield from zip(group, prepare(group), strict=True)
