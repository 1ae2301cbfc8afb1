"""The SQL that joins chunks to their documents and text, written once for search, show and packs.

A chunk's text lives in `chunks_fts` under the chunk's id, its position in `chunks`, its document's
key, citation path, title and date in `documents`. A reader may face a schema-1 store that a writer has
not migrated yet: there the citation path is the key itself and there may be no dates, which
`Columns.of` detects once per connection.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NamedTuple

from ._citation import Citation
from ._db import Conn, columns

__all__ = ["CHUNKS", "CHUNK_TEXT", "ChunkRow", "Columns", "chunk_rows", "find_chunk", "find_documents"]

CHUNKS = "chunks c JOIN documents d ON d.id = c.document_id"
"""Chunks with their documents (`c`, `d`)."""
CHUNK_TEXT = CHUNKS + " JOIN chunks_fts f ON f.rowid = c.id"
"""Chunks with their documents and text (`c`, `d`, `f`)."""


class Columns(NamedTuple):
    """How this store's schema spells a document's citation path and date.

    Named tuples, not dataclasses, here and below: built at import, a dataclass costs about 0.5 ms of
    every CLI start-up.
    """

    cite: str
    date: str

    @classmethod
    def of(cls, db: Conn) -> Columns:
        """Inspect the connection's `documents` table."""
        have = columns(db, "documents")
        return cls("d.cite" if "cite" in have else "d.path", "d.date" if "date" in have else "''")

    @property
    def dated(self) -> bool:
        """Whether documents record front matter dates."""
        return self.date != "''"


class ChunkRow(NamedTuple):
    """One chunk with what search, show and packs report about it."""

    chunk_id: int
    file: str
    """The document key: the file's resolved absolute path (relative only in an unmigrated old store)."""
    cite: str
    ordinal: int
    title: str
    date: str
    heading_path: str
    content: str

    @property
    def citation(self) -> str:
        """`<citation path>#<ordinal>`."""
        return str(Citation(self.cite, self.ordinal))


def chunk_rows(db: Conn, cols: Columns, ids: Sequence[int]) -> dict[int, ChunkRow]:
    """The chunks with these ids that still exist, by id (one query)."""
    if not ids:
        return {}
    sql = (
        f"SELECT c.id, d.path, {cols.cite}, c.ordinal, d.title, {cols.date}, f.heading_path, f.content "
        f"FROM {CHUNK_TEXT} WHERE c.id IN ({','.join('?' * len(ids))})"
    )
    return {
        int(row[0]): ChunkRow(
            int(row[0]), str(row[1]), str(row[2]), int(row[3]), str(row[4]), str(row[5]), str(row[6]), str(row[7])
        )
        for row in db.execute(sql, list(ids))
    }


def find_documents(db: Conn, cols: Columns, path: str, *, base: str | None = None) -> list[tuple[int, str, str]]:
    """The documents a path names, best match first: by citation path, by key, or relative to `base`.

    Returns:
        (document id, key, citation path) rows; the first is the one meant.
    """
    keys = [path]
    if base is not None and not os.path.isabs(path):
        keys.append(os.path.normpath(os.path.join(os.path.realpath(base), path)))
    rows = db.execute(
        f"SELECT d.id, d.path, {cols.cite} FROM documents d WHERE {cols.cite} = ? OR d.path IN ({','.join('?' * len(keys))})",
        [path, *keys],
    ).fetchall()
    found = [(int(r[0]), str(r[1]), str(r[2])) for r in rows]
    return sorted(found, key=lambda r: (r[2] != path, r[1] != path, r[1]))


def find_chunk(db: Conn, cols: Columns, citation: Citation, *, base: str | None = None) -> int | None:
    """The id of the chunk a citation names, or None."""
    for doc_id, _, _ in find_documents(db, cols, citation.path, base=base)[:1]:
        rows = db.execute(
            "SELECT id FROM chunks WHERE document_id = ? AND ordinal = ?", (doc_id, citation.ordinal)
        ).fetchall()
        if rows:
            return int(rows[0][0])
    return None
