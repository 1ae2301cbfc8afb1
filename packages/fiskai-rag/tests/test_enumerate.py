"""Store.enumerate: the complete set of documents a match query selects (reference 7.3), over a real index."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_rag import open_store
from fiskai_rag.search._enumerate import MatchTerm, parse_match


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    _write(root / "streams.md", "# Streams\n\nA stream keeps messages.\n\n## Mirrors\n\nA mirror copies a stream.\n")
    _write(root / "kv.md", "# Buckets\n\nA bucket holds keys. Buckets are built on streams.\n")
    _write(root / "mirrors.md", "# Mirrors\n\nMirroring is configured per server.\n")
    _write(root / "cafe.md", "# Café\n\nThe café serves coffee near the river.\n")
    _write(root / "split.md", "# Deploy\n\nThe rollback plan.\n\n## Later\n\nA checklist for release.\n")
    # 30 pages naming a word once each: far more than any top-k search returns.
    for n in range(30):
        _write(root / "many" / f"page-{n:02d}.md", f"# Page {n}\n\nThis page mentions the quorum once.\n")
    return root


def _paths(docs: Path, tmp_path: Path, query: str, **options: int) -> list[str]:
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        result = store.enumerate(query, **options)
    assert result.status == "ok"
    return sorted(doc.path.removeprefix("docs/") for doc in result.documents)


def test_every_matching_document_is_returned_not_the_top_few(docs: Path, tmp_path: Path) -> None:
    paths = _paths(docs, tmp_path, "quorum")
    assert paths == [f"many/page-{n:02d}.md" for n in range(30)]


def test_words_must_all_appear_somewhere_in_the_document(docs: Path, tmp_path: Path) -> None:
    # `rollback` and `checklist` sit in different sections of split.md: both in the document is enough.
    assert _paths(docs, tmp_path, "rollback checklist") == ["split.md"]
    assert _paths(docs, tmp_path, "stream mirror") == ["streams.md"]  # stemmed: streams, mirrors


def test_a_phrase_must_be_adjacent_within_one_section(docs: Path, tmp_path: Path) -> None:
    assert _paths(docs, tmp_path, '"rollback checklist"') == []
    assert _paths(docs, tmp_path, '"rollback plan"') == ["split.md"]
    assert _paths(docs, tmp_path, '"holds keys"') == ["kv.md"]


def test_exclusion_and_column_filters(docs: Path, tmp_path: Path) -> None:
    assert _paths(docs, tmp_path, "stream -bucket") == ["streams.md"]
    assert _paths(docs, tmp_path, "heading:mirrors") == ["mirrors.md", "streams.md"]
    assert _paths(docs, tmp_path, "body:mirroring") == ["mirrors.md", "streams.md"]  # stemmed to mirror
    assert _paths(docs, tmp_path, "body:configured") == ["mirrors.md"]
    assert _paths(docs, tmp_path, "heading:bucket") == ["kv.md"]
    assert _paths(docs, tmp_path, "body:buckets -heading:buckets") == []


def test_case_and_diacritics_are_folded(docs: Path, tmp_path: Path) -> None:
    assert _paths(docs, tmp_path, "CAFE") == ["cafe.md"]
    assert _paths(docs, tmp_path, "café") == ["cafe.md"]


def test_limit_truncates_and_min_body_matches_filters(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        limited = store.enumerate("quorum", limit=5)
        assert (len(limited.documents), limited.matched, limited.truncated) == (5, 30, True)
        assert limited.indexed_documents == 35
        # streams.md has two sections whose body names a stream; kv.md one.
        both = store.enumerate("stream")
        assert [(d.path, d.sections) for d in both.documents] == [("docs/streams.md", 2), ("docs/kv.md", 1)]
        assert (both.documents[0].first, both.documents[0].heading) == (0, "Streams")  # 0-based ordinals
        assert [d.path for d in store.enumerate("stream", min_body_matches=2).documents] == ["docs/streams.md"]
        # A heading-only match has no body section: dropped by any floor.
        assert store.enumerate("heading:deploy", min_body_matches=1).documents == []


def test_soft_statuses(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "absent", read_only=True) as absent:
        assert absent.enumerate("x").status == "index_not_built"
    with open_store(tmp_path / "empty", read_only=False) as empty:
        (tmp_path / "nothing").mkdir()
        empty.index([str(tmp_path / "nothing")])
        assert empty.enumerate("x").status == "corpus_empty"
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        for query in ("", "-stream", '"" ... ---', "heading:"):
            assert store.enumerate(query).status == "query_empty", query


def test_user_text_is_never_fts5_syntax(docs: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        for query in ("NEAR(a b)", 'stream" OR "bucket', "content:stream", "a AND", "*", "stream)"):
            assert store.enumerate(query).status in ("ok", "query_empty"), query


def test_parse_match_reads_the_reference_syntax() -> None:
    assert parse_match('raft -leader "log entry" body:vote -heading:"old notes"') == [
        MatchTerm("raft", "", False),
        MatchTerm("leader", "", True),
        MatchTerm("log entry", "", False),
        MatchTerm("vote", "content", False),
        MatchTerm("old notes", "heading_path", True),
    ]
