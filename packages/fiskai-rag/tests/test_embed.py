from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from fiskai_rag import Embedder, OpenAICompatibleEmbedder
from fiskai_rag.errors import EmbedderError
from fiskai_rag.testing import EmbeddingsServer, FakeEmbedder


def _client(handler: Callable[[httpx.Request], httpx.Response], **kwargs: Any) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(
        base_url="http://embeddings.test/v1/", model="m", transport=httpx.MockTransport(handler), **kwargs
    )


def _answer(vectors: list[tuple[int, list[float]]], **extra: Any) -> httpx.Response:
    data = [{"index": i, "embedding": v} for i, v in vectors]
    return httpx.Response(200, json={"data": data, **extra})


def test_the_fakes_satisfy_the_embedder_protocol() -> None:
    embedder: Embedder = FakeEmbedder()
    client: Embedder = _client(lambda request: _answer([]))
    assert embedder.model and client.model == "m"


def test_vectors_are_placed_by_index_not_by_order() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return _answer([(1, [0.0, 1.0]), (0, [1.0, 0.0])])

    vectors = _client(handler).embed(["first", "second"])

    assert vectors == [[1.0, 0.0], [0.0, 1.0]]
    assert seen == [{"input": ["first", "second"], "model": "m"}]


@pytest.mark.parametrize(
    "response",
    [
        _answer([(0, [1.0]), (0, [2.0])]),
        _answer([(0, [1.0])]),
        _answer([(0, [1.0]), (1, [1.0])], error={"message": "model overloaded"}),
        _answer([(0, [1.0]), (5, [1.0])]),
        _answer([(0, [1.0]), (1, [])]),
        httpx.Response(200, content=b"not json"),
    ],
    ids=["duplicate-index", "count-mismatch", "error-shaped-200", "index-out-of-range", "empty-vector", "not-json"],
)
def test_malformed_answers_fail(response: httpx.Response) -> None:
    with pytest.raises(EmbedderError):
        _client(lambda request: response).embed(["a", "b"])


def test_empty_input_is_rejected_before_sending() -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return _answer([(0, [1.0])])

    with pytest.raises(EmbedderError):
        _client(handler).embed(["ok", "   "])
    assert calls == []


def test_a_refused_batch_is_split_in_halves_to_find_the_bad_input() -> None:
    sizes: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        inputs = json.loads(request.content)["input"]
        sizes.append(len(inputs))
        if "poison" in inputs:
            return httpx.Response(400, json={"error": {"message": "input too long"}})
        return _answer([(i, [float(len(t))]) for i, t in enumerate(inputs)])

    with pytest.raises(EmbedderError) as caught:
        _client(handler).embed(["a", "bb", "poison", "dddd"])
    assert "input too long" in str(caught.value)
    assert sizes == [4, 2, 2, 1]  # whole batch, both halves, then the failing half down to the poison input


def test_transient_failures_are_retried() -> None:
    answers = [httpx.Response(503, text="warming up"), _answer([(0, [1.0, 2.0])])]

    vectors = _client(lambda request: answers.pop(0)).embed(["x"])

    assert vectors == [[1.0, 2.0]]


def test_inputs_go_out_in_batches_of_64_and_come_back_in_order() -> None:
    with EmbeddingsServer(use_static_model=False, dimension=8) as server:
        client = OpenAICompatibleEmbedder(base_url=server.base_url, model=server.model)
        texts = [f"text number {i}" for i in range(150)]
        vectors = client.embed(texts)
        client.close()

    assert server.requests == 3
    assert len(vectors) == 150 and all(len(v) == 8 for v in vectors)
    assert vectors[149] == FakeEmbedder(dimension=8).embed(["text number 149"])[0]


def test_the_bearer_token_comes_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBED_KEY", "s3cret")
    headers: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        headers.append(request.headers.get("Authorization"))
        return _answer([(0, [1.0])])

    _client(handler, api_key_env="EMBED_KEY").embed(["x"])

    assert headers == ["Bearer s3cret"]


def test_missing_base_url_or_model_is_a_clear_error() -> None:
    with pytest.raises(EmbedderError, match="base_url is required"):
        OpenAICompatibleEmbedder(base_url="", model="m")
    with pytest.raises(EmbedderError, match="model is required"):
        OpenAICompatibleEmbedder(base_url="http://x/v1", model=" ")


@pytest.mark.parametrize("url", ["127.0.0.1:8080/v1", "ftp://host/v1", "http:///v1"])
def test_a_base_url_that_is_not_http_with_a_host_is_refused(url: str) -> None:
    with pytest.raises(EmbedderError, match="is not an http"):
        OpenAICompatibleEmbedder(base_url=url, model="m")


def test_a_hung_server_times_out_with_a_clear_error() -> None:
    with EmbeddingsServer(use_static_model=False) as server:
        server.hang = True
        client = OpenAICompatibleEmbedder(base_url=server.base_url, model=server.model, timeout=0.1)
        done = threading.Event()
        try:
            with pytest.raises(EmbedderError) as caught:
                client.embed(["x"])
            done.set()
        finally:
            client.close()

    assert done.is_set()
    assert "timed out" in str(caught.value)


# Issue 36.5: httpx honours HTTP(S)_PROXY and ALL_PROXY for every host NO_PROXY does not name, loopback too, so
# a local embeddings server's traffic, bearer token and all, crossed the proxy. `recording_proxy`: root conftest.
@pytest.mark.parametrize(("listen", "host"), [("127.0.0.1", "127.0.0.1"), ("127.0.0.1", "localhost"), ("::1", "[::1]")])
def test_a_loopback_embeddings_server_is_reached_directly_whatever_the_proxy_variables_say(
    recording_proxy: Any, listen: str, host: str
) -> None:
    with EmbeddingsServer(use_static_model=False, dimension=4, host=listen) as server:
        port = server.base_url.rsplit(":", 1)[1]
        client = OpenAICompatibleEmbedder(base_url=f"http://{host}:{port}", model=server.model)
        try:
            vectors = client.embed(["x"])
        finally:
            client.close()

    assert server.requests == 1 and len(vectors[0]) == 4
    assert recording_proxy.requests == []


def test_a_remote_embeddings_server_still_goes_through_the_proxy(recording_proxy: Any) -> None:
    with EmbeddingsServer(use_static_model=False, dimension=4) as server:
        recording_proxy.upstream = ("127.0.0.1", int(server.base_url.rsplit(":", 1)[1].removesuffix("/v1")))
        # `.invalid` never resolves (RFC 2606): the proxy is the only way there.
        client = OpenAICompatibleEmbedder(base_url="http://embeddings.invalid/v1", model=server.model)
        try:
            vectors = client.embed(["x"])
        finally:
            client.close()

    assert len(vectors[0]) == 4
    assert recording_proxy.requests == ["POST http://embeddings.invalid/v1/embeddings HTTP/1.1"]
