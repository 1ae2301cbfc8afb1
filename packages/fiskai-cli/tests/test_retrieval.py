"""Every reader searches the tier its index was built with (`fiskai_cli._retrieval`)."""

from __future__ import annotations

from pathlib import Path

from fiskai_cli._stores import open_knowledge_store
from fiskai_core.config import EmbeddingsSettings
from fiskai_rag import OpenAICompatibleEmbedder, open_store
from fiskai_rag.testing import EmbeddingsServer


def _server_index(tmp_path: Path, server: EmbeddingsServer) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Drain\n\nDrain a node before an upgrade.\n", encoding="utf-8")
    store = tmp_path / "store"
    with open_store(
        store, read_only=False, embedder=OpenAICompatibleEmbedder(base_url=server.base_url, model=server.model)
    ) as w:
        w.index([str(docs)])
    return store


def test_a_server_built_index_searches_through_the_configured_server(tmp_path: Path) -> None:
    with EmbeddingsServer(use_static_model=False, dimension=16) as server:
        store_dir = _server_index(tmp_path, server)
        settings = EmbeddingsSettings(base_url=server.base_url, model=server.model)
        before = server.requests
        with open_knowledge_store(store_dir, read_only=True, embeddings=settings) as reader:
            result = reader.search("drain upgrade")
        asked = server.requests - before

    assert result.tier.startswith(f"hybrid (FTS5 + vectors, RRF) - model={server.model}")
    assert result.degraded is None and asked >= 1


def test_without_a_configured_server_each_query_degrades_with_the_reason(tmp_path: Path) -> None:
    with EmbeddingsServer(use_static_model=False, dimension=16) as server:
        store_dir = _server_index(tmp_path, server)
        model = server.model
    other = EmbeddingsSettings(base_url="http://127.0.0.1:9/v1", model="another")

    with open_knowledge_store(store_dir, read_only=True) as reader:
        bare = reader.search("drain upgrade")
    with open_knowledge_store(store_dir, read_only=True, embeddings=other) as reader:
        mismatched = reader.search("drain upgrade")

    assert bare.degraded is not None and "names no base_url" in bare.degraded and model in bare.degraded
    assert bare.tier.startswith("hybrid -> DEGRADED to lexical")
    assert [h.citation for h in bare.hits] == ["docs/a.md#0"]  # still the lexical hits
    assert mismatched.degraded is not None and "--reindex" in mismatched.degraded
