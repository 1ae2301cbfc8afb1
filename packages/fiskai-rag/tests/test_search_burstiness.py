"""A verbose question weighs the word its topic pages repeat above generic words used once in passing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from fiskai_rag import open_store
from fiskai_rag.search._burstiness import VERBOSE_TERMS, reweight, term_weights
from fiskai_rag.search._query import fts_query, query_terms
from fiskai_rag.search._topk import lexical

_FILLER = "The ward keeps its notes in the blue binder by the door."
_QUESTION = "methods known causes of hydrocephalus"


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for n in range(8):  # pages without the question's words, so they are rare enough to carry weight
        (docs / f"other-{n}.md").write_text(f"# Ward {n}\n\n{_FILLER}\n", encoding="utf-8")
    # The generic words occur once in each page that has them; the topic word comes back in its pages.
    for n, words in enumerate(["methods", "known causes", "methods known", "causes", "causes"]):
        (docs / f"generic-{n}.md").write_text(f"# Note {n}\n\n{_FILLER} The {words} were listed.\n", encoding="utf-8")
    (docs / "a-generic.md").write_text(f"# Survey\n\nThe methods known were listed. {_FILLER}\n", encoding="utf-8")
    (docs / "b-topic.md").write_text(
        f"# Shunts\n\nHydrocephalus in infants. {_FILLER} Hydrocephalus was treated; hydrocephalus recurred.\n",
        encoding="utf-8",
    )
    (docs / "c-topic.md").write_text(
        f"# Valves\n\nHydrocephalus and valves. {_FILLER} Hydrocephalus again, hydrocephalus.\n", encoding="utf-8"
    )
    return docs


def test_the_repeated_topic_word_outweighs_generic_words(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        paths = {hit.chunk_id: hit.path for hit in store.search(_QUESTION, top_k=20).hits}
        plain = [paths[chunk_id] for chunk_id, _ in lexical(store._require_db(), fts_query(_QUESTION))]
        hits = [hit.path for hit in store.search(_QUESTION, top_k=3).hits]

    # The precondition: BM25 alone puts the page with two generic words above a topic page.
    assert plain.index("docs/a-generic.md") < plain.index("docs/b-topic.md")
    assert sorted(hits[:2]) == ["docs/b-topic.md", "docs/c-topic.md"]


def test_no_word_of_the_question_loses_weight(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    terms = [*query_terms(_QUESTION), "methods"]  # a word used twice weighs at least twice
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        weights = term_weights(store._require_db(), terms)

    assert weights["methods"] >= 2.0
    assert min(weights.values()) >= 1.0
    assert weights["hydrocephalus"] > weights["known"] == pytest.approx(1.0)


def test_a_short_question_keeps_the_bm25_order(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    short = "known causes hydrocephalus"
    assert len(set(query_terms(short))) < VERBOSE_TERMS
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        db = store._require_db()
        ranked = lexical(db, fts_query(short))
        assert reweight(db, fts_query(short), ranked) == ranked


def test_per_word_scores_sum_to_the_questions_bm25(tmp_path: Path) -> None:
    # The re-weighting rests on this: FTS5's bm25() of an OR query is the sum of each word's own bm25().
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        db = store._require_db()
        match = fts_query(_QUESTION)
        whole = dict(lexical(db, match))
        summed: dict[int, float] = {}
        for term in query_terms(_QUESTION):
            for chunk_id, score in lexical(db, f'"{term}"'):
                summed[chunk_id] = summed.get(chunk_id, 0.0) + score

    assert summed.keys() == whole.keys()
    for chunk_id, score in whole.items():
        assert summed[chunk_id] == pytest.approx(score)


def test_a_reader_reweights_without_writing_the_index(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(docs)])
        expected = [hit.path for hit in writer.search(_QUESTION, top_k=3).hits]
    # Any reader of a WAL file maps its -shm and -wal companions; the index itself must stay as it was.
    index = tmp_path / "store" / "knowledge.db"
    before = hashlib.sha256(index.read_bytes()).hexdigest()
    with open_store(tmp_path / "store", read_only=True) as reader:
        assert [hit.path for hit in reader.search(_QUESTION, top_k=3).hits] == expected
        assert [hit.path for hit in reader.search(_QUESTION, top_k=3).hits] == expected  # the vocabulary is reused
    assert hashlib.sha256(index.read_bytes()).hexdigest() == before


def test_the_weights_follow_the_index_after_it_changes(tmp_path: Path) -> None:
    # The collection's mean uses-per-chunk is cached per connection; new documents must not be weighed
    # with the old figure, neither by the writer that added them nor by a reader opened before.
    docs = _corpus(tmp_path)
    terms = query_terms(_QUESTION)
    more = tmp_path / "more"
    more.mkdir()
    (more / "lists.md").write_text("# Lists\n\n" + " ".join(["methods known causes"] * 12) + "\n", encoding="utf-8")
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(docs)])
        with open_store(tmp_path / "store", read_only=True) as reader:
            old = term_weights(reader._require_db(), terms)
            assert term_weights(writer._require_db(), terms) == old
            writer.index([str(docs), str(more)])
            new_writer = term_weights(writer._require_db(), terms)
            new_reader = term_weights(reader._require_db(), terms)
    with open_store(tmp_path / "store", read_only=True) as fresh:
        new_fresh = term_weights(fresh._require_db(), terms)

    assert new_fresh != old
    assert new_writer == pytest.approx(new_fresh)
    assert new_reader == pytest.approx(new_fresh)
