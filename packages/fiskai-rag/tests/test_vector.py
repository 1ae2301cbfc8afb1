from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import cast

import pytest
from typing_extensions import override

from fiskai_rag import OpenAICompatibleEmbedder, Remedy, open_store
from fiskai_rag.errors import EmbedderError, EmbeddingDimensionError, ManifestMismatchError
from fiskai_rag.store._db import Conn
from fiskai_rag.testing import EmbeddingsServer, FakeEmbedder


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddingsServer]:
    """A real embeddings server: the tokenlearn static model where installed, hashed vectors elsewhere."""
    with EmbeddingsServer() as running:
        running.warm_up()
        yield running


@pytest.fixture
def reset_server(server: EmbeddingsServer) -> Iterator[EmbeddingsServer]:
    yield server
    server.hang = False
    server.status = None
    server.dimension = None


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "docs"
    root.mkdir()
    (root / "accounts.md").write_text(
        "# Accounts\n\n## Sign up\n\nCreate a new account for a person in the authentication service.\n",
        encoding="utf-8",
    )
    (root / "streams.md").write_text(
        "# Streams\n\n## Mirrors\n\nA mirror copies messages from one stream to another stream.\n", encoding="utf-8"
    )
    (root / "cooking.md").write_text("# Cooking\n\nSimmer the tomato sauce for twenty minutes.\n", encoding="utf-8")
    return root


def _client(server: EmbeddingsServer, *, timeout: float = 5.0, model: str | None = None) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(
        base_url=server.base_url,
        model=model or server.model,
        timeout=timeout,
        query_prefix="query: ",
        document_prefix="title: {title} | text: ",
    )


def test_hybrid_search_over_a_real_embeddings_server(
    docs: Path, tmp_path: Path, reset_server: EmbeddingsServer
) -> None:
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False, embedder=_client(reset_server)) as writer:
        stats = writer.index(["docs"])
        manifest = writer.manifest()
        counts = writer.stats()

    assert (stats.added, stats.embeddings) == (3, 3)
    assert manifest is not None and manifest.model == reset_server.model and manifest.normalized
    assert counts.vectors == 3
    with open_store(store_dir, read_only=True, embedder=_client(reset_server)) as reader:
        result = reader.search("register someone in auth")
    assert result.status == "ok" and result.degraded is None
    assert result.tier.startswith("hybrid (FTS5 + vectors, RRF) - model=")  # a server's too, as the seed says
    # "auth" shares no indexed word with the accounts section; only the vector side can rank it.
    assert result.hits[0].citation == "docs/accounts.md#0"


def test_a_reader_with_another_model_is_refused(docs: Path, tmp_path: Path, reset_server: EmbeddingsServer) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=_client(reset_server)) as writer:
        writer.index(["docs"])

    with pytest.raises(ManifestMismatchError) as caught:
        open_store(tmp_path / "store", read_only=True, embedder=_client(reset_server, model="other-model"))
    assert "other-model" in str(caught.value) and caught.value.remedy is Remedy.REINDEX


def test_a_lexical_index_refuses_vectors_until_reindexed(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False) as writer:
        writer.index(["docs"])
    embedder = FakeEmbedder()

    with open_store(store_dir, read_only=False, embedder=embedder) as writer:
        with pytest.raises(ManifestMismatchError) as caught:
            writer.index(["docs"])
        assert "lexical-only" in str(caught.value)
        assert writer.index(["docs"], reindex=True).embeddings == 3
    with pytest.raises(ManifestMismatchError):
        open_store(store_dir, read_only=True, embedder=FakeEmbedder(model="another"))


def test_a_dimension_change_is_refused_without_reindex_and_allowed_with_it(docs: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False, embedder=FakeEmbedder(dimension=16)) as writer:
        writer.index(["docs"])

    with open_store(store_dir, read_only=False, embedder=FakeEmbedder(dimension=24)) as writer:
        with pytest.raises(ManifestMismatchError) as caught:
            writer.index(["docs"])
        assert "dim=16" in str(caught.value) and "dim=24" in str(caught.value)
        writer.index(["docs"], reindex=True)
        manifest = writer.manifest()
    assert manifest is not None and manifest.dimension == 24


def test_unreachable_server_at_query_time_degrades_to_lexical(docs: Path, tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        writer.index(["docs"])
    embedder.fail = EmbedderError("embeddings server at http://127.0.0.1:9 is unreachable: refused")

    with open_store(tmp_path / "store", read_only=True, embedder=embedder) as reader:
        result = reader.search("tomato sauce")

    assert result.degraded is not None and "unreachable" in result.degraded
    assert result.tier.startswith("hybrid -> DEGRADED to lexical (embeddings unreachable:")
    assert result.note == "the embeddings server was unreachable, so this query used the lexical tier only"
    assert [h.citation for h in result.hits] == ["docs/cooking.md#0"]


def test_a_hung_server_times_out_and_degrades(docs: Path, tmp_path: Path, reset_server: EmbeddingsServer) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=_client(reset_server)) as writer:
        writer.index(["docs"])
    reset_server.hang = True

    with open_store(tmp_path / "store", read_only=True, embedder=_client(reset_server, timeout=0.2)) as reader:
        result = reader.search("tomato sauce")

    assert result.degraded is not None and "timed out" in result.degraded
    assert [h.citation for h in result.hits] == ["docs/cooking.md#0"]


def test_a_server_answering_another_dimension_is_a_hard_error(
    docs: Path, tmp_path: Path, reset_server: EmbeddingsServer
) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=_client(reset_server)) as writer:
        writer.index(["docs"])
    reset_server.dimension = 7

    with open_store(tmp_path / "store", read_only=True, embedder=_client(reset_server)) as reader:
        with pytest.raises(EmbeddingDimensionError) as caught:
            reader.search("tomato")
    assert "now emits dimension 7" in str(caught.value)
    with open_store(tmp_path / "store", read_only=False, embedder=_client(reset_server)) as writer:
        (docs / "new.md").write_text("# New\n\nfresh text\n", encoding="utf-8")
        with pytest.raises(ManifestMismatchError):
            writer.index(["docs"])


def test_an_unreachable_server_fails_indexing_loudly_before_writing(docs: Path, tmp_path: Path) -> None:
    embedder = FakeEmbedder(fail=EmbedderError("embeddings server at x is unreachable"))

    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        with pytest.raises(EmbedderError):
            writer.index(["docs"])
        assert writer.sources() == []


def test_embedding_happens_outside_the_write_transaction(docs: Path, tmp_path: Path) -> None:
    """While the embedder runs, another connection can write: no transaction is open."""
    import apsw

    store_dir = tmp_path / "store"
    probes: list[str] = []

    class Probing(FakeEmbedder):
        @override
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            other = cast(Conn, apsw.Connection(str(store_dir / "knowledge.db")))
            other.set_busy_timeout(0)
            other.execute("CREATE TABLE IF NOT EXISTS probe(x)")  # fails with BusyError inside a write txn
            other.close()
            probes.append("ok")
            return super().embed(texts)

    with open_store(store_dir, read_only=False, embedder=Probing()) as writer:
        writer.index(["docs"])

    assert len(probes) >= 2  # the dimension probe and the batch


def test_with_embeddings_a_file_counts_as_done_once_its_batch_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The progress count follows the slow part, the model's pass, instead of running ahead of it."""
    from fiskai_rag.index import _index as index_module

    monkeypatch.setattr(index_module, "_BATCH_CHUNKS_EMBEDDED", 3)
    docs = tmp_path / "many"
    docs.mkdir()
    for n in range(12):
        (docs / f"page{n:02}.md").write_text(f"# Page {n}\n\nText of page {n} about topic {n}.\n", "utf-8")
    embedder = FakeEmbedder()
    reports: list[tuple[int, int, str, int]] = []

    def progress(done: int, total: int, key: str) -> None:
        reports.append((done, total, key, sum(len(call) for call in embedder.calls)))

    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        stats = writer.index([str(docs)], progress=progress)

    assert stats.chunks == 12
    assert reports[0][:3] == (0, 12, "")  # the total, before the first batch is embedded
    assert reports[-1][:2] == (12, 12)
    # Every report after the first comes once the files it counts are embedded (one chunk each; the
    # first call is the dimension probe).
    assert all(embedded - 1 >= done for done, _, _, embedded in reports[1:])
    assert 1 < len(reports) < 12  # one report a batch, not one a file


def test_prefixes_are_applied_to_documents_and_queries(docs: Path, tmp_path: Path) -> None:
    embedder = FakeEmbedder(query_prefix="q: ", document_prefix="title: {title} | ")
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        writer.index(["docs/cooking.md"])
    with open_store(tmp_path / "store", read_only=True, embedder=embedder) as reader:
        reader.search("sauce")

    assert embedder.calls[1] == ["title: Cooking | Cooking\n\nSimmer the tomato sauce for twenty minutes."]
    assert embedder.calls[-1] == ["q: sauce"]


def test_dry_run_reindex_estimates_the_full_embedding_work(docs: Path, tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        writer.index(["docs"])
        calls = len(embedder.calls)
        estimate = writer.index(["docs"], reindex=True, dry_run=True)

    assert (estimate.added, estimate.embeddings) == (3, 3)
    assert len(embedder.calls) == calls  # a dry run never contacts the server


def test_reconciled_away_documents_lose_their_vectors(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index(["docs"])
        (docs / "cooking.md").unlink()
        assert writer.index(["docs"], reconcile=True).removed == 1
        assert writer.stats().vectors == 2


def test_a_writer_without_embeddings_can_still_remove_and_reset_a_vector_index(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=FakeEmbedder()) as writer:
        writer.index(["docs"])

    with open_store(tmp_path / "store", read_only=False) as writer:
        assert writer.remove("docs/cooking.md") is True
        assert writer.stats().vectors == 2
        assert writer.reset() == (2, 2)
        assert writer.manifest() is None


def test_doctor_checks_the_server_the_extension_and_the_manifest(
    docs: Path, tmp_path: Path, reset_server: EmbeddingsServer
) -> None:
    from fiskai_rag.doctor import diagnose

    with open_store(tmp_path / "store", read_only=False, embedder=_client(reset_server)) as writer:
        writer.index(["docs"])

    healthy = {c.name: c for c in diagnose(tmp_path / "store", embedder=_client(reset_server), paths=["docs", "gone"])}
    reset_server.status = 503
    down = {c.name: c for c in diagnose(tmp_path / "store", embedder=_client(reset_server, timeout=0.2))}

    assert healthy["sqlite-vec extension"].ok
    assert healthy["Embeddings reachable"].ok and healthy["Manifest matches model"].ok
    assert healthy["Index path docs"].ok and not healthy["Index path gone"].ok
    assert not any(c.fatal and not c.ok for c in healthy.values())
    assert not down["Embeddings reachable"].ok and not down["Embeddings reachable"].fatal
    assert "503" in down["Embeddings reachable"].detail


def test_the_tier_names_no_dimension_before_one_is_pinned(docs: Path, tmp_path: Path) -> None:
    """Before the first index run (`knowledge --model X index` prints the tier first) there is no `dim=0`."""
    embedder = FakeEmbedder(dimension=8)
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        before = writer.tier()
        writer.index(["docs"])
        after = writer.tier()
    assert "dim=" not in before and before.startswith("hybrid (FTS5 + vectors")
    assert after.endswith("dim=8")
