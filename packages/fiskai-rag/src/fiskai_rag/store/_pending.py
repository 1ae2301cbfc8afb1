"""The `vectors_pending` mark: chunks of a vector index wait for their vectors (see `fiskai_rag.index._vectors`)."""

from __future__ import annotations

from ._db import Conn

__all__ = ["VECTORS_PENDING", "mark_vectors_pending", "vectors_pending"]

VECTORS_PENDING = "vectors_pending"
"""`rag_meta` key present while some chunks of a vector index wait for their vectors."""


def mark_vectors_pending(db: Conn) -> None:
    """Set the mark (in its own transaction) before chunks without vectors are written."""
    with db:
        db.execute("INSERT OR REPLACE INTO rag_meta(key, value) VALUES (?, '1')", (VECTORS_PENDING,))


def vectors_pending(db: Conn) -> bool:
    """Whether chunks wait for their vectors (one primary-key read: cheap enough for every search)."""
    return bool(db.execute("SELECT 1 FROM rag_meta WHERE key = ?", (VECTORS_PENDING,)).fetchall())
