"""The vector pass that follows a lexical one: chunks indexed without vectors get them, batch by batch.

A contextual model embeds tens to hundreds of chunks a second, the lexical index tens of thousands: a
first build of a large corpus would keep the index unusable for most of an hour if every batch waited
for its vectors. So an index run may defer them (`run_index(defer_vectors=True)`): chunks are written
lexically and the `vectors_pending` mark set in `rag_meta`; this pass then embeds every chunk that has
no vector, committing each batch, and removes the mark when none is left. Until then a search reads the
mark and ranks lexically, saying so, because fusing vectors of part of the corpus would favour the part
already embedded. An interrupted pass loses at most one batch; the next one starts where it stopped.

A chunk whose text and heading path equal a chunk that already has a vector takes a copy of that vector
instead of a forward pass (`_copies`): documentation trees copy pages across product versions, and 6.3%
of influxdata-docs' chunks repeat another word for word, most of them too far apart in path order to meet
in one batch, where the model itself encodes a repeated text once.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from fiskai_rag.embed import Embedder
from fiskai_rag.errors import EmbedderError, EmbeddingDimensionError
from fiskai_rag.store._db import Conn, Manifest
from fiskai_rag.store._pending import VECTORS_PENDING, mark_vectors_pending, vectors_pending
from fiskai_rag.store._vec import normalise, pack

__all__ = ["VectorProgress", "count_waiting", "embed_pending", "mark_vectors_pending", "vectors_pending"]

_BATCH = 64
"""Chunks a commit: small enough that an interrupted pass loses seconds, large enough to batch the model."""

VectorProgress = Callable[[int, int], None]
"""Called after each batch with (chunks embedded so far, chunks that were waiting)."""


def _waiting(db: Conn, after: int, limit: int) -> list[tuple[int, str, str]]:
    rows = db.execute(
        "SELECT c.id, f.heading_path, f.content FROM chunks c JOIN chunks_fts f ON f.rowid = c.id "
        "WHERE c.id > ? AND NOT EXISTS(SELECT 1 FROM chunks_vec v WHERE v.chunk_id = c.id) ORDER BY c.id LIMIT ?",
        (after, limit),
    ).fetchall()
    return [(int(i), str(h or ""), str(t or "")) for i, h, t in rows]


def _copies(db: Conn, ids: list[int]) -> dict[int, bytes]:
    """For chunks of `ids`, the stored vector of another chunk with the same text and heading path.

    Candidates come through the fingerprint index (copies share a fingerprint); the text is then
    compared whole, because the fingerprint also matches copies that differ in link targets or markup.
    """
    rows = db.execute(
        "SELECT c.id, v.embedding FROM chunks c "
        "JOIN chunks o ON o.fingerprint = c.fingerprint AND o.id <> c.id "
        "JOIN chunks_vec v ON v.chunk_id = o.id "
        "JOIN chunks_fts fc ON fc.rowid = c.id JOIN chunks_fts fo ON fo.rowid = o.id "
        "WHERE c.id IN (SELECT value FROM json_each(?)) AND c.fingerprint IS NOT NULL "
        "AND fo.content = fc.content AND fo.heading_path IS fc.heading_path",
        (json.dumps(ids),),
    ).fetchall()
    return {int(chunk_id): blob for chunk_id, blob in rows if isinstance(blob, bytes)}


def count_waiting(db: Conn) -> int:
    """How many chunks have no vector."""
    rows = db.execute(
        "SELECT count(*) FROM chunks c WHERE NOT EXISTS(SELECT 1 FROM chunks_vec v WHERE v.chunk_id = c.id)"
    ).fetchall()
    return int(rows[0][0])


def embed_pending(db: Conn, embedder: Embedder, manifest: Manifest, progress: VectorProgress | None = None) -> int:
    """Embed every chunk that has no vector, one committed batch at a time; returns how many were embedded.

    The caller holds the writer lock and has loaded sqlite-vec into `db` (`Store.embed_pending` does both).

    Raises:
        EmbedderError: The model failed; the batches already committed stay.
        EmbeddingDimensionError: The model now emits another dimension than the index.
    """
    from fiskai_rag.index._index import document_input

    if not vectors_pending(db):
        return 0
    total = count_waiting(db)
    done, after = 0, 0
    if progress is not None:
        progress(0, total)
    while batch := _waiting(db, after, _BATCH):
        copied = _copies(db, [chunk_id for chunk_id, _, _ in batch])
        todo = [row for row in batch if row[0] not in copied]
        inputs = [document_input(embedder, heading, content) for _, heading, content in todo]
        vectors = embedder.embed(inputs) if inputs else []  # outside the transaction: the model is the slow part
        if len(vectors) != len(inputs):
            raise EmbedderError(f"embedder returned {len(vectors)} vectors for {len(inputs)} chunks")
        for vector in vectors:
            if len(vector) != manifest.dimension:
                raise EmbeddingDimensionError(
                    f'embedding dimension does not match the index: model "{embedder.model}" now emits '
                    f"dimension {len(vector)} but the index was built at {manifest.dimension}"
                )
        blobs = [(chunk_id, pack(normalise(v))) for (chunk_id, _, _), v in zip(todo, vectors, strict=True)]
        blobs += copied.items()
        with db:
            db.executemany(
                "INSERT INTO chunks_vec(chunk_id, embedding) SELECT ?, ? WHERE EXISTS(SELECT 1 FROM chunks WHERE id = ?)",
                [(chunk_id, blob, chunk_id) for chunk_id, blob in blobs],
            )
        done += len(batch)
        after = batch[-1][0]
        if progress is not None:
            progress(done, total)
    with db:
        # Only when nothing is left: a writer may have added chunks without vectors meanwhile.
        db.execute(
            "DELETE FROM rag_meta WHERE key = ? AND NOT EXISTS(SELECT 1 FROM chunks c WHERE NOT EXISTS("
            "SELECT 1 FROM chunks_vec v WHERE v.chunk_id = c.id))",
            (VECTORS_PENDING,),
        )
    return done
