"""The baseline of `bench/knowledge.py --semantic`: fiskai's former hand-written numpy BERT encoder.

fiskai-rag ran its contextual model with this until onnxruntime replaced it (`fiskai_rag.embed._bert_model`);
it stays here, unchanged in what it computes, only so the bench can time the old encoder beside the new
one in the same run. Nothing in the packages imports it.

Its original description follows.

A small contextual embedding model (a sentence-transformers BERT encoder), run in-process with numpy.

A static model gives a word the same vector wherever it stands; a contextual one reads the whole
passage, so "how do I stop the service from using so much memory" can meet a section on cache limits.
It costs far more: all-MiniLM-L6-v2 does about 24 MFLOP per token, so indexing is compute-bound (tens of
chunks a second on two cores, where the static model does thousands), while a query of a dozen tokens
takes a few milliseconds.

A model directory is what sentence-transformers saves for a BERT encoder: `config.json` (`model_type`
`bert`), `tokenizer.json`, `model.safetensors` (F32 or F16; tensor names with or without a `bert.`
prefix), and optionally `sentence_bert_config.json` (`max_seq_length`) and `1_Pooling/config.json` (mean
or CLS pooling; mean when absent). Encoding follows sentence-transformers: special tokens added, the text
cut at `max_seq_length` tokens, the layers, then the pooling; the store normalises the vector.

The one departure is GELU: numpy has no vectorised erf, so the tanh form is used. On all-MiniLM-L6-v2
its vectors agree with the erf form's to a cosine above 0.9999 (tested against vectors computed with
PyTorch, where the model is present).
"""

from __future__ import annotations

import importlib.util
import json
import math
import mmap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

# The model directory's readers are the package's own: only the forward pass is the old one.
from fiskai_rag.embed._bert_weights import (
    _cls_pooling,
    _config,
    _int,
    _max_tokens,
)
from fiskai_rag.embed._safetensors import Tensor, close_quietly, map_file, read_header
from fiskai_rag.errors import ModelError, Remedy

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

    Matrix = npt.NDArray[np.float32]

__all__ = ["BertModel", "is_bert_directory", "load_bert_model"]

_BATCH_TOKENS = 4096
"""Padded tokens per forward pass: texts of like length go together (sorted), and a batch of 4096
tokens keeps the attention scores of a 256-token batch near 50 MB."""
_MASKED = -1e4
"""Added to the attention score of a padding position: exp() of it underflows to exactly 0 in float32,
so padding never changes a text's vector."""


def is_bert_directory(directory: Path) -> bool:
    """Whether `directory` holds a BERT encoder (its `config.json` says `model_type: bert`).

    Raises:
        ModelError: `config.json` is there but is not a JSON object: which loader applies is unknown, and
            guessing the static one would report a missing tensor instead of the damaged file.
    """
    path = directory / "config.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False  # a Model2Vec directory may have none
    except (OSError, UnicodeDecodeError) as err:
        raise ModelError(f"cannot read {path}: {err}", remedy=Remedy.MODEL_DIRECTORY) from err
    try:
        config: Any = json.loads(text)
    except ValueError as err:
        raise ModelError(f"{path} is not valid JSON: {err}", remedy=Remedy.MODEL_DIRECTORY) from err
    if not isinstance(config, dict):
        raise ModelError(f"{path} is not a JSON object", remedy=Remedy.MODEL_DIRECTORY)
    return cast(dict[str, Any], config).get("model_type") == "bert"


@dataclass(frozen=True, slots=True)
class _Layer:
    query: tuple[Matrix, Matrix]
    key: tuple[Matrix, Matrix]
    value: tuple[Matrix, Matrix]
    attention_out: tuple[Matrix, Matrix]
    attention_norm: tuple[Matrix, Matrix]
    intermediate: tuple[Matrix, Matrix]
    output: tuple[Matrix, Matrix]
    output_norm: tuple[Matrix, Matrix]


class BertModel:
    """A loaded BERT encoder: `encode(texts)` gives one pooled vector per text (not normalised)."""

    def __init__(self, directory: Path, tokenizer: Tokenizer, data: mmap.mmap, tensors: dict[str, Tensor]) -> None:
        import numpy as np

        self.directory = directory
        self._data = data
        config = _config(directory)
        hidden = _int(config, "hidden_size", directory)
        self._heads = _int(config, "num_attention_heads", directory)
        if hidden % self._heads:
            raise ModelError(f"{directory}/config.json: hidden_size {hidden} is not a multiple of the heads")
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self.dimension = hidden
        path = directory / "model.safetensors"
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""

        def matrix(name: str, shape: tuple[int, ...]) -> Matrix:
            tensor = tensors.get(prefix + name)
            if tensor is None:
                raise ModelError(f"{path} has no tensor {prefix + name!r}; is it a BERT model?")
            if tensor.shape != shape:
                raise ModelError(f"{path}: {prefix + name!r} has shape {list(tensor.shape)}, expected {list(shape)}")
            kind = {"F32": np.float32, "F16": np.float16}.get(tensor.dtype)
            if kind is None:
                raise ModelError(f"{path}: {prefix + name!r} is {tensor.dtype}; only F32 and F16 are read")
            count = math.prod(shape)
            if tensor.end - tensor.start != count * np.dtype(kind).itemsize:
                raise ModelError(f"{path}: {prefix + name!r} holds {tensor.end - tensor.start} bytes, not its shape's")
            values = np.frombuffer(data, dtype=kind, count=count, offset=tensor.start).reshape(shape)
            # F32 stays a view into the map (no copy, no load time); F16 is widened once.
            return cast("Matrix", values if kind is np.float32 else values.astype(np.float32))

        def linear(name: str, out: int, into: int) -> tuple[Matrix, Matrix]:
            return matrix(f"{name}.weight", (out, into)), matrix(f"{name}.bias", (out,))

        def norm(name: str) -> tuple[Matrix, Matrix]:
            return matrix(f"{name}.weight", (hidden,)), matrix(f"{name}.bias", (hidden,))

        vocabulary = _int(config, "vocab_size", directory)
        positions = _int(config, "max_position_embeddings", directory)
        self._words = matrix("embeddings.word_embeddings.weight", (vocabulary, hidden))
        self._positions = matrix("embeddings.position_embeddings.weight", (positions, hidden))
        types = tensors.get(prefix + "embeddings.token_type_embeddings.weight")
        type_rows = types.shape[0] if types is not None and types.shape else 1
        self._segment = matrix("embeddings.token_type_embeddings.weight", (type_rows, hidden))[0]
        self._embedding_norm = norm("embeddings.LayerNorm")
        inner = _int(config, "intermediate_size", directory)
        self._layers = [
            _Layer(
                query=linear(f"encoder.layer.{n}.attention.self.query", hidden, hidden),
                key=linear(f"encoder.layer.{n}.attention.self.key", hidden, hidden),
                value=linear(f"encoder.layer.{n}.attention.self.value", hidden, hidden),
                attention_out=linear(f"encoder.layer.{n}.attention.output.dense", hidden, hidden),
                attention_norm=norm(f"encoder.layer.{n}.attention.output.LayerNorm"),
                intermediate=linear(f"encoder.layer.{n}.intermediate.dense", inner, hidden),
                output=linear(f"encoder.layer.{n}.output.dense", hidden, inner),
                output_norm=norm(f"encoder.layer.{n}.output.LayerNorm"),
            )
            for n in range(_int(config, "num_hidden_layers", directory))
        ]
        self.max_tokens = min(_max_tokens(directory), positions)
        self._cls_pooling = _cls_pooling(directory)
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_tokens)  # pyright: ignore[reportUnknownMemberType]
        self._tokenizer = tokenizer

    def close(self) -> None:
        """Release the memory map (after this the model must not be used)."""
        self._layers = []
        close_quietly(self._data)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids as the model reads them: [CLS] ... [SEP], at most `max_tokens`."""
        return [list(e.ids) for e in self._tokenizer.encode_batch_fast([_clip(t, self.max_tokens) for t in texts])]

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One pooled vector per text, in order; a text repeated in the call is encoded once."""
        distinct = list(dict.fromkeys(texts))
        if len(distinct) < len(texts):
            # Pages copied across version trees repeat chunks word for word (5.6% of influxdata-docs'),
            # and a contextual model's vector is the expensive part of indexing.
            vectors = dict(zip(distinct, self._encode(distinct), strict=True))
            return [vectors[text] for text in texts]
        return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        ids = self.token_ids(texts)
        return self._batches(ids)

    def _batches(self, ids: list[list[int]]) -> list[list[float]]:
        import numpy as np

        out: list[list[float]] = [[] for _ in ids]
        # Texts of like length share a batch, so little of each pass is padding.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            width = max(1, len(ids[order[start]]))
            end = start + 1
            while end < len(order) and (end - start + 1) * max(width, len(ids[order[end]])) <= _BATCH_TOKENS:
                width = max(width, len(ids[order[end]]))
                end += 1
            batch = order[start:end]
            vectors = self._forward([ids[i] for i in batch])
            for row, index in enumerate(batch):
                out[index] = vectors[row].astype(np.float64).tolist()
            start = end
        return out

    def _forward(self, batch: list[list[int]]) -> Matrix:
        import numpy as np

        count, width = len(batch), max(1, max(len(ids) for ids in batch))
        tokens = np.zeros((count, width), dtype=np.int64)
        mask = np.zeros((count, width), dtype=np.float32)
        for row, ids in enumerate(batch):
            tokens[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1.0
        x = self._words[tokens] + self._positions[:width] + self._segment
        x = self._norm(x.reshape(count * width, self.dimension), self._embedding_norm)
        masked = ((1.0 - mask) * np.float32(_MASKED))[:, None, None, :]
        heads, size = self._heads, self.dimension // self._heads
        scale = np.float32(1.0 / math.sqrt(size))
        for layer in self._layers:

            def split(part: tuple[Matrix, Matrix], x: Matrix = x) -> Matrix:
                projected = _linear(x, part)
                return projected.reshape(count, width, heads, size).transpose(0, 2, 1, 3)

            query, key, value = split(layer.query), split(layer.key), split(layer.value)
            scores = np.matmul(query * scale, key.transpose(0, 1, 3, 2))
            scores += masked
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            attended = np.matmul(scores, value).transpose(0, 2, 1, 3).reshape(count * width, self.dimension)
            hidden = _linear(attended, layer.attention_out)
            hidden += x
            x = self._norm(hidden, layer.attention_norm)
            inner = _gelu(_linear(x, layer.intermediate))
            hidden = _linear(inner, layer.output)
            hidden += x
            x = self._norm(hidden, layer.output_norm)
        states = x.reshape(count, width, self.dimension)
        if self._cls_pooling:
            return states[:, 0, :]
        summed = np.einsum("bwd,bw->bd", states, mask)
        return summed / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)

    def _norm(self, x: Matrix, weights: tuple[Matrix, Matrix]) -> Matrix:
        import numpy as np

        centred = x - x.mean(axis=-1, keepdims=True)
        variance = np.einsum("ij,ij->i", centred, centred)[:, None] / np.float32(x.shape[-1])
        centred *= 1.0 / np.sqrt(variance + np.float32(self._eps))
        centred *= weights[0]
        centred += weights[1]
        return centred


def _linear(x: Matrix, part: tuple[Matrix, Matrix]) -> Matrix:
    # `weight.T` is a view: BLAS reads the transposed layout directly, so the weights are never copied.
    out = x @ part[0].T
    out += part[1]
    return out


_GELU_C = math.sqrt(2.0 / math.pi)


def _gelu(x: Matrix) -> Matrix:
    """GELU in its tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in one new buffer."""
    import numpy as np

    inner = x * x
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(_GELU_C)
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(0.5)
    return inner


def _clip(text: str, max_tokens: int) -> str:
    # Truncation happens on tokens, but tokenizing a huge chunk whole would cost its full length first;
    # max_tokens rarely span more than 16 characters each.
    return text[: max_tokens * 16]


def load_bert_model(directory: Path) -> BertModel:
    """Load a sentence-transformers BERT directory (the `semantic` extra: numpy and tokenizers).

    Raises:
        ModelError: A file is missing or malformed, or numpy/tokenizers are not installed.
    """
    from fiskai_rag.embed._static_model import load_tokenizer

    tokenizer = load_tokenizer(directory / "tokenizer.json")
    if importlib.util.find_spec("numpy") is None:
        raise ModelError(
            "the in-process embedding model needs numpy: pip install 'fiskai-rag[semantic]'",
            remedy=Remedy.INSTALL_SEMANTIC,
        )
    weights = directory / "model.safetensors"
    data = map_file(weights)
    try:
        tensors, _ = read_header(data, weights)
        return BertModel(directory, tokenizer, data, tensors)
    except BaseException:
        close_quietly(data)  # a half-built model's views may still point into the map
        raise
