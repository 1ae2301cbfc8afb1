"""Which embedder a reader of the knowledge index searches with: the one the index was built with.

Every consumer (the agent's `knowledge_search`, `fiskai mcp`'s, `knowledge context`, `knowledge search`)
opens the index through `_stores.open_knowledge_store`, which asks `reader_embedder` when no embedder was
named. The index's manifest decides the tier, not the command:

- built with an in-process model: that model (`_stores` resolves it);
- built through an embeddings server: the client `harness.knowledge.embeddings` configures, when it names
  the same model; otherwise an embedder that always fails with the reason, so every search degrades to
  the lexical tier with that note (`hybrid -> DEGRADED to lexical (...)`) instead of silently losing its
  vectors;
- built without vectors: lexical, whatever is configured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from fiskai_core.config import EmbeddingsSettings, KnowledgeSettings
    from fiskai_core.tools import Tool
    from fiskai_rag import Embedder, Manifest, Store

__all__ = ["AbsentServer", "knowledge_tool_options", "knowledge_tools", "open_knowledge_reader", "server_embedder"]


def open_knowledge_reader(directory: Path, knowledge: KnowledgeSettings) -> Store:
    """The index in `directory` opened read-only for an agent or `fiskai mcp`, in the tier it was built with."""
    from fiskai_cli._stores import open_knowledge_store

    return open_knowledge_store(directory, read_only=True, embeddings=knowledge.embeddings)


def knowledge_tool_options(knowledge: KnowledgeSettings, store: Store | None) -> dict[str, Any]:
    """`knowledge_search`'s settings from `harness.knowledge`: budget, `top_k` cap and result format.

    And the `store`'s chunk count for the `retrieval` span (`fisk.knowledge.indexed_chunks`, reference 6.3),
    counted here because the index library knows nothing of telemetry; absent without a built index.
    """
    return {
        "max_injected_tokens": knowledge.max_injected_tokens,
        "top_k": knowledge.top_k,
        "result_format": knowledge.result_format,
        "expand_to_section": knowledge.expand_to_section,
        "indexed_chunks": None if store is None else lambda: store.stats().chunks if store.built else None,
    }


def knowledge_tools(store: Store | None, knowledge: KnowledgeSettings) -> list[Tool]:
    """What MCP serves with knowledge: knowledge_search, knowledge_enumerate, and knowledge_read when set."""
    from fiskai_core.builtins import CitationRewriter, KnowledgeEnumerateTool, KnowledgeReadTool, KnowledgeSearchTool

    citations = CitationRewriter(knowledge.citations)
    tools: list[Tool] = [
        KnowledgeSearchTool(store, **knowledge_tool_options(knowledge, store), citations=citations),
        KnowledgeEnumerateTool(store, citations=citations),
    ]
    if knowledge.read_tool:
        tools.append(KnowledgeReadTool(store, max_injected_tokens=knowledge.max_injected_tokens, citations=citations))
    return tools


class AbsentServer:
    """Stands in for the embeddings server an index was built with when none (or another) is configured.

    Its `embed` raises `EmbedderError` with `reason`, which search reports as a degraded, lexical query.
    """

    def __init__(self, manifest: Manifest, reason: str) -> None:
        self.model = manifest.model
        self.query_prefix = manifest.query_prefix
        self.document_prefix = manifest.document_prefix
        self.reason = reason

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from fiskai_rag.errors import EmbedderError

        raise EmbedderError(self.reason)


def server_embedder(manifest: Manifest, embeddings: EmbeddingsSettings | None) -> Embedder:
    """The reader's embedder for an index whose vectors came from an embeddings server (`manifest.model`).

    The configured server when it serves the index's model; else an `AbsentServer` naming the fix.
    """
    if embeddings is None or not embeddings.base_url.strip():
        return AbsentServer(
            manifest,
            f'the index was built with model "{manifest.model}" through an embeddings server, but '
            "harness.knowledge.embeddings names no base_url; configure it to search by meaning",
        )
    if embeddings.model != manifest.model:
        return AbsentServer(
            manifest,
            f'harness.knowledge.embeddings names model "{embeddings.model}" but the index was built with '
            f'"{manifest.model}"; run fiskai knowledge index --reindex',
        )
    from fiskai_rag import OpenAICompatibleEmbedder

    return OpenAICompatibleEmbedder(
        base_url=embeddings.base_url,
        model=embeddings.model,
        api_key_env=embeddings.api_key_env.strip() or None,
        timeout=embeddings.timeout,
        query_prefix=manifest.query_prefix,
        document_prefix=manifest.document_prefix,
    )
