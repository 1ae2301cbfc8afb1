"""An in-process contextual model's query vector is computed beside the lexical stages (issue 35).

Its forward pass costs milliseconds, as much as the whole lexical search, so it runs in a helper thread;
the ranking, the degraded note and the dimension error must be exactly what the serial path gave.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from typing_extensions import override

from fiskai_rag import open_store
from fiskai_rag.errors import EmbedderError, EmbeddingDimensionError
from fiskai_rag.search._stages import in_process_contextual
from fiskai_rag.testing import FakeEmbedder


class ContextualFake(FakeEmbedder):
    """FakeEmbedder's vectors, shaped like an in-process contextual model; records the embedding thread."""

    __test__ = False
    contextual = True

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # pyright: ignore[reportArgumentType]
        self.threads: list[str] = []

    def load(self) -> None:
        """What `StaticEmbedder.load` stands for (nothing to load here)."""

    @override
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.threads.append(threading.current_thread().name)
        return super().embed(texts)


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "docs"
    root.mkdir()
    for n, text in enumerate(
        [
            "Create a new account for a person in the authentication service.",
            "A mirror copies messages from one stream to another stream.",
            "Simmer the tomato sauce for twenty minutes, then add the basil.",
            "The cache grows until the memory limit, then the oldest entries go.",
        ]
    ):
        (root / f"page{n}.md").write_text(f"# Page {n}\n\n{text}\n", encoding="utf-8")
    return root


def test_only_an_in_process_contextual_model_runs_beside() -> None:
    assert in_process_contextual(ContextualFake())
    assert not in_process_contextual(FakeEmbedder())  # a server client: embeds before the transaction


def test_the_query_vector_runs_in_a_helper_thread_and_ranks_as_the_serial_path(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index(["docs"])
    beside = ContextualFake()
    queries = ["tomato sauce", "how does the memory limit work", "copy messages between streams"]

    with open_store(tmp_path / "store", read_only=True, embedder=FakeEmbedder()) as serial:
        expected = [[(h.citation, h.score) for h in serial.search(q).hits] for q in queries]
    with open_store(tmp_path / "store", read_only=True, embedder=beside) as reader:
        results = [reader.search(q) for q in queries]

    assert [[(h.citation, h.score) for h in r.hits] for r in results] == expected
    assert all(r.tier.startswith("hybrid") and r.degraded is None for r in results)
    assert beside.threads == ["fiskai-rag-query-vector"] * len(queries)


def test_a_failing_model_still_degrades_to_lexical_with_its_note(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index(["docs"])
    failing = ContextualFake(fail=EmbedderError("the model file is damaged"))

    with open_store(tmp_path / "store", read_only=True, embedder=failing) as reader:
        result = reader.search("tomato sauce")

    assert result.degraded == "the model file is damaged"
    assert result.hits[0].citation == "docs/page2.md#0"


def test_a_model_emitting_another_dimension_is_still_a_hard_error(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder(dimension=16)) as writer:
        writer.index(["docs"])

    with open_store(tmp_path / "store", read_only=True, embedder=ContextualFake(dimension=24)) as reader:
        with pytest.raises(EmbeddingDimensionError, match="now emits dimension 24"):
            reader.search("tomato sauce")
