"""A sentence-transformers BERT directory read into numpy arrays, checked against its config.

What the ONNX graph (`_bert_graph`) is built from: `config.json` (`model_type` `bert`, GELU),
`model.safetensors` (F32 or F16; tensor names with or without a `bert.` prefix), and the optional
`sentence_bert_config.json` (`max_seq_length`) and `1_Pooling/config.json` (mean or CLS pooling; mean
when absent). Every tensor's shape is checked here, so a damaged or foreign file is named with the tensor
that is wrong instead of failing inside the runtime.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from fiskai_rag.errors import ModelError, Remedy

from ._safetensors import close_quietly, map_file, read_header

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

__all__ = ["BertLayer", "BertWeights", "is_bert_directory", "model_prompts", "read_bert_weights"]

_DEFAULT_MAX_TOKENS = 256


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
class BertLayer:
    """One encoder layer; each linear part is (weight as out x in, bias)."""

    query: tuple[Matrix, Matrix]
    key: tuple[Matrix, Matrix]
    value: tuple[Matrix, Matrix]
    attention_out: tuple[Matrix, Matrix]
    attention_norm: tuple[Matrix, Matrix]
    intermediate: tuple[Matrix, Matrix]
    output: tuple[Matrix, Matrix]
    output_norm: tuple[Matrix, Matrix]


@dataclass(frozen=True, slots=True)
class BertWeights:
    """Everything the forward pass needs, as float32 arrays owned by this object (no file map)."""

    hidden: int
    heads: int
    eps: float
    words: Matrix
    positions: Matrix
    segment: Matrix
    """Token type 0's row: sentence-transformers encodes every text as one segment."""
    embedding_norm: tuple[Matrix, Matrix]
    layers: tuple[BertLayer, ...]
    max_tokens: int
    cls_pooling: bool


def read_bert_weights(directory: Path) -> BertWeights:
    """Read and check a BERT directory's weights (numpy must be installed).

    Raises:
        ModelError: A file is missing or malformed, or a tensor has the wrong name, shape or dtype.
    """
    import numpy as np

    config = _config(directory)
    hidden = _int(config, "hidden_size", directory)
    heads = _int(config, "num_attention_heads", directory)
    if hidden % heads:
        raise ModelError(f"{directory}/config.json: hidden_size {hidden} is not a multiple of the heads")
    path = directory / "model.safetensors"
    data = map_file(path)
    try:
        tensors, _ = read_header(data, path)
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
            return cast("Matrix", values.astype(np.float32))  # a copy: the map closes below

        def linear(name: str, out: int, into: int) -> tuple[Matrix, Matrix]:
            return matrix(f"{name}.weight", (out, into)), matrix(f"{name}.bias", (out,))

        def norm(name: str) -> tuple[Matrix, Matrix]:
            return matrix(f"{name}.weight", (hidden,)), matrix(f"{name}.bias", (hidden,))

        vocabulary = _int(config, "vocab_size", directory)
        positions = _int(config, "max_position_embeddings", directory)
        types = tensors.get(prefix + "embeddings.token_type_embeddings.weight")
        type_rows = types.shape[0] if types is not None and types.shape else 1
        # The embeddings first: a wrong hidden size is reported on the first tensor a reader would check.
        words = matrix("embeddings.word_embeddings.weight", (vocabulary, hidden))
        position_rows = matrix("embeddings.position_embeddings.weight", (positions, hidden))
        segment = matrix("embeddings.token_type_embeddings.weight", (type_rows, hidden))[0]
        embedding_norm = norm("embeddings.LayerNorm")
        inner = _int(config, "intermediate_size", directory)
        layers = tuple(
            BertLayer(
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
        )
        return BertWeights(
            hidden=hidden,
            heads=heads,
            eps=float(config.get("layer_norm_eps", 1e-12)),
            words=words,
            positions=position_rows,
            segment=segment,
            embedding_norm=embedding_norm,
            layers=layers,
            max_tokens=min(_max_tokens(directory), positions),
            cls_pooling=_cls_pooling(directory),
        )
    finally:
        close_quietly(data)


def _config(directory: Path) -> dict[str, Any]:
    path = directory / "config.json"
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ModelError(f"cannot read {path}: {err.strerror or err}") from err
    except ValueError as err:
        raise ModelError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(raw, dict):
        raise ModelError(f"{path} is not a JSON object")
    config = cast(dict[str, Any], raw)
    act = config.get("hidden_act", "gelu")
    if act not in ("gelu", "gelu_new", "gelu_pytorch_tanh"):
        raise ModelError(f"{path}: hidden_act {act!r} is not supported (only GELU BERT encoders are)")
    return config


def _int(config: dict[str, Any], name: str, directory: Path) -> int:
    value = config.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ModelError(f"{directory}/config.json: {name} must be a positive integer, not {value!r}")
    return value


def _optional_json(path: Path) -> dict[str, Any]:
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise ModelError(f"cannot read {path}: {err}", remedy=Remedy.MODEL_DIRECTORY) from err
    return cast(dict[str, Any], raw) if isinstance(raw, dict) else {}


_QUERY_PROMPTS = ("query", "retrieval.query", "search_query")
_DOCUMENT_PROMPTS = ("document", "passage", "retrieval.passage", "search_document")


def model_prompts(directory: Path) -> tuple[str, str]:
    """The query and document prompts the model was trained with, or two empty strings.

    sentence-transformers keeps them in `config_sentence_transformers.json` under `prompts` (e5's
    `query: ` / `passage: `, BGE's search instruction); an encoder used without them ranks worse. The
    names vary by model family, so the first of the usual ones is taken for each side.

    Raises:
        ModelError: The file is there but is not JSON.
    """
    prompts: Any = _optional_json(directory / "config_sentence_transformers.json").get("prompts")
    if not isinstance(prompts, dict):
        return "", ""
    named = cast(dict[str, Any], prompts)

    def first(names: tuple[str, ...]) -> str:
        return next((value for name in names if isinstance(value := named.get(name), str)), "")

    return first(_QUERY_PROMPTS), first(_DOCUMENT_PROMPTS)


def max_tokens(directory: Path) -> int:
    """`sentence_bert_config.json`'s `max_seq_length` (256 when absent)."""
    return _max_tokens(directory)


def _max_tokens(directory: Path) -> int:
    value = _optional_json(directory / "sentence_bert_config.json").get("max_seq_length", _DEFAULT_MAX_TOKENS)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else _DEFAULT_MAX_TOKENS


def _cls_pooling(directory: Path) -> bool:
    pooling = _optional_json(directory / "1_Pooling" / "config.json")
    if pooling.get("pooling_mode_max_tokens") or pooling.get("pooling_mode_mean_sqrt_len_tokens"):
        raise ModelError(f"{directory}/1_Pooling/config.json: only mean and CLS pooling are supported")
    return bool(pooling.get("pooling_mode_cls_token")) and not pooling.get("pooling_mode_mean_tokens")
