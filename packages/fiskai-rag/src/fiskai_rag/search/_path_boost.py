"""Raising the chunks of some document paths.

The step a named version (`_version`) and a named documentation tree (`_section`) share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fiskai_rag.store._db import Conn, columns

__all__ = ["boost_paths", "chunk_paths"]


def chunk_paths(db: Conn, ranked: Sequence[tuple[int, float]]) -> dict[int, str]:
    """Each ranked chunk's document citation path (an unmigrated schema-1 store: its document path)."""
    ids = [chunk_id for chunk_id, _ in ranked]
    marks = ",".join("?" * len(ids))
    cite = "d.cite" if "cite" in columns(db, "documents") else "d.path"
    sql = f"SELECT c.id, {cite} FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN ({marks})"
    return {int(chunk_id): str(path) for chunk_id, path in db.execute(sql, ids)}


def boost_paths(
    ranked: Sequence[tuple[int, float]], path_of: dict[int, str], chosen: Callable[[str], bool], boost: float
) -> list[tuple[int, float]]:
    """`ranked` (higher scores better), the chunks whose path is `chosen` raised by `boost` of their score.

    Re-sorted best first, ties to the smaller id.
    """
    raised = [
        (chunk_id, score + boost * abs(score) if chosen(path_of.get(chunk_id, "")) else score)
        for chunk_id, score in ranked
    ]
    return sorted(raised, key=lambda item: (-item[1], item[0]))
