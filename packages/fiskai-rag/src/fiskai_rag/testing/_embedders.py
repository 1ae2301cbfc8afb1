"""Fake embedders: hashed bag-of-words vectors in-process (`FakeEmbedder`) or behind a real HTTP server."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import socket
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any

from fiskai_rag.errors import EmbedderError

if TYPE_CHECKING:
    from typing_extensions import override

else:

    def override(func: Any) -> Any:
        return func


__all__ = ["EmbeddingsServer", "FakeEmbedder", "hashed_vector", "static_model_available"]

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


class _IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class EmbeddingsServer:
    """A local OpenAI-compatible embeddings server on `127.0.0.1:<free port>`.

    Use as a context manager; `base_url` ends in `/v1`. Behaviour switches (safe to flip while running):
    `hang` blocks every request until the server stops, `status` answers every request with that HTTP
    status, `dimension` (when set) truncates or pads vectors to that length.
    """

    __test__ = False

    def __init__(self, *, use_static_model: bool | None = None, dimension: int = 32, host: str = "127.0.0.1") -> None:
        """Create (not start) the server.

        Args:
            use_static_model: Serve the tokenlearn static model; default: when it is installed.
            dimension: The hashed vectors' length when the static model is not used.
            host: The loopback address to listen on: `127.0.0.1`, or `::1` for IPv6.
        """
        self._host = host
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
        """`http://127.0.0.1:<port>/v1` (`http://[::1]:<port>/v1` on IPv6)."""
        assert self._httpd is not None, "the server is not running"
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self._httpd.server_address[1]}/v1"

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

        httpd = (_IPv6Server if ":" in self._host else ThreadingHTTPServer)((self._host, 0), Handler)
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
