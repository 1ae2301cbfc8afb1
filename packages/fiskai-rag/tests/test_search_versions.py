"""A question that names a product version ranks that version's copy of a page first."""

from __future__ import annotations

from pathlib import Path

from fiskai_rag import open_store
from fiskai_rag.search._proximity import proximity
from fiskai_rag.search._query import fts_query
from fiskai_rag.search._topk import lexical
from fiskai_rag.search._version import named_versions, path_versions, prefer_versions

_FILLER = "The operator reads the notes before the change window opens and writes down what was seen."


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    for n in range(6):  # pages without the query's words, so those words are rare enough to carry weight
        (docs / "other").mkdir(parents=True, exist_ok=True)
        (docs / "other" / f"page-{n}.md").write_text(f"# Other {n}\n\n{_FILLER}\n", encoding="utf-8")
    # One page per version tree. The v1 page is a few words shorter, so BM25 alone ranks it first for
    # any question about the listening port; the numbers differ, so the two are not folded as copies.
    for version, port, extra in (("v1", "8086", ""), ("v2", "8087", " Set it.")):
        page = docs / "product" / version / "ports.md"
        page.parent.mkdir(parents=True)
        page.write_text(
            f"# Ports\n\nThe server listens for HTTP requests on port {port} by default.{extra}\n", encoding="utf-8"
        )
    return docs


def _search(root: Path, question: str) -> tuple[list[str], list[str]]:
    """The hit paths of `question`, and the paths in the order of the lexical ranking before the version step."""
    docs = _corpus(root)
    with open_store(root / "store", read_only=False) as store:
        store.index([str(docs)])
        hits = [hit.path for hit in store.search(question, top_k=2).hits]
        db = store._require_db()
        match = fts_query(question)
        before = proximity(db, match, lexical(db, match))
        paths = {
            int(i): str(p)
            for i, p in db.execute("SELECT c.id, d.cite FROM chunks c JOIN documents d ON d.id = c.document_id")
        }
    return hits, [paths[chunk_id] for chunk_id, _ in before[:2]]


def test_a_named_version_ranks_its_tree_first(tmp_path: Path) -> None:
    hits, before = _search(tmp_path, "which port does the product v2 server listen on")

    assert before == ["docs/product/v1/ports.md", "docs/product/v2/ports.md"]  # the words alone prefer v1
    assert hits == ["docs/product/v2/ports.md", "docs/product/v1/ports.md"]


def test_a_version_after_a_path_word_counts_and_a_plain_number_does_not(tmp_path: Path) -> None:
    named, _ = _search(tmp_path / "named", "which port does product 2 listen on")
    counted, _ = _search(tmp_path / "counted", "which port does the server listen on after 2 restarts")

    assert named[0] == "docs/product/v2/ports.md"
    assert counted[0] == "docs/product/v1/ports.md"  # `after 2` names no version: `after` is no path segment


def test_a_question_without_a_version_keeps_the_ranking(tmp_path: Path) -> None:
    hits, before = _search(tmp_path, "which port does the server listen on")

    assert hits == before == ["docs/product/v1/ports.md", "docs/product/v2/ports.md"]


def test_versions_named_in_text() -> None:
    paths = ["docs/content/influxdb/v1/config.md", "docs/content/influxdb3/core/install.md"]

    assert named_versions("max series per InfluxDB 1.x database", paths) == {"1"}
    assert named_versions("what changed in v2.7", paths) == {"2"}
    assert named_versions("where do plugins go in influxdb 3", paths) == {"3"}
    assert named_versions("influxdb3 plugin directory", paths) == {"3"}
    assert named_versions("collect every 10 seconds, keep the top 5", paths) == frozenset()
    assert named_versions("no digits at all", paths) == frozenset()


def test_versions_carried_by_paths() -> None:
    assert path_versions("site/content/shared/influxdb-v2/reference/faq.md") == {"2"}
    assert path_versions("site/content/influxdb3/core/get-started.md") == {"3"}
    assert path_versions("site/content/shared/v3-line-protocol.md") == {"3"}
    assert path_versions("site/telegraf/input-plugins/aws_s3.md") == frozenset()  # `s3` names a service
    assert path_versions("cacm/corpus/0001.md") == frozenset()


def test_a_ranking_without_a_named_version_is_returned_as_it_was(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        db = store._require_db()
        ranked = [(2, 5.0), (1, 5.0), (3, 1.0)]

        assert prefer_versions(db, "which port", ranked) == ranked
        assert prefer_versions(db, "port v9", ranked) == ranked  # no ranked chunk is in a v9 tree
        assert prefer_versions(db, "port v1", []) == []
