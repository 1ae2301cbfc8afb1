"""The fiskai knowledge index: Markdown in, cited search hits and context packs out.

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

Documents are keyed by their resolved absolute path, so one store holds any number of folders; each
is cited under its folder's name (`docs/design.md#3`), see `Citation`.

Public API:

- `open_store(store_dir, *, read_only, embedder=None, without_stages=()) -> Store`; `without_stages`
  names search ranking stages to switch off (`SEARCH_STAGES`, in the order they run)
- `Store.index(paths, *, reconcile=False, reindex=False, dry_run=False, progress=None) -> IndexStats`
- `Store.search(query, *, top_k=None, timings=None) -> SearchResult(hits=[Hit], status, tier, degraded)`;
  `status` is `"ok"`, `"index_not_built"` or `"index_empty"`; `top_k` is 1..`MAX_TOP_K`; `timings`, a
  dict, gets each stage's seconds
- `Store.context(query, *, budget, ...) -> Pack(text, items=[PackItem], receipt, citations, status)`:
  the best few chunks under an exact token budget, with a receipt
- `Store.enumerate(query, *, limit=None, min_body_matches=0) -> Enumeration(status, documents=[MatchedDocument],
  matched, indexed_documents, ...)`: every document a match query selects (`word`, `"phrase"`, `-word`, `body:`,
  `heading:`), not the best few
- `Store.show(citation) -> Hit`, `Store.sources() -> [Source]`, `Store.stats() -> StoreStats`,
  `Store.remove(path) -> bool`, `Store.reset()`, `Store.manifest() -> Manifest | None`, `Store.tier()`
- `hybrid_tier(embedder, dimension=None)`: the tier line a hybrid search with that embedder reports
  (`hybrid (FTS5 + vectors, RRF) - model=... dim=...`, as the Go original words it)
- `Citation(path, ordinal)`: `Citation.parse("docs/design.md#3")`, `str(citation)`
- `snapshot(paths)`: the eligible files with (size, mtime_ns), for cheap change polling
- `Embedder` (Protocol), `OpenAICompatibleEmbedder`, `StaticEmbedder` (an in-process model, static Model2Vec
  or a contextual BERT encoder; the `semantic` extra; `fiskai_rag.models` names the known models and
  downloads one into the user's cache)
- `RagError` (every error raised on purpose; `.remedy` is a `Remedy`); the subclasses are in
  `fiskai_rag.errors`

Public modules: `fiskai_rag.errors`, `fiskai_rag.models`, `fiskai_rag.eval` (metrics, suites, `check_evidence`),
`fiskai_rag.doctor` (`diagnose`), `fiskai_rag.testing` (a hashed `FakeEmbedder`, a local
`EmbeddingsServer`). Everything in an underscored module is private.
"""

from typing import TYPE_CHECKING, Any

from fiskai_rag.embed import Embedder, OpenAICompatibleEmbedder, StaticEmbedder
from fiskai_rag.errors import RagError, Remedy
from fiskai_rag.search._enumerate import Enumeration, MatchedDocument
from fiskai_rag.search._fusion import hybrid_tier
from fiskai_rag.search._hit import MAX_TOP_K, Hit, SearchResult
from fiskai_rag.search._stages import SEARCH_STAGES
from fiskai_rag.store._catalog import Source, StoreStats
from fiskai_rag.store._citation import Citation
from fiskai_rag.store._db import Manifest
from fiskai_rag.store._store import Store, open_store

if TYPE_CHECKING:
    from fiskai_rag.index._index import IndexStats
    from fiskai_rag.index._walk import snapshot
    from fiskai_rag.pack._build import Pack
    from fiskai_rag.pack._select import PackItem

# Writer-side and pack names load on first use, so a reader (an agent, `fiskai knowledge search`) never
# imports the chunker, the walker, hashlib or json.
_LAZY = {
    "IndexStats": ".index._index",
    "Pack": ".pack._build",
    "PackItem": ".pack._select",
    "snapshot": ".index._walk",
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
    "MAX_TOP_K",
    "SEARCH_STAGES",
    "Citation",
    "Embedder",
    "Enumeration",
    "Hit",
    "IndexStats",
    "Manifest",
    "MatchedDocument",
    "OpenAICompatibleEmbedder",
    "Pack",
    "PackItem",
    "RagError",
    "Remedy",
    "SearchResult",
    "Source",
    "StaticEmbedder",
    "Store",
    "StoreStats",
    "hybrid_tier",
    "open_store",
    "snapshot",
]
