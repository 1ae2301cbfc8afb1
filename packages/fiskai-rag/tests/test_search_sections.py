"""A verbose question that names a documentation tree (a product's top-level folder) ranks that tree first."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_rag import Store, open_store
from fiskai_rag.search import _section
from fiskai_rag.search._section import names_its_tree, tree_prefix

_FILLER = "The operator reads the notes before the change window opens and writes down what was seen."


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _corpus(root: Path) -> Path:
    """Two products' trees, a shared folder whose fragments products include, and a tree named `guide`."""
    content = root / "docs" / "content"
    for n in range(6):
        # Zephyr's own pages use its name; so it is a product name, used mostly in its tree.
        _write(content / "zephyr" / f"topic-{n}.md", f"# Zephyr topic {n}\n\nZephyr keeps notes. {_FILLER}\n")
        _write(content / "orbit" / f"topic-{n}.md", f"# Orbit topic {n}\n\n{_FILLER}\n")
        # `guide` is a folder, but the word is used everywhere else: it names no tree.
        _write(content / "other" / f"guide-{n}.md", f"# Notes {n}\n\nSee the guide. {_FILLER}\n")
    _write(content / "guide" / "start.md", "# Start\n\nKeep the rollback checklist of a release at hand.\n")
    _write(
        content / "other" / "rollback.md", "# Rollback\n\nThe guide holds the rollback checklist for every release.\n"
    )
    # The words alone prefer Orbit's page (it repeats them); Zephyr's and the shared fragment name zephyr.
    _write(
        content / "orbit" / "ports.md",
        "# Web interface port\n\nThe web interface listens on port 8090 by default; its port is fixed.\n",
    )
    _write(
        content / "zephyr" / "ports.md",
        "# Ports\n\nZephyr serves its web interface on port 8888 by default, as servers do.\n",
    )
    _write(
        content / "shared" / "zephyr" / "limits.md",
        "# Limits\n\nZephyr allows 100 web interface port users by default.\n",
    )
    return root / "docs"


def _always(inside: int, using: int, tree_chunks: int, all_chunks: int) -> bool:
    return True


def _hits(root: Path, question: str) -> list[str]:
    with open_store(root / "store", read_only=False) as store:
        store.index([str(_corpus(root))])  # the second call finds every file unchanged
        return [hit.path.removeprefix("docs/content/") for hit in store.search(question, top_k=3).hits]


@pytest.mark.parametrize("max_ranges", [64, 0], ids=["seeks", "one-join"])  # both ways of counting a word's uses
def test_a_verbose_question_naming_a_product_ranks_its_tree_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_ranges: int
) -> None:
    monkeypatch.setattr(_section, "_MAX_RANGES", max_ranges)
    question = "which port does the zephyr web interface use by default"
    with monkeypatch.context() as patch:
        patch.setattr(_section, "SECTION_BOOST", 0.0)
        before = _hits(tmp_path, question)
    after = _hits(tmp_path, question)

    assert before[0] == "orbit/ports.md"  # the words alone prefer the other product's page
    assert after[:2] == ["zephyr/ports.md", "shared/zephyr/limits.md"]  # shared fragments count as the product's
    assert after[2] == "orbit/ports.md"


def test_a_short_question_keeps_the_ranking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    question = "zephyr web port"  # three words, each chosen: BM25 weighs them
    with monkeypatch.context() as patch:
        patch.setattr(_section, "SECTION_BOOST", 1.0)
        boosted = _hits(tmp_path, question)
    with monkeypatch.context() as patch:
        patch.setattr(_section, "SECTION_BOOST", 0.0)
        plain = _hits(tmp_path, question)

    assert boosted == plain


def test_a_folder_named_by_a_common_word_names_no_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    question = "where does the guide keep the rollback checklist for a release"
    with monkeypatch.context() as patch:
        patch.setattr(_section, "SECTION_BOOST", 1.0)  # large enough to move anything it applied to
        boosted = _hits(tmp_path, question)
    with monkeypatch.context() as patch:
        patch.setattr(_section, "SECTION_BOOST", 0.0)
        plain = _hits(tmp_path, question)

    with monkeypatch.context() as patch:
        patch.setattr(_section, "SECTION_BOOST", 1.0)
        # control: were `guide` taken for a name, its tree would lead
        patch.setattr(_section, "names_its_tree", _always)
        taken = _hits(tmp_path, question)

    assert boosted == plain
    assert plain[0] != "guide/start.md"
    assert taken[0] == "guide/start.md"


def test_trees_are_where_a_roots_documents_first_branch() -> None:
    # The first and last citation paths of a root, in sorted order, share the prefix all its paths share.
    assert tree_prefix("site/content/_index.md", "site/content/telegraf/v1/a.md") == "site/content/"
    assert tree_prefix("site/content/alpha/a.md", "site/content/alphabet/b.md") == "site/content/"
    assert tree_prefix("cisi/corpus/0001.md", "cisi/corpus/1460.md") is None  # a flat collection: no trees
    assert tree_prefix("one/page.md", "one/page.md") is None  # a single document


def test_a_word_stops_naming_its_tree_once_the_index_uses_it_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "which port does the zephyr web interface use by default"
    docs = _corpus(tmp_path)

    def scores(store: Store) -> list[tuple[str, float]]:
        return [(hit.path, hit.score) for hit in store.search(question, top_k=3).hits]

    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        named = scores(store)
        for n in range(12):  # zephyr is now mostly used outside its tree: a common word, not its name
            _write(docs / "content" / "orbit" / f"zephyr-wind-{n}.md", f"# Wind {n}\n\nA zephyr is a breeze.\n")
        store.index([str(docs)])
        common = scores(store)  # the same connection: what it had read about the trees is stale now
        with monkeypatch.context() as patch:
            patch.setattr(_section, "SECTION_BOOST", 0.0)
            plain = scores(store)

    assert named[0][0] == "docs/content/zephyr/ports.md"
    assert common == plain


def test_a_name_is_a_word_concentrated_in_its_tree_beyond_chance() -> None:
    # Counts read from real stores: influxdata-docs' chronograf and influxdb, tldr-pages' linux and common.
    assert names_its_tree(inside=734, using=949, tree_chunks=819, all_chunks=38631)  # chronograf
    assert not names_its_tree(inside=3920, using=14242, tree_chunks=4840, all_chunks=38631)  # influxdb
    assert names_its_tree(inside=144, using=225, tree_chunks=2020, all_chunks=7450)  # linux: 0.64 in 0.27
    # common/ holds most pages: a majority of the word's uses there is only what chance gives it
    assert not names_its_tree(inside=44, using=72, tree_chunks=4660, all_chunks=7450)
    assert not names_its_tree(inside=0, using=0, tree_chunks=10, all_chunks=100)  # a word nobody uses
