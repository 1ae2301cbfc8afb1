"""Small models written by tests (Model2Vec static, BERT) and a server that lays them out like the model hub."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import socket
import struct
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import override

    from fiskai_rag.models import ModelSpec
else:

    def override(func: Any) -> Any:
        return func


__all__ = [
    "ModelServer",
    "build_bert_model",
    "build_static_model",
    "built_model_spec",
    "write_safetensors",
    "write_toy_docs",
]


def write_safetensors(path: str | os.PathLike[str], tensors: dict[str, tuple[str, tuple[int, ...], bytes]]) -> None:
    """Write a safetensors file: each tensor as (dtype such as `F32`, shape, little-endian bytes)."""
    header: dict[str, object] = {}
    offset = 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)  # the format aligns the data to 8 bytes
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(encoded)) + encoded)
        for _, _, data in tensors.values():
            out.write(data)


def build_static_model(
    directory: str | os.PathLike[str],
    vectors: Mapping[str, Sequence[float]],
    *,
    dtype: str = "F32",
    config: dict[str, object] | None = None,
) -> Path:
    """Write a small Model2Vec-format model: a lower-casing WordPiece tokenizer and one row per token.

    Args:
        directory: Created if missing; gets `tokenizer.json`, `model.safetensors` and `config.json`.
        vectors: Token -> row; every row has the same length. `[UNK]` (row of zeros) is added first.
        dtype: `F32`, `F16` or `I8` (I8 rows are rounded and clipped to -127..127).
        config: The `config.json` content (default `{"normalize": true}`).

    Returns:
        The directory.

    Raises:
        ImportError: tokenizers (the `semantic` extra) is not installed.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    dimension = len(next(iter(vectors.values())))
    vocabulary = {"[UNK]": 0, **{token: index + 1 for index, token in enumerate(vectors)}}
    tokenizer = Tokenizer(models.WordPiece(vocabulary, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(folder / "tokenizer.json"))
    rows = [[0.0] * dimension, *(list(map(float, row)) for row in vectors.values())]
    if dtype == "I8":
        packed = struct.pack(f"<{len(rows) * dimension}b", *(max(-127, min(127, round(v))) for r in rows for v in r))
    elif dtype in ("F32", "F16"):
        code = "f" if dtype == "F32" else "e"
        packed = struct.pack(f"<{len(rows) * dimension}{code}", *(v for r in rows for v in r))
    else:
        raise ValueError(f"unsupported dtype {dtype!r}")
    write_safetensors(folder / "model.safetensors", {"embeddings": (dtype, (len(rows), dimension), packed)})
    (folder / "config.json").write_text(json.dumps(config or {"normalize": True}), encoding="utf-8")
    return folder


class ModelServer:
    """A loopback HTTP server laid out like the model hub: `GET /<repo>/resolve/<revision>/<file>`.

    Serves the files of `directory` for any repository and revision, honours `Range` requests (206), and
    on demand cuts a response short (`cut_after` bytes, once per file) to exercise resumption.
    """

    def __init__(self, directory: str | os.PathLike[str], *, cut_after: int | None = None) -> None:
        self.directory = Path(directory)
        self.cut_after = cut_after
        self.requests: list[tuple[str, str]] = []
        """(path, Range header or "") of every request, in order."""
        self._cut: set[str] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ModelServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.serve(self)

            @override
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="model-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def serve(self, request: BaseHTTPRequestHandler) -> None:
        """Answer one GET."""
        span = request.headers.get("Range", "")
        self.requests.append((request.path, span))
        parts = request.path.split("/")
        name = parts[-1]
        target = self.directory / name
        if len(parts) < 5 or parts[-3] != "resolve" or not name or not target.is_file():
            request.send_error(404, "not found")
            return
        data = target.read_bytes()
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", span)
        if match:
            start = int(match.group(1))
            if start >= len(data):
                request.send_error(416, "range not satisfiable")
                return
        body = data[start:]
        request.send_response(206 if match else 200)
        if match:
            request.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        if self.cut_after is not None and name not in self._cut and len(body) > self.cut_after:
            self._cut.add(name)
            request.wfile.write(body[: self.cut_after])
            request.wfile.flush()
            request.close_connection = True
            request.connection.shutdown(socket.SHUT_RDWR)
            return
        request.wfile.write(body)


def build_bert_model(
    directory: str | os.PathLike[str],
    words: Sequence[str],
    *,
    hidden: int = 8,
    heads: int = 2,
    layers: int = 2,
    max_tokens: int | None = None,
    pooling: str | None = None,
    dtype: str = "F32",
    prefix: str = "",
    seed: int = 7,
) -> Path:
    """Write a tiny sentence-transformers BERT encoder with seeded random weights.

    Its vectors mean nothing, but it has the real shape: a lower-casing WordPiece tokenizer adding
    [CLS] and [SEP], embeddings, `layers` encoder layers and mean (or `pooling="cls"`) pooling.

    Args:
        directory: Created if missing.
        words: The vocabulary after the five special tokens.
        hidden: Hidden size (a multiple of `heads`); the intermediate size is twice it.
        heads: Attention heads.
        layers: Encoder layers.
        max_tokens: Written as `sentence_bert_config.json`'s max_seq_length when given.
        pooling: `"cls"` or `"mean"` writes `1_Pooling/config.json`; None writes none (mean).
        dtype: `F32` or `F16`.
        prefix: Prepended to every tensor name (`bert.` as a BertForMaskedLM export has).
        seed: The weights' random seed.

    Returns:
        The directory.
    """
    import random

    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocabulary = {token: index for index, token in enumerate([*specials, *words])}
    tokenizer = Tokenizer(models.WordPiece(vocabulary, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    positions = 64
    config = {
        "model_type": "bert",
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "intermediate_size": 2 * hidden,
        "vocab_size": len(vocabulary),
        "max_position_embeddings": positions,
        "type_vocab_size": 2,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    if max_tokens is not None:
        (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": max_tokens}), encoding="utf-8")
    if pooling is not None:
        (folder / "1_Pooling").mkdir(exist_ok=True)
        modes = {"pooling_mode_cls_token": pooling == "cls", "pooling_mode_mean_tokens": pooling == "mean"}
        (folder / "1_Pooling" / "config.json").write_text(json.dumps(modes), encoding="utf-8")
    rng = random.Random(seed)
    code = {"F32": "f", "F16": "e"}[dtype]
    tensors: dict[str, tuple[str, tuple[int, ...], bytes]] = {}

    def add(name: str, shape: tuple[int, ...], fill: float | None = None) -> None:
        count = math.prod(shape)
        values = [fill] * count if fill is not None else [rng.gauss(0.0, 0.5) for _ in range(count)]
        tensors[prefix + name] = (dtype, shape, struct.pack(f"<{count}{code}", *values))

    add("embeddings.word_embeddings.weight", (len(vocabulary), hidden))
    add("embeddings.position_embeddings.weight", (positions, hidden))
    add("embeddings.token_type_embeddings.weight", (2, hidden))
    add("embeddings.LayerNorm.weight", (hidden,), 1.0)
    add("embeddings.LayerNorm.bias", (hidden,), 0.0)
    for n in range(layers):
        base = f"encoder.layer.{n}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            add(f"{base}{part}.weight", (hidden, hidden))
            add(f"{base}{part}.bias", (hidden,))
        add(f"{base}intermediate.dense.weight", (2 * hidden, hidden))
        add(f"{base}intermediate.dense.bias", (2 * hidden,))
        add(f"{base}output.dense.weight", (hidden, 2 * hidden))
        add(f"{base}output.dense.bias", (hidden,))
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            add(f"{base}{norm}.weight", (hidden,), 1.0)
            add(f"{base}{norm}.bias", (hidden,), 0.0)
    write_safetensors(folder / "model.safetensors", tensors)
    return folder


def built_model_spec(
    built: Path,
    *,
    revision: str,
    dimension: int,
    vocabulary: int,
    download_bytes: int,
    name: str = "tiny-test",
    kind: str = "static",
) -> ModelSpec:
    """A known-model entry for a model `build_static_model` wrote, as `ModelServer` serves it.

    Its weights' SHA-256 is pinned like a real entry's; register it with
    `monkeypatch.setitem(fiskai_rag.models.KNOWN_MODELS, spec.name, spec)`.
    """
    from fiskai_rag.models import ModelFile, ModelSpec

    weights = hashlib.sha256((built / "model.safetensors").read_bytes()).hexdigest()
    return ModelSpec(
        name=name,
        repo=f"fiskai-tests/{name}",
        revision=revision,
        files=(ModelFile("config.json"), ModelFile("tokenizer.json"), ModelFile("model.safetensors", weights)),
        dimension=dimension,
        vocabulary=vocabulary,
        dtype="F32",
        download_bytes=download_bytes,
        summary="built by the tests",
        kind=kind,
    )


def write_toy_docs(root: Path) -> Path:
    """Three one-section pages whose words a toy model can tell apart (cars, fruit, medicine)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "garage.md").write_text("# Garage\n\nThe car needs fuel before the trip.\n", encoding="utf-8")
    (root / "orchard.md").write_text("# Orchard\n\nPick an apple from the orchard.\n", encoding="utf-8")
    (root / "clinic.md").write_text("# Clinic\n\nThe doctor sees patients on Mondays.\n", encoding="utf-8")
    return root
