"""`StaticEmbedder`: an in-process model (static Model2Vec or a BERT encoder), loaded on its first `embed`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fiskai_rag.errors import ModelError, Remedy

if TYPE_CHECKING:
    from pathlib import Path

    from fiskai_rag.models import ModelSpec

    from ._bert_model import BertModel
    from ._static_model import StaticModel

from ._protocol import DownloadProgress

__all__ = ["StaticEmbedder"]


class StaticEmbedder:
    """An in-process embedding model: no server, no network after one download.

    The model is static (Model2Vec format, the default `potion-base-8M`: thousands of chunks a second) or
    contextual (a sentence-transformers BERT encoder such as `all-MiniLM-L6-v2`: tens of chunks a second
    on two cores, and much better at questions worded unlike the answer); `contextual` tells which.

    The model loads on the first `embed`, so building the embedder (as every configured command does)
    costs nothing. A named model that is not in the cache yet is downloaded then when `download` is true
    (indexing); otherwise `embed` raises `ModelError` naming the fetch command, and a search degrades to
    the lexical tier instead of starting a download inside an agent's tool call.
    """

    def __init__(
        self,
        model: str = "",
        *,
        download: bool = False,
        progress: DownloadProgress | None = None,
        prompts: tuple[str, str] | None = None,
    ) -> None:
        """Name the model; nothing is read until the first `embed` (or a BERT directory's prompts).

        Args:
            model: A known model name (`fiskai_rag.models.KNOWN_MODELS`, default `potion-base-8M`) or a
                directory holding `tokenizer.json` and `model.safetensors` (a BERT one also a
                `config.json` saying `model_type: bert`).
            download: Fetch a named model that is not cached yet on first use.
            progress: Called as download bytes arrive (file name, bytes so far, total or None).
            prompts: The (query, document) prefixes, overriding the model's own: an embedder rebuilt
                from an index manifest passes the ones the index was built with.

        Raises:
            ModelError: `model` is neither a known name nor a path.
        """
        from fiskai_rag.models import resolve_model

        self._identity, self._directory, self._spec = resolve_model(model)
        self._download = download
        self._progress = progress
        self._model: StaticModel | BertModel | None = None
        self._prompts = prompts

    @property
    def model(self) -> str:
        return self._identity

    @property
    def contextual(self) -> bool:
        """Whether the model is a contextual (BERT) encoder rather than a static one."""
        return self._identity.startswith("bert:")

    @property
    def spec(self) -> ModelSpec | None:
        """The known model's spec (None for a directory)."""
        return self._spec

    @property
    def query_prefix(self) -> str:
        """A BERT directory's query prompt (`_bert_model.model_prompts`), else ""."""
        return self._model_prompts()[0]

    @property
    def document_prefix(self) -> str:
        """A BERT directory's document prompt, else ""."""
        return self._model_prompts()[1]

    def _model_prompts(self) -> tuple[str, str]:
        if self._prompts is None:
            if self.contextual and self._spec is None and self._directory.is_dir():
                from ._bert_model import model_prompts

                self._prompts = model_prompts(self._directory)
            else:
                self._prompts = ("", "")  # the known models have none; a gone directory says so on load
        return self._prompts

    @property
    def directory(self) -> Path:
        """Where the model's files are (the cache directory of a named model)."""
        return self._directory

    def load(self) -> StaticModel | BertModel:
        """Load the model now (downloading a named one when allowed); later calls reuse it.

        Raises:
            ModelError: It is not downloaded (and may not be), cannot be downloaded, or is malformed.
        """
        if self._model is not None:
            return self._model
        from fiskai_rag.models import fetch_model, installed

        spec = self._spec
        if spec is None and not self._directory.is_dir():
            raise ModelError(f"no model directory at {self._directory}", remedy=Remedy.MODEL_DIRECTORY)
        if spec is not None and not installed(spec):
            if not self._download:
                raise ModelError(f'embedding model "{spec.name}" is not downloaded yet (cache: {self._directory})')
            fetch_model(spec, progress=self._progress)
        try:
            if self.contextual:
                from ._bert_model import load_bert_model

                self._model = load_bert_model(self._directory, int8=spec is not None and spec.int8)
            else:
                from ._static_model import load_static_model

                self._model = load_static_model(self._directory)
        except ModelError as err:
            # Fetching mends a named model's cache; a directory the user gave is theirs to mend.
            if spec is None and err.remedy is Remedy.FETCH_MODEL:
                err.remedy = Remedy.MODEL_DIRECTORY
            raise
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (pooled over its tokens; the store normalises).

        Raises:
            ModelError: The model cannot be loaded.
        """
        return self.load().encode(texts)

    def close(self) -> None:
        """Release the model's memory map."""
        model, self._model = self._model, None
        if model is not None:
            model.close()
