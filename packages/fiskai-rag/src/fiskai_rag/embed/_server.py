"""`OpenAICompatibleEmbedder`: a client of any OpenAI-compatible `POST /v1/embeddings` server (httpx, imported when built)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from fiskai_rag._loopback import loopback_authority
from fiskai_rag.errors import EmbedderError

if TYPE_CHECKING:
    import httpx


__all__ = ["OpenAICompatibleEmbedder"]

_BATCH = 64
_MAX_INPUT_BYTES = 128 * 1024
_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_RETRY_DELAYS = (0.2, 0.8)
_TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


class _Rejected(Exception):
    """A non-transient refusal of one request; the batch is split to isolate the bad input."""


class OpenAICompatibleEmbedder:
    """A client for an OpenAI-compatible `POST <base_url>/embeddings` endpoint.

    Requests carry up to 64 inputs. Connection failures, timeouts and 408/429/5xx answers are retried
    twice with a short backoff; any other refusal splits the batch in halves down to single inputs, so
    one unacceptable chunk names itself instead of failing its 63 neighbours.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        timeout: timedelta | float = 30.0,
        query_prefix: str = "",
        document_prefix: str = "",
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """Build the client; no network is touched until the first `embed`.

        Args:
            base_url: The API base, e.g. `http://127.0.0.1:8080/v1`; a trailing `/` is ignored.
            model: The model name sent with every request and pinned in the manifest.
            api_key_env: The environment variable holding a bearer token, if the server wants one.
            timeout: Per-request timeout.
            query_prefix: See `Embedder.query_prefix`.
            document_prefix: See `Embedder.document_prefix`.
            transport: An httpx transport to use instead of the network (tests).

        Raises:
            EmbedderError: base_url or model is empty, or httpx is not installed.
        """
        if not base_url.strip():
            raise EmbedderError("knowledge.embeddings.base_url is required when the embeddings block is present")
        if not model.strip():
            raise EmbedderError("knowledge.embeddings.model is required when the embeddings block is present")
        parsed = urlsplit(base_url.strip())
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise EmbedderError(
                f"knowledge.embeddings.base_url {base_url!r} is not an http(s) URL with a host, "
                "e.g. http://127.0.0.1:8080/v1"
            )
        try:
            import httpx  # the one guarded import site of the vector tier's HTTP client
        except ImportError as err:
            raise EmbedderError("the embeddings client needs httpx: pip install 'fiskai-rag[vector]'") from err
        self._httpx = httpx
        self.base_url = base_url.rstrip("/")
        self._model = model
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(api_key_env, "") if api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        # A loopback server is reached directly, whatever the proxy variables say (see `_loopback`).
        authority = loopback_authority(self.base_url)
        mounts = {f"all://{authority}": None} if authority is not None and transport is None else None
        self._client = httpx.Client(timeout=seconds, headers=headers, transport=transport, mounts=mounts)

    @property
    def model(self) -> str:
        return self._model

    @property
    def query_prefix(self) -> str:
        return self._query_prefix

    @property
    def document_prefix(self) -> str:
        return self._document_prefix

    def close(self) -> None:
        """Close the underlying HTTP connection pool."""
        self._client.close()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts in batches of 64, in order.

        Raises:
            EmbedderError: An input is empty, not UTF-8 or over 128 KiB, or the server failed.
        """
        for text in texts:
            if not text.strip():
                raise EmbedderError("cannot embed an empty input")
            try:
                size = len(text.encode())
            except UnicodeEncodeError as err:
                raise EmbedderError("cannot embed an input that is not valid UTF-8") from err
            if size > _MAX_INPUT_BYTES:
                raise EmbedderError(f"cannot embed an input of {size} bytes (limit {_MAX_INPUT_BYTES})")
        out: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            out.extend(self._embed_splitting(list(texts[start : start + _BATCH])))
        return out

    def _embed_splitting(self, batch: list[str]) -> list[list[float]]:
        try:
            return self._request(batch)
        except _Rejected as err:
            if len(batch) == 1:
                raise EmbedderError(str(err)) from None
            half = len(batch) // 2
            return self._embed_splitting(batch[:half]) + self._embed_splitting(batch[half:])

    def _request(self, batch: list[str]) -> list[list[float]]:
        httpx = self._httpx
        url = f"{self.base_url}/embeddings"
        for attempt in range(len(_RETRY_DELAYS) + 1):
            last = attempt == len(_RETRY_DELAYS)
            try:
                response = self._client.post(url, json={"input": batch, "model": self._model})
            except httpx.TimeoutException as err:
                if last:
                    raise EmbedderError(f"embeddings server at {self.base_url} timed out: {err}") from err
            except httpx.TransportError as err:
                if last:
                    raise EmbedderError(f"embeddings server at {self.base_url} is unreachable: {err}") from err
            else:
                if response.status_code == 200:
                    return _decode(response.content, len(batch), self.base_url)
                body = response.text[:300].strip()
                message = f"embeddings server at {self.base_url} returned {response.status_code}: {body}"
                if response.status_code not in _TRANSIENT_STATUS:
                    raise _Rejected(message)
                if last:
                    raise EmbedderError(message)
            time.sleep(_RETRY_DELAYS[attempt])
        raise AssertionError("unreachable")  # pragma: no cover


def _decode(content: bytes, expected: int, base_url: str) -> list[list[float]]:
    import json  # only a server's answers are JSON: a lexical CLI search does not import it

    if len(content) > _MAX_RESPONSE_BYTES:
        raise EmbedderError(f"embeddings server at {base_url} sent more than {_MAX_RESPONSE_BYTES} bytes")
    try:
        payload: Any = json.loads(content)
    except ValueError as err:
        raise EmbedderError(f"embeddings server at {base_url} sent invalid JSON: {err}") from err
    if not isinstance(payload, dict):
        raise EmbedderError(f"embeddings server at {base_url} sent a non-object response")
    body = cast(dict[str, Any], payload)
    error = body.get("error")
    if isinstance(error, dict) and cast(dict[str, Any], error).get("message"):
        raise EmbedderError(f"embeddings server at {base_url} reported: {cast(dict[str, Any], error)['message']}")
    data = body.get("data")
    items = cast(list[Any], data) if isinstance(data, list) else []
    if not isinstance(data, list) or len(items) != expected:
        raise EmbedderError(f"embedder returned {len(items)} vectors for {expected} inputs")
    vectors: list[list[float] | None] = [None] * expected
    for item in items:
        entry = cast(dict[str, Any], item) if isinstance(item, dict) else {}
        index = entry.get("index")
        vector = entry.get("embedding")
        if not isinstance(index, int) or not 0 <= index < expected or vectors[index] is not None:
            raise EmbedderError(f"embeddings server at {base_url} sent a missing, duplicate or out-of-range index")
        if not isinstance(vector, list) or not vector:
            raise EmbedderError(f"embeddings server at {base_url} sent an empty vector")
        try:
            vectors[index] = [float(x) for x in cast(list[Any], vector)]
        except (TypeError, ValueError) as err:
            raise EmbedderError(f"embeddings server at {base_url} sent a non-numeric vector") from err
    return [v for v in vectors if v is not None]
