"""A static embedding model in Model2Vec's format, run in-process: a vector is the mean of its tokens' rows.

A model directory holds `tokenizer.json` (a Hugging Face `tokenizers` file), `model.safetensors` (an
`embeddings` matrix, vocabulary x dimensions, F32, F16 or I8; a vocabulary-quantized model adds a
per-token `mapping` to its row and a per-token `weights` scale) and an optional `config.json`. Encoding
follows Model2Vec's `StaticModel.encode`: tokens without special tokens, the unknown token dropped, at
most 512 tokens, the mean of their rows.

Two paths give the same vectors. A few texts (a query) are summed in pure Python from the memory-mapped
file, because importing numpy costs about 200 ms, more than a whole lexical CLI search; a batch of
chunks (indexing) goes through numpy, which turns thousands of chunks per second into vectors. The
safetensors header is parsed by `_safetensors`, so the `safetensors` package is not needed at run time.
"""

from __future__ import annotations

import importlib.util
import mmap
import os
import struct
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fiskai_rag.errors import ModelError, Remedy

from ._safetensors import Tensor, close_quietly, map_file, read_header
from ._wordpiece import WordPiece

if TYPE_CHECKING:
    import numpy.typing as npt
    from tokenizers import Tokenizer

__all__ = ["MAX_TOKENS", "StaticModel", "load_static_model"]

MAX_TOKENS = 512
"""Model2Vec's default truncation: later tokens of a long chunk do not move its vector."""
_BULK_TOKENS = 4096
"""Above this many tokens in one call, numpy's gather-and-reduce beats summing rows in Python."""
_WORDPIECE_CHARS = 16 * 1024
_WORDPIECE_TEXTS = 4
"""A call of up to 4 texts and 16 KiB (a query) is tokenized in Python when the tokenizer allows it: the
`tokenizers` import and file load (45-60 ms) cost far more than a short text's Python tokenization, while
indexing's batches go to tokenizers' Rust code."""
_DTYPES = {"F32": ("f", 4), "F16": ("e", 2), "I8": ("b", 1)}
_INDEX_DTYPES = {"I64": ("q", 8), "I32": ("i", 4)}


class StaticModel:
    """A loaded Model2Vec-format model: `encode(texts)` gives one vector per text (not normalised)."""

    def __init__(
        self,
        directory: Path,
        tokenizer: Tokenizer | WordPiece,
        data: mmap.mmap,
        tensors: dict[str, Tensor],
    ) -> None:
        self.directory = directory
        # A WordPiece stands in until a text needs the real tokenizer (a batch when indexing, or a
        # character the Python tokenizer refuses): then `tokenizers` is loaded from the same file.
        self._wordpiece = tokenizer if isinstance(tokenizer, WordPiece) else None
        self._tokenizer = None if isinstance(tokenizer, WordPiece) else tokenizer
        self._data = data
        path = directory / "model.safetensors"
        embeddings = tensors.get("embeddings")
        if embeddings is None or len(embeddings.shape) != 2 or embeddings.dtype not in _DTYPES:
            raise ModelError(f"{path} has no 2-D F32, F16 or I8 tensor named 'embeddings'")
        self.rows, self.dimension = embeddings.shape
        code, width = _DTYPES[embeddings.dtype]
        if embeddings.end - embeddings.start != self.rows * self.dimension * width:
            raise ModelError(f"{path}: 'embeddings' holds {embeddings.end - embeddings.start} bytes, not its shape's")
        self._embeddings = embeddings
        self._code = code
        self._row_bytes = self.dimension * width
        self._row = struct.Struct(f"<{self.dimension}{code}")
        vocabulary = (
            tokenizer.size if isinstance(tokenizer, WordPiece) else tokenizer.get_vocab_size(with_added_tokens=True)
        )
        self._mapping = self._index_tensor(tensors, "mapping", vocabulary, path)
        self._weights = self._weight_tensor(tensors, vocabulary, path)
        if self._mapping is None and vocabulary > self.rows:
            raise ModelError(f"{path}: the tokenizer has {vocabulary} tokens but 'embeddings' only {self.rows} rows")
        if self._mapping is not None and any(not 0 <= row < self.rows for row in self._mapping):
            raise ModelError(f"{path}: 'mapping' points outside 'embeddings'")
        if isinstance(tokenizer, WordPiece):
            self._unknown = tokenizer.unk_id
        else:
            unk = _unknown_token(tokenizer)
            self._unknown = tokenizer.token_to_id(unk) if unk else None
        self._np_embeddings: npt.NDArray[Any] | None = None

    def _index_tensor(self, tensors: dict[str, Tensor], name: str, count: int, path: Path) -> array[int] | None:
        tensor = tensors.get(name)
        if tensor is None:
            return None
        if tensor.dtype not in _INDEX_DTYPES or tensor.shape[:1] != (count,) or len(tensor.shape) != 1:
            raise ModelError(f"{path}: {name!r} must be an I64 or I32 vector with one entry per token")
        values: array[int] = array("q" if tensor.dtype == "I64" else "i")
        values.frombytes(self._data[tensor.start : tensor.end])
        return values

    def _weight_tensor(self, tensors: dict[str, Tensor], count: int, path: Path) -> array[float] | None:
        tensor = tensors.get("weights")
        if tensor is None:
            return None
        if tensor.dtype != "F32" or tensor.shape != (count,):
            raise ModelError(f"{path}: 'weights' must be an F32 vector with one entry per token")
        values = array("f")
        values.frombytes(self._data[tensor.start : tensor.end])
        return values

    def close(self) -> None:
        """Release the memory map (vectors from numpy views must not be used after this)."""
        self._np_embeddings = None
        close_quietly(self._data)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, as Model2Vec encodes: no special tokens, no unknown token, at most 512."""
        wordpiece = self._wordpiece
        if wordpiece is not None and len(texts) <= _WORDPIECE_TEXTS and sum(map(len, texts)) <= _WORDPIECE_CHARS:
            fast = [wordpiece.ids(text) for text in texts]
            if all(ids is not None for ids in fast):
                return [ids[:MAX_TOKENS] for ids in fast if ids is not None]
        encodings = self._full_tokenizer().encode_batch_fast(list(texts), add_special_tokens=False)
        unknown = self._unknown
        out: list[list[int]] = []
        for encoding in encodings:
            ids = encoding.ids
            if unknown is not None:
                ids = [i for i in ids if i != unknown]
            out.append(ids[:MAX_TOKENS])
        return out

    def _full_tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.directory / "tokenizer.json")
        return self._tokenizer

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One mean vector per text (zeros for a text without known tokens)."""
        ids = self.token_ids([_clip(text) for text in texts])
        if sum(len(i) for i in ids) <= _BULK_TOKENS:
            return [self._mean_python(one) for one in ids]
        return self._mean_numpy(ids)

    def _mean_python(self, ids: list[int]) -> list[float]:
        total = [0.0] * self.dimension
        if not ids:
            return total
        mapping, weights, row = self._mapping, self._weights, self._row
        start, size = self._embeddings.start, self._row_bytes
        for token in ids:
            values: tuple[float, ...] = row.unpack_from(
                self._data, start + size * (mapping[token] if mapping is not None else token)
            )
            scale = weights[token] if weights is not None else 1.0
            total = [t + scale * v for t, v in zip(total, values, strict=True)]
        count = float(len(ids))
        return [t / count for t in total]

    def _matrix(self) -> npt.NDArray[Any]:
        import numpy as np

        if self._np_embeddings is None:
            dtype = {"f": np.float32, "e": np.float16, "b": np.int8}[self._code]
            flat = np.frombuffer(
                self._data, dtype=dtype, count=self.rows * self.dimension, offset=self._embeddings.start
            )
            self._np_embeddings = flat.reshape(self.rows, self.dimension)
        return self._np_embeddings

    def _mean_numpy(self, ids: list[list[int]]) -> list[list[float]]:
        import numpy as np

        matrix = self._matrix()
        mapping = None if self._mapping is None else np.frombuffer(self._mapping, dtype=f"i{self._mapping.itemsize}")
        weights = None if self._weights is None else np.frombuffer(self._weights, dtype=np.float32)
        zeros = [0.0] * self.dimension
        out: list[list[float]] = []
        # One gather and sum per text: measured 25x faster than one np.add.reduceat over a batch's rows
        # (reduceat along axis 0 is not vectorised well), and it never holds more than one text's rows.
        for one in ids:
            if not one:
                out.append(zeros)
                continue
            tokens = np.asarray(one, dtype=np.int64)
            rows = matrix[tokens if mapping is None else mapping[tokens]]
            if weights is not None:
                rows = rows * weights[tokens][:, None]
            mean: list[float] = (rows.sum(axis=0, dtype=np.float64) / len(one)).tolist()
            out.append(mean)
        return out


def _clip(text: str) -> str:
    # Model2Vec cuts a text to max_length x the median token length before tokenizing, so a huge chunk
    # does not cost a huge tokenization; 512 tokens rarely span more than 8 characters each.
    return text[: MAX_TOKENS * 8]


def _unknown_token(tokenizer: Tokenizer) -> str | None:
    token = getattr(tokenizer.model, "unk_token", None)
    return token if isinstance(token, str) and token else None


def load_tokenizer(path: Path) -> Tokenizer:
    try:
        from tokenizers import Tokenizer
    except ImportError as err:
        raise ModelError(
            "the in-process embedding model needs tokenizers: pip install 'fiskai-rag[semantic]'",
            remedy=Remedy.INSTALL_SEMANTIC,
        ) from err
    if not path.is_file():  # tokenizers' own message for this is an OS error string
        raise ModelError(f"{path} is missing")
    try:
        return Tokenizer.from_file(str(path))
    except OSError as err:
        raise ModelError(f"cannot read {path}: {err.strerror or err}") from err
    except Exception as err:  # tokenizers raises a bare Exception for a malformed file
        raise ModelError(f"{path} is not a tokenizers file: {err}") from err


def load_static_model(directory: str | os.PathLike[str]) -> StaticModel:
    """Load a Model2Vec-format model directory.

    A BERT WordPiece tokenizer (the default models') is read by `_wordpiece` without importing
    `tokenizers`, which loads only when a text needs it; any other tokenizer loads through `tokenizers`.

    Raises:
        ModelError: A file is missing or malformed, or numpy/tokenizers (the `semantic` extra) are missing.
    """
    folder = Path(directory)
    if importlib.util.find_spec("tokenizers") is None:
        raise ModelError(
            "the in-process embedding model needs tokenizers: pip install 'fiskai-rag[semantic]'",
            remedy=Remedy.INSTALL_SEMANTIC,
        )
    tokenizer_path = folder / "tokenizer.json"
    weights_path = folder / "model.safetensors"
    tokenizer: Tokenizer | WordPiece | None = WordPiece.from_tokenizer_json(tokenizer_path)
    if tokenizer is None:
        tokenizer = load_tokenizer(tokenizer_path)
    data = map_file(weights_path)
    try:
        tensors, _ = read_header(data, weights_path)
        return StaticModel(folder, tokenizer, data, tensors)
    except BaseException:
        close_quietly(data)
        raise
