"""FTS5's own size records, read as `bm25()` reads them: the row count, token totals and row sizes.

FTS5 keeps them as SQLite varints (`fts5GetVarint`: 7 bits a byte, high bit set while more follow, and
a ninth byte of 8 bits): the averages record (id 1 of `<table>_data`) holds the row count and each
column's token total, and each row of `<table>_docsize` its columns' token counts.
"""

from __future__ import annotations

from collections.abc import Iterator

from fiskai_rag.store._db import Conn

__all__ = ["averages", "row_sizes", "varints"]


def varints(data: bytes) -> list[int]:
    """Every varint of a record, in order (a truncated last one is dropped)."""
    out: list[int] = []
    value = 0
    used = 0
    for byte in data:
        if used == 8:
            out.append((value << 8) | byte)
            value = used = 0
            continue
        value = (value << 7) | (byte & 0x7F)
        used += 1
        if not byte & 0x80:
            out.append(value)
            value = used = 0
    return out


def averages(db: Conn, table: str = "chunks_fts") -> tuple[int, int]:
    """(row count, tokens in all columns): what `xRowCount` and `xColumnTotalSize(-1)` give; (0, 0) if none."""
    block = db.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchall()
    values = varints(bytes(block[0][0])) if block and block[0][0] is not None else []
    return (values[0], sum(values[1:])) if values else (0, 0)


def row_sizes(db: Conn, table: str = "chunks_fts") -> Iterator[tuple[int, int]]:
    """Each row's rowid and tokens in all columns (`xColumnSize(-1)`)."""
    for rowid, size in db.execute(f"SELECT id, sz FROM {table}_docsize"):
        yield int(rowid), sum(varints(bytes(size)))
