"""Query-text analysis: which words of a question reach FTS5 (search) and the pack ranker."""

from __future__ import annotations

from fiskai_rag.pack._rank import plan_query, stem
from fiskai_rag.search._query import fts_query, is_filler, query_terms


def test_conversational_scaffolding_is_not_searched_for() -> None:
    assert query_terms("is there a way to try my telegraf config once and just print what it collects?") == [
        "telegraf",
        "config",
        "print",
        "collects",
    ]
    assert query_terms("I want the disk-based index, anything else I should know?") == ["disk", "based", "index"]


def test_contraction_halves_are_function_words() -> None:
    # FTS5 cuts "don't" into "don" + "t"; "don" is no evidence of anything.
    assert query_terms("how often does telegraf collect metrics if I don't set anything?") == [
        "often",
        "telegraf",
        "collect",
        "metrics",
        "set",
    ]
    assert query_terms("why isn't the WAL flushed") == ["wal", "flushed"]


def test_literature_request_words_are_scaffolding() -> None:
    assert query_terms("I am interested in articles concerning parallel sorting") == ["parallel", "sorting"]


def test_words_that_are_content_in_some_corpus_stay() -> None:
    for word in ("need", "show", "last", "help", "even", "information", "documents"):
        assert not is_filler(word), word
    assert query_terms("SHOW SERIES on the last shard") == ["show", "series", "last", "shard"]


def test_a_question_made_only_of_filler_keeps_its_words() -> None:
    assert fts_query("is there a way") == '"is" OR "there" OR "way"'


def test_packs_rank_the_words_search_searches_for() -> None:
    question = "is there a way to try my telegraf config once and just print what it collects?"

    plan = plan_query(question)

    assert plan.surfaces == ("telegraf", "config", "print", "collects")
    assert {"way", "try", "just", "there"} <= set(plan.scaffolding)
    assert [stem(term) for term in query_terms(question) if len(term) >= 3] == list(plan.terms)


def test_a_pack_question_made_only_of_filler_still_ranks_its_words() -> None:
    assert plan_query("anything else?").surfaces == ("anything", "else")
