"""Query words the corpus names in headings outweigh words it only uses in running text."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_rag import open_store
from fiskai_rag._search import fts_query, lexical
from fiskai_rag._term_weight import HEADING_BASE, heading_weighted, term_weights

_FILLER = "The operator reads the notes before the change window opens and writes down what was seen."


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for n in range(10):  # pages with neither word, so both are rare enough to carry weight
        (docs / f"other-{n}.md").write_text(f"# Other {n}\n\n{_FILLER}\n", encoding="utf-8")
    for name in ("write", "read"):  # the docs name plugins in their headings
        (docs / f"plugin-{name}.md").write_text(f"# Plugins\n\n## The {name} plugin\n\n{_FILLER}\n", encoding="utf-8")
    # "kept" is rarer, so plain BM25 prefers the page that only says it; the page about plugins names the
    # question's topic. One sentence each, the same length otherwise.
    (docs / "a-kept.md").write_text(f"# Notes\n\nOld notes are kept for a week. {_FILLER}\n", encoding="utf-8")
    (docs / "b-plugins.md").write_text(
        f"# Setup\n\n## Plugins directory\n\nPlugins live in one folder. {_FILLER}\n", encoding="utf-8"
    )
    return docs


def test_a_heading_word_outranks_a_rarer_word_of_running_text(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    question = "where are my plugins kept"
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        db = store._require_db()
        paths = {hit.chunk_id: hit.path for hit in store.search(question, top_k=20).hits}
        plain = [paths[chunk_id] for chunk_id, _ in lexical(db, fts_query(question))]
        hits = [hit.path for hit in store.search(question, top_k=20).hits]
        weights = term_weights(db, ["plugins", "kept", "absent"])

    # The precondition: BM25 alone puts the page that only says "kept" first.
    assert plain[0] == "docs/a-kept.md"
    assert hits.index("docs/b-plugins.md") < hits.index("docs/a-kept.md")
    assert weights["kept"] == HEADING_BASE  # never in a heading
    assert weights["plugins"] == pytest.approx(HEADING_BASE + 1.0)  # always in one
    assert weights["absent"] == 1.0


def test_the_weighted_scores_are_the_words_own_bm25_and_one_word_keeps_its_ranking(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        db = store._require_db()
        match = fts_query("plugins kept plugins")
        ranked = lexical(db, match)
        rescored = dict(heading_weighted(db, match, ranked))
        weights = term_weights(db, ["plugins", "kept"])
        single = lexical(db, fts_query("plugins"))
        kept_single = heading_weighted(db, fts_query("plugins"), single)
        one_word: dict[str, dict[int, float]] = {}
        for term in ("plugins", "kept"):
            sql = "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?"
            one_word[term] = {int(r): float(s) for r, s in db.execute(sql, (f'"{term}"',))}

    assert set(rescored) == {chunk_id for chunk_id, _ in ranked}
    for chunk_id, score in ranked:
        plugins, kept = one_word["plugins"].get(chunk_id, 0.0), one_word["kept"].get(chunk_id, 0.0)
        # FTS5's OR score is the sum of its phrases' scores (a repeated word counts per use) ...
        assert score == pytest.approx(2 * plugins + kept)
        # ... and the weighted score multiplies each word's part by its weight.
        assert rescored[chunk_id] == pytest.approx(2 * weights["plugins"] * plugins + weights["kept"] * kept)
    assert kept_single == single
