"""An in-process contextual model's query vector is computed beside the lexical stages (issue 35).

Its forward pass costs milliseconds, as much as the whole lexical search on a small store, so when a core
is spare it runs in a worker thread with its KNN, else in the search's own thread; either way the hits,
the degraded note and the dimension error must be exactly what the serial path (the one an embeddings
server's client still takes) gives. Whether a core is spare is read from the machine's load
(`spare_core`): the tests set it, the one seam here.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from typing_extensions import override

from fiskai_rag import StaticEmbedder, open_store
from fiskai_rag.embed import Embedder
from fiskai_rag.errors import EmbedderError, EmbeddingDimensionError, ModelError
from fiskai_rag.search import _knn, _stages
from fiskai_rag.search._stages import in_process_contextual
from fiskai_rag.testing import FakeEmbedder

_PAGES = [
    "Create a new account for a person in the authentication service.",
    "A mirror copies messages from one stream to another stream.",
    "Simmer the tomato sauce for twenty minutes, then add the basil.",
    "The cache grows until the memory limit, then the oldest entries go.",
]
_QUERIES = ["tomato sauce", "how does the memory limit work", "copy messages between streams", "sign up a user"]


_SPAN: contextvars.ContextVar[str] = contextvars.ContextVar("span", default="none")
"""Stands for the tracing span a caller holds (the CLI's retrieval span): the embedder's must hang under it."""


class ContextualFake(FakeEmbedder):
    """FakeEmbedder's vectors, shaped like an in-process contextual model; records the embedding thread."""

    __test__ = False
    contextual = True

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # pyright: ignore[reportArgumentType]
        self.threads: list[str] = []
        self.spans: list[str] = []

    def load(self) -> None:
        """What `StaticEmbedder.load` stands for (nothing to load here)."""

    @override
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.threads.append(threading.current_thread().name)
        self.spans.append(_SPAN.get())
        return super().embed(texts)


class ServerShaped:
    """A real model behind the face an embeddings server's client has (no `load`): the serial path."""

    def __init__(self, model: StaticEmbedder) -> None:
        self._inner = model
        self.contextual = True

    @property
    def model(self) -> str:
        return self._inner.model

    @property
    def query_prefix(self) -> str:
        return self._inner.query_prefix

    @property
    def document_prefix(self) -> str:
        return self._inner.document_prefix

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._inner.embed(texts)


@pytest.fixture(params=[True, False], ids=["core-spare", "no-core-spare"])
def spare(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    value = bool(request.param)
    monkeypatch.setattr(_stages, "spare_core", lambda: value)
    monkeypatch.setattr(_knn, "spare_core", lambda: value)  # a server's KNN: in a thread or here
    return value


def _thread(spare: bool) -> str:
    return "fiskai-rag-query-vector" if spare else "MainThread"


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "docs"
    root.mkdir()
    for n, text in enumerate(_PAGES):
        (root / f"page{n}.md").write_text(f"# Page {n}\n\n{text}\n", encoding="utf-8")
    return root


def _ranked(store_dir: Path, embedder: Embedder) -> list[list[tuple[str, float]]]:
    with open_store(store_dir, read_only=True, embedder=embedder) as reader:
        results = [reader.search(q) for q in _QUERIES]
    assert all(r.tier.startswith("hybrid") and r.degraded is None for r in results)
    return [[(h.citation, h.score) for h in r.hits] for r in results]


def test_only_an_in_process_contextual_model_runs_beside() -> None:
    assert in_process_contextual(ContextualFake())
    assert in_process_contextual(StaticEmbedder("all-MiniLM-L6-v2-int8"))
    assert not in_process_contextual(StaticEmbedder("potion-base-8M"))  # static: microseconds, stays serial
    assert not in_process_contextual(FakeEmbedder())  # a server client: embeds before the transaction


def test_the_query_vector_runs_beside_when_a_core_is_spare_and_ranks_as_the_serial_path(
    docs: Path, tmp_path: Path, spare: bool
) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index(["docs"])
    beside = ContextualFake()

    token = _SPAN.set("retrieval")
    try:
        assert _ranked(tmp_path / "store", beside) == _ranked(tmp_path / "store", FakeEmbedder())
    finally:
        _SPAN.reset(token)
    assert beside.threads == [_thread(spare)] * len(_QUERIES)
    assert beside.spans == ["retrieval"] * len(_QUERIES)  # the worker runs in the caller's context


@pytest.mark.skipif(
    not os.environ.get("FISKAI_TEST_MINILM_DIR"),
    reason="real all-MiniLM-L6-v2 not present (FISKAI_TEST_MINILM_DIR; .ci/run fetches it from PyPI)",
)
def test_the_real_model_beside_gives_the_serial_paths_hits_score_for_score(
    docs: Path, tmp_path: Path, spare: bool
) -> None:
    model = StaticEmbedder(os.environ["FISKAI_TEST_MINILM_DIR"])
    try:
        with open_store(tmp_path / "store", read_only=False, embedder=model) as writer:
            writer.index(["docs"])
        beside = _ranked(tmp_path / "store", model)
        serial = _ranked(tmp_path / "store", ServerShaped(model))
    finally:
        model.close()

    assert beside == serial
    assert beside[0][0][0] == "docs/page2.md#0"


@pytest.mark.parametrize("error", [EmbedderError("the model file is damaged"), ModelError("the model file is damaged")])
def test_a_failing_model_still_degrades_to_lexical_with_its_note(
    docs: Path, tmp_path: Path, error: EmbedderError, spare: bool
) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index(["docs"])
    with open_store(tmp_path / "store", read_only=True) as lexical:
        expected = [(h.citation, h.score) for h in lexical.search("tomato sauce").hits]
    failing = ContextualFake(fail=error)

    with open_store(tmp_path / "store", read_only=True, embedder=failing) as reader:
        result = reader.search("tomato sauce")
        failing.fail = None
        recovered = reader.search("tomato sauce")

    assert result.degraded == "the model file is damaged"
    assert "DEGRADED" in result.tier
    assert [(h.citation, h.score) for h in result.hits] == expected
    assert failing.threads == [_thread(spare)] * 2
    assert recovered.degraded is None


def test_a_model_emitting_another_dimension_is_still_a_hard_error(docs: Path, tmp_path: Path, spare: bool) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder(dimension=16)) as writer:
        writer.index(["docs"])

    with open_store(tmp_path / "store", read_only=True, embedder=ContextualFake(dimension=24)) as reader:
        with pytest.raises(EmbeddingDimensionError, match="now emits dimension 24"):
            reader.search("tomato sauce")
        with pytest.raises(EmbeddingDimensionError):  # and again: the worker was collected, not left busy
            reader.search("tomato sauce")


def test_a_stage_failing_before_the_vectors_collects_the_worker(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_stages, "spare_core", lambda: True)
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index(["docs"])
    beside = ContextualFake()
    with open_store(tmp_path / "store", read_only=True, embedder=beside) as reader:
        expected = [(h.citation, h.score) for h in reader.search("tomato sauce").hits]
        broken = _stages.Bursty.rank

        def fail(self: _stages.Stage, run: _stages.SearchRun, ranked: list[tuple[int, float]]) -> None:
            raise RuntimeError("a stage failed")

        monkeypatch.setattr(_stages.Bursty, "rank", fail)
        with pytest.raises(RuntimeError, match="a stage failed"):
            reader.search("tomato sauce")
        monkeypatch.setattr(_stages.Bursty, "rank", broken)
        again = [(h.citation, h.score) for h in reader.search("tomato sauce").hits]

    assert again == expected
    assert beside.threads == ["fiskai-rag-query-vector"] * 3
