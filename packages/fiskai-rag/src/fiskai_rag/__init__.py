"""The fiskai knowledge index: Markdown in, cited search hits out.

A leaf library (imports no fiskai package, no click or rich) and a sync one: async callers wrap calls
in `anyio.to_thread.run_sync`. Lexical search (SQLite FTS5, BM25) is always on; passing an `Embedder`
adds a vector tier (sqlite-vec, the `vector` extra) fused with Reciprocal Rank Fusion.

    from fiskai_rag import open_store

    with open_store("/var/lib/app/knowledge", read_only=False) as store:  # the single writer
        stats = store.index(["docs"], reconcile=True)
    with open_store("/var/lib/app/knowledge", read_only=True) as store:  # any number of readers
        result = store.search("how does backpressure work", top_k=5)
        for hit in result.hits:
            print(hit.citation, hit.heading_path)  # docs/design.md#3  Design > Backpressure
        print(store.show("docs/design.md#3").content)

Public API (stable; the bench and eval tooling build on it):

- `open_store(store_dir, *, read_only, embedder=None) -> Store`
- `Store.index(paths, *, reconcile=False, reindex=False, dry_run=False, progress=None) -> IndexStats`
  (`progress(done, total, key)` is called after each file)
- `Store.search(query, *, top_k=None) -> SearchResult(hits=[Hit], status, tier, degraded)`; `status` is
  `"ok"`, `"index_not_built"` or `"index_empty"`; `SearchResult.note` explains a non-ok status
- `Store.show(citation) -> Hit`, `Store.sources() -> [Source]`, `Store.stats() -> StoreStats`,
  `Store.remove(path) -> bool`, `Store.reset() -> (documents, chunks)`, `Store.manifest()`, `Store.tier()`
- `Store.context(query, *, budget, fmt="text", explain=False, pins=(), exclude=(), since=None, until=None,
  since_receipt=None, save_receipt=False, today=None) -> Pack(text, items=[PackItem], receipt, citations,
  status)`: the best few chunks under an exact token budget with a receipt (`RANKING_VERSION`,
  `TRUST_NOTICE`); a missing index gives status `index_not_built`
- `check_evidence(store, query, *, budget, expected_excerpts, expected_reads, k=10) -> EvidenceCheck`:
  answer-bearing evaluation (the evidence was delivered and reads back, not only the URI)
- `Hit(citation, path, ordinal, heading_path, content, score, chunk_id)`
- `chunk_markdown(text)` / `chunk_text(text) -> ChunkedDocument(title, chunks=[Chunk(heading_path, content)])`
- `fts_query(text)`: the safe FTS5 query built from free text; `rrf(*rankings)`: the fusion
- `snapshot(paths)`: the eligible files with (size, mtime_ns), for cheap change polling
- `diagnose(store_dir, *, embedder=None, paths=()) -> [Check(name, ok, detail, fatal)]`
- `Embedder` (Protocol), `OpenAICompatibleEmbedder`; fakes in `fiskai_rag.testing`
- errors: `RagError` and its subclasses in `fiskai_rag.errors`

Files in a store directory: `knowledge.db` (+ `-wal`, `-shm`), `knowledge.lock`.
"""

from typing import TYPE_CHECKING, Any

from ._db import DB_NAME, LOCK_NAME, Manifest
from ._search import MAX_TOP_K, RRF_K, SEARCH_FANOUT, Hit, fts_query, rrf
from ._store import DEFAULT_TOP_K, SearchResult, Source, Store, StoreStats, open_store
from .embed import Embedder, OpenAICompatibleEmbedder
from .errors import (
    CitationError,
    EmbedderError,
    EmbeddingDimensionError,
    IndexLockedError,
    IndexNotBuiltError,
    ManifestMismatchError,
    PackBudgetError,
    QueryWindowError,
    RagError,
    ReceiptNotFoundError,
    StoreCorruptError,
    VectorExtensionError,
)

if TYPE_CHECKING:
    from ._chunk import Chunk, ChunkedDocument, chunk_markdown, chunk_text
    from ._doctor import Check, diagnose
    from ._evidence import EvidenceCheck, check_evidence
    from ._index import IndexStats, Progress
    from ._pack import Pack
    from ._pack_rank import RANKING_VERSION
    from ._pack_render import TRUST_NOTICE
    from ._pack_select import PackItem
    from ._walk import EXTENSIONS, MAX_FILE_BYTES, snapshot

# Writer-side and pack names load on first use, so a reader (an agent, `fiskai knowledge search`) never
# imports the chunker, the walker, hashlib, json or the doctor.
_LAZY = {
    "Chunk": "._chunk",
    "ChunkedDocument": "._chunk",
    "chunk_markdown": "._chunk",
    "chunk_text": "._chunk",
    "Check": "._doctor",
    "diagnose": "._doctor",
    "EvidenceCheck": "._evidence",
    "check_evidence": "._evidence",
    "IndexStats": "._index",
    "Progress": "._index",
    "Pack": "._pack",
    "PackItem": "._pack_select",
    "RANKING_VERSION": "._pack_rank",
    "TRUST_NOTICE": "._pack_render",
    "EXTENSIONS": "._walk",
    "MAX_FILE_BYTES": "._walk",
    "snapshot": "._walk",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "DB_NAME",
    "DEFAULT_TOP_K",
    "EXTENSIONS",
    "LOCK_NAME",
    "MAX_FILE_BYTES",
    "MAX_TOP_K",
    "RANKING_VERSION",
    "RRF_K",
    "SEARCH_FANOUT",
    "TRUST_NOTICE",
    "Check",
    "Chunk",
    "ChunkedDocument",
    "CitationError",
    "Embedder",
    "EmbedderError",
    "EmbeddingDimensionError",
    "EvidenceCheck",
    "Hit",
    "IndexLockedError",
    "IndexNotBuiltError",
    "IndexStats",
    "Manifest",
    "ManifestMismatchError",
    "OpenAICompatibleEmbedder",
    "Pack",
    "PackBudgetError",
    "PackItem",
    "Progress",
    "QueryWindowError",
    "RagError",
    "ReceiptNotFoundError",
    "SearchResult",
    "Source",
    "Store",
    "StoreCorruptError",
    "StoreStats",
    "VectorExtensionError",
    "chunk_markdown",
    "check_evidence",
    "chunk_text",
    "diagnose",
    "fts_query",
    "open_store",
    "rrf",
    "snapshot",
]
