"""Search is a list of named stages: each can be switched off by name, and each is timed by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_rag import SEARCH_STAGES, RagError, open_store
from fiskai_rag.search._query import fts_query
from fiskai_rag.search._topk import lexical
from fiskai_rag.testing import FakeEmbedder

_FILLER = "Words about other things fill this paragraph so that the pages are not too short to rank. " * 3


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for n in range(6):  # pages without the query's words, so that they are rare enough to carry weight
        (docs / f"other-{n}.md").write_text(f"# Other {n}\n\n{_FILLER}\n", encoding="utf-8")
    # Both hold "sparse" and "matrices" once; BM25 prefers the shorter, scattered page.
    (docs / "a-scattered.md").write_text(
        f"# Notes\n\nA sparse index is kept. {_FILLER}\nThe matrices are stored apart.\n", encoding="utf-8"
    )
    (docs / "b-together.md").write_text(
        f"# Notes\n\nThe sparse matrices are stored apart. {_FILLER} It is kept in two files.\n", encoding="utf-8"
    )
    sections = "".join(
        f"## Retention {n}\n\nThe retention check interval is thirty minutes, part {n}.\n\n" for n in range(6)
    )
    (docs / "long.md").write_text(f"# Long\n\n{sections}", encoding="utf-8")
    copied = (  # 20 words or more: a copy across trees is then found by its words (see `_distinct`)
        "## Compaction\n\nCompaction merges the shard files of one day into a single larger file overnight, "
        "so that queries over older data open far fewer files and the disk holds less index overhead.\n"
    )
    for tree in ("v1", "v2"):
        (docs / tree).mkdir()
        (docs / tree / "compaction.md").write_text(f"# Storage {tree}\n\n{copied}", encoding="utf-8")
    return docs


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(docs)])
    return docs


def _paths(store_dir: Path, query: str, *without: str, top_k: int = 5) -> list[str]:
    with open_store(store_dir, read_only=True, without_stages=without) as store:
        return [hit.path for hit in store.search(query, top_k=top_k).hits]


def test_without_proximity_the_scattered_page_keeps_its_bm25_lead_and_score(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=True, without_stages=["proximity"]) as store:
        hits = store.search("sparse matrices", top_k=2).hits
        plain = dict(lexical(store._require_db(), fts_query("sparse matrices")))

    assert _paths(store_dir, "sparse matrices", top_k=2) == ["docs/b-together.md", "docs/a-scattered.md"]
    assert [hit.path for hit in hits] == ["docs/a-scattered.md", "docs/b-together.md"]
    assert [hit.score for hit in hits] == [-plain[hit.chunk_id] for hit in hits]  # BM25, higher is better


def test_without_the_per_document_cap_one_long_page_fills_the_list(docs: Path, tmp_path: Path) -> None:
    capped = _paths(tmp_path / "store", "retention check interval")
    uncapped = _paths(tmp_path / "store", "retention check interval", "per-document")

    assert capped.count("docs/long.md") == 2
    assert uncapped == ["docs/long.md"] * 5


def test_without_distinct_a_copied_section_is_two_hits(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=True) as store:
        folded = store.search("compaction merges shard files", top_k=5).hits
    with open_store(tmp_path / "store", read_only=True, without_stages=["distinct"]) as store:
        apart = store.search("compaction merges shard files", top_k=5).hits

    assert [(hit.path, hit.also) for hit in folded[:1]] == [("docs/v1/compaction.md", ("docs/v2/compaction.md#0",))]
    assert "docs/v2/compaction.md" not in [hit.path for hit in folded]
    assert [hit.path for hit in apart[:2]] == ["docs/v1/compaction.md", "docs/v2/compaction.md"]
    assert not any(hit.also for hit in apart)


def test_without_vectors_a_hybrid_store_ranks_as_a_lexical_reader_does(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    embedder = FakeEmbedder(dimension=16)
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        writer.index([str(docs)])
    query = "how are sparse matrices stored"
    with open_store(tmp_path / "store", read_only=True, embedder=embedder) as store:
        hybrid = [(h.citation, h.score) for h in store.search(query, top_k=5).hits]
    with open_store(tmp_path / "store", read_only=True, embedder=embedder, without_stages=["vectors"]) as store:
        calls = len(embedder.calls)
        without = [(h.citation, h.score) for h in store.search(query, top_k=5).hits]
        assert len(embedder.calls) == calls  # the query is not even embedded
    with open_store(tmp_path / "store", read_only=True) as store:
        lexical_only = [(h.citation, h.score) for h in store.search(query, top_k=5).hits]

    assert without == lexical_only
    assert hybrid != lexical_only


def test_without_candidates_only_the_vectors_rank(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    embedder = FakeEmbedder(dimension=16)
    with open_store(tmp_path / "hybrid", read_only=False, embedder=embedder) as writer:
        writer.index([str(docs)])
    with open_store(tmp_path / "lexical", read_only=False) as writer:
        writer.index([str(docs)])

    assert _paths(tmp_path / "lexical", "sparse matrices", "candidates") == []
    with open_store(tmp_path / "hybrid", read_only=True, embedder=embedder, without_stages=["candidates"]) as store:
        result = store.search("sparse matrices", top_k=3)
    assert result.status == "ok"
    assert len(result.hits) == 3
    assert [hit.score for hit in result.hits] == sorted((hit.score for hit in result.hits), reverse=True)


def test_an_unknown_stage_is_refused_with_the_names_of_the_stages(tmp_path: Path) -> None:
    with pytest.raises(RagError) as caught:
        open_store(tmp_path / "store", read_only=True, without_stages=["proximty"])

    assert str(caught.value) == (
        "unknown search stage proximty: the stages are candidates, bursty, proximity, versions, sections, "
        "vectors, distinct, per-document"
    )


def test_every_stage_is_timed_by_name_in_order(docs: Path, tmp_path: Path) -> None:
    timings: dict[str, float] = {}
    with open_store(tmp_path / "store", read_only=True, without_stages=["sections"]) as store:
        store.search("how is the retention check interval of sparse matrices kept", timings=timings)
        store.search("sparse matrices", timings=timings)

    assert list(timings) == [*SEARCH_STAGES, "hits"]
    assert all(seconds >= 0.0 for seconds in timings.values())
