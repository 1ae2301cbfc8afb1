"""A page without a title of its own is headed by its file name, in its chunks and in search hits."""

from __future__ import annotations

from pathlib import Path

from fiskai_rag import open_store
from fiskai_rag.index._chunk import chunk_markdown
from fiskai_rag.index._page_name import page_name

_FRAGMENT = "## Data types\n\n### UInteger\n\nTrailing `u` on the number specifies an unsigned integer.\n"


def test_the_name_is_the_folder_and_file_in_words_and_an_index_page_takes_its_folder() -> None:
    assert page_name("/docs/content/influxdb3-cli/config-options.md") == "influxdb3 cli > config options"
    assert page_name("/docs/config_options.markdown") == "docs > config options"
    assert page_name("/docs/telegraf/_index.md") == "telegraf"
    assert page_name("/docs/plugins/README.md") == "plugins"
    assert page_name("/docs/plugins/Index.md") == "plugins"
    assert page_name("index.md") == "index"  # no folder to take the name from
    assert page_name("notes.md") == "notes"
    assert page_name("/docs/---.md") == "docs"
    assert page_name("---.md") == ""


def test_an_untitled_page_is_headed_by_its_name_and_a_title_or_level_one_heading_wins() -> None:
    untitled = chunk_markdown(_FRAGMENT, "line protocol")
    assert [c.heading_path for c in untitled.chunks] == ["line protocol > Data types > UInteger"]
    assert untitled.chunks[0].content.startswith("line protocol > Data types > UInteger\n\n")
    assert untitled.root == "line protocol"

    titled = chunk_markdown("---\ntitle: Line protocol reference\n---\n" + _FRAGMENT, "line protocol")
    assert titled.chunks[0].heading_path == "Line protocol reference > Data types > UInteger"

    own_title = chunk_markdown("# Writing points\n\n" + _FRAGMENT, "line protocol")
    assert own_title.chunks[0].heading_path == "Writing points > Data types > UInteger"

    assert chunk_markdown(_FRAGMENT).chunks[0].heading_path == "Data types > UInteger"


def test_search_finds_a_fragment_by_its_file_name_and_copies_under_other_names_still_fold(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "shared").mkdir(parents=True)
    (docs / "shared" / "line-protocol.md").write_text(_FRAGMENT, encoding="utf-8")
    (docs / "shared" / "v3-line-protocol.md").write_text(_FRAGMENT, encoding="utf-8")
    for n in range(4):  # other integers, so "uinteger" alone does not decide
        (docs / f"types-{n}.md").write_text(f"# Types {n}\n\nAn unsigned integer column stores counts.\n", "utf-8")
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        hits = store.search("unsigned integer line protocol", top_k=3).hits

    assert hits[0].heading_path in {
        "shared > line protocol > Data types > UInteger",
        "shared > v3 line protocol > Data types > UInteger",
    }
    assert hits[0].also_total == 1  # the byte-identical fragment under another name is one hit with a copy
    assert all("line protocol" not in hit.heading_path for hit in hits[1:])
