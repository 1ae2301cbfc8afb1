"""The Embedder seam, its OpenAI-compatible `/v1/embeddings` client and the in-process models.

The store owns prefixes and L2 normalisation; an Embedder only turns strings into vectors, so a test fake
is a few lines (see `fiskai_rag.testing`). `OpenAICompatibleEmbedder` is the one place that imports
httpx, and only when it is constructed, so a lexical-only search never pays for it. `StaticEmbedder`
runs an in-process model (the `semantic` extra): a static Model2Vec model or a small contextual BERT
encoder, loaded only on its first `embed`.
"""

from ._in_process import StaticEmbedder
from ._protocol import DownloadProgress, Embedder
from ._server import OpenAICompatibleEmbedder

__all__ = ["DownloadProgress", "Embedder", "OpenAICompatibleEmbedder", "StaticEmbedder"]
