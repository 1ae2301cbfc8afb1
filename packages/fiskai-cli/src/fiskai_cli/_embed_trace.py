"""`embeddings <model>` spans around a knowledge search's requests to an embeddings server (reference 6.2).

fiskai_rag is a leaf library and knows nothing of telemetry, so the composition root wraps the server
embedder a searching store uses (an in-process model sends no request and is left as it is). Each `embed`
call is one span, the child of the `retrieval` span it runs under, with the number of inputs, the
purpose, the server's address and port and the HTTP status it answered. Nothing of the texts is
recorded. The telemetry seam is looked up, not imported: a `knowledge search` that never loaded it (it
pulls in the configuration models) must not load it here.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
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
        seam = sys.modules.get("fiskai_core.telemetry")
        telemetry = seam.current() if seam is not None else None
        if telemetry is None or not telemetry.enabled:
            return self.inner.embed(texts)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "embeddings",
            "gen_ai.request.model": self.inner.model,
            "fisk.embeddings.inputs": len(texts),
            # A searching store embeds queries; the dimension probe is the indexer's, which is not traced.
            "fisk.embeddings.purpose": "query",
            **self._server,
        }
        with telemetry.span(f"embeddings {self.inner.model}", attributes) as span:
            try:
                vectors = self.inner.embed(texts)
            except Exception as err:
                status = _STATUS.search(str(err))
                if status:
                    span.set("http.response.status_code", int(status.group(1)))
                span.error("embeddings")
                raise
            span.set("http.response.status_code", 200)  # the client returns vectors only from a 200
            return vectors


def traced(embedder: Embedder | None) -> Embedder | None:
    """A server embedder wrapped for telemetry; anything else as it is.

    None, an in-process model, the stand-in for an unconfigured server and an already wrapped one send no
    request of their own.
    """
    base_url = getattr(embedder, "base_url", None)
    if embedder is None or isinstance(embedder, TracedEmbedder) or not isinstance(base_url, str) or not base_url:
        return embedder
    return TracedEmbedder(embedder, base_url)
