"""`embeddings <model>` spans around a knowledge search's query embeddings (reference 6.2).

fiskai_rag is a leaf library and knows nothing of telemetry, so the composition root wraps the embedder
a searching store uses. Each `embed` call is one span, the child of the `retrieval` span it runs under,
with the number of inputs and the purpose; a server's also carry its address and port and the HTTP
status it answered. Nothing of the texts is recorded. An in-process model keeps its own type (the store
words a degraded search by it): only its instance's `embed` is wrapped, at the store's opening. The telemetry seam is looked up, not imported: a `knowledge search` that never loaded it (it
pulls in the configuration models) must not load it here.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from fiskai_rag import Embedder

__all__ = ["TracedEmbedder", "traced"]

_STATUS = re.compile(r"\breturned (\d{3})\b")


class TracedEmbedder:
    """An `Embedder` that reports each call as an `embeddings` span; everything else is the inner one's."""

    def __init__(self, inner: Embedder, base_url: str) -> None:
        self.inner = inner
        parts = urlsplit(base_url)
        self._server: dict[str, Any] = {
            "server.address": parts.hostname or "",
            "server.port": parts.port or (443 if parts.scheme == "https" else 80),
        }

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def query_prefix(self) -> str:
        return self.inner.query_prefix

    @property
    def document_prefix(self) -> str:
        return self.inner.document_prefix

    def __getattr__(self, name: str) -> Any:
        # Anything else a caller asks of an embedder (a static model's own methods) is the inner one's.
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return _spanned(self.inner.model, self.inner.embed, texts, self._server)


def _spanned(
    model: str, embed: Callable[[Sequence[str]], list[list[float]]], texts: Sequence[str], server: dict[str, Any] | None
) -> list[list[float]]:
    """`embed(texts)` as one `embeddings <model>` span; `server` (None: in process) adds address, port, status."""
    seam = sys.modules.get("fiskai_core.telemetry")
    telemetry = seam.current() if seam is not None else None
    if telemetry is None or not telemetry.enabled:
        return embed(texts)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.request.model": model,
        "fisk.embeddings.inputs": len(texts),
        # A searching store embeds queries; the dimension probe is the indexer's, which is not traced.
        "fisk.embeddings.purpose": "query",
        **(server or {}),
    }
    with telemetry.span(f"embeddings {model}", attributes) as span:
        try:
            vectors = embed(texts)
        except Exception as err:
            status = _STATUS.search(str(err)) if server is not None else None
            if status:
                span.set("http.response.status_code", int(status.group(1)))
            span.error("embeddings")
            raise
        if server is not None:
            span.set("http.response.status_code", 200)  # the client returns vectors only from a 200
        return vectors


def _in_process(embedder: Embedder) -> Embedder:
    """The in-process model itself, its `embed` made a span (the instance's own attribute shadows the method)."""
    if vars(embedder).get(_TRACED):
        return embedder
    inner = embedder.embed

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return _spanned(embedder.model, inner, texts, None)

    vars(embedder)["embed"] = embed
    vars(embedder)[_TRACED] = True
    return embedder


_TRACED = "_fisk_traced"


def traced(embedder: Embedder | None) -> Embedder | None:
    """A searching store's embedder wrapped for telemetry; anything else as it is.

    None, the stand-in for an unconfigured server and an already wrapped one are returned unchanged (the
    stand-in embeds nothing). An in-process model (it has a `load`) keeps its type.
    """
    if embedder is None or isinstance(embedder, TracedEmbedder):
        return embedder
    base_url = getattr(embedder, "base_url", None)
    if isinstance(base_url, str) and base_url:
        return TracedEmbedder(embedder, base_url)
    if callable(getattr(embedder, "load", None)) and hasattr(embedder, "__dict__"):
        return _in_process(embedder)
    return embedder
