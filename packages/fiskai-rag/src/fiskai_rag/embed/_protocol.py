"""The Embedder seam: what the store asks of any embedding model or server."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    pass

__all__ = ["DownloadProgress", "Embedder"]

DownloadProgress = Callable[[str, int, "int | None"], None]
"""A model download's progress: (file name, bytes of that file so far, its total size or None)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns strings into vectors (sync; fiskai_rag is a sync library)."""

    @property
    def model(self) -> str:
        """The model name, pinned in the index manifest."""
        ...

    @property
    def query_prefix(self) -> str:
        """Prepended to a query before embedding (EmbeddingGemma-style `task: search result | query: `)."""
        ...

    @property
    def document_prefix(self) -> str:
        """Prepended to a chunk before embedding; `{title}` becomes the chunk's heading path or `none`."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed each text; one vector per input, in input order.

        Raises:
            EmbedderError: The vectors could not be produced.
        """
        ...
