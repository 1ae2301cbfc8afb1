"""One long page cannot fill the hit list: a document contributes at most two hits."""

from __future__ import annotations

from pathlib import Path

from fiskai_rag import open_store
from fiskai_rag.search._distinct import MAX_HITS_PER_DOCUMENT


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    sections = "".join(
        f"## Retention {n}\n\nThe retention check interval is thirty minutes, section {n}.\n\n" for n in range(6)
    )
    (docs / "long.md").write_text(f"# Long\n\n{sections}", encoding="utf-8")
    (docs / "short.md").write_text("# Short\n\nA retention period of one hour is the minimum.\n", encoding="utf-8")
    return docs


def test_a_document_contributes_at_most_two_hits(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        hits = store.search("retention check interval", top_k=5).hits

    paths = [hit.path for hit in hits]
    assert MAX_HITS_PER_DOCUMENT == 2
    assert paths.count("docs/long.md") == 2
    assert "docs/short.md" in paths
    assert len(hits) == 3  # the long page's other four sections are not padded back in
