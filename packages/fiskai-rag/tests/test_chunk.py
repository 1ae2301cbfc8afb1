from __future__ import annotations

import random
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from fiskai_rag.index._chunk import SPLIT_BYTES, TARGET_BYTES, chunk_markdown, chunk_text, clean_heading


def test_breadcrumb_is_folded_into_each_chunk() -> None:
    doc = chunk_markdown("# Design\n\n## Backpressure\n\nThe buffer fills and producers slow down.\n")

    assert len(doc.chunks) == 1
    chunk = doc.chunks[0]
    assert chunk.heading_path == "Design > Backpressure"
    assert chunk.content == "Design > Backpressure\n\nThe buffer fills and producers slow down."
    assert doc.title == "Design"


def test_sibling_and_shallower_headings_pop_the_breadcrumb() -> None:
    doc = chunk_markdown("# A\n\n## B\n\nb\n\n### C\n\nc\n\n## D\n\nd\n\n# E\n\ne\n")

    assert [c.heading_path for c in doc.chunks] == ["A > B", "A > B > C", "A > D", "E"]


def test_hash_inside_a_fence_is_not_a_heading_and_the_fence_stays_whole() -> None:
    body = "\n".join(f"# comment {i}\necho {'x' * 60}" for i in range(40))
    text = f"# Shell\n\nIntro.\n\n```sh\n{body}\n```\n\nAfter.\n"

    doc = chunk_markdown(text)

    fenced = [c for c in doc.chunks if "```sh" in c.content]
    assert len(fenced) == 1
    assert fenced[0].content.count("# comment") == 40
    assert len(fenced[0].content.encode()) > SPLIT_BYTES  # oversized, still one piece
    assert {c.heading_path for c in doc.chunks} == {"Shell"}


def test_tilde_fences_and_longer_backtick_fences_close_only_on_a_matching_run() -> None:
    text = "# T\n\n~~~\n# inside tilde\n```\n# still inside\n~~~\n\n````md\n```\n# nested\n```\n````\n\n## After\n\nx\n"

    doc = chunk_markdown(text)

    assert [c.heading_path for c in doc.chunks] == ["T", "T > After"]
    assert "# still inside" in doc.chunks[0].content
    assert "# nested" in doc.chunks[0].content


def test_indented_code_is_kept_whole_and_its_hashes_are_not_headings() -> None:
    code = "\n".join(f"    # line {i} {'y' * 70}" for i in range(30))
    doc = chunk_markdown(f"# Top\n\nText before.\n\n{code}\n\nText after.\n")

    assert all(c.heading_path == "Top" for c in doc.chunks)
    assert any(c.content.count("# line") == 30 for c in doc.chunks)


def test_setext_headings_are_headings() -> None:
    doc = chunk_markdown("Guide\n=====\n\nIntro text.\n\nInstall\n-------\n\nRun the installer.\n")

    assert [c.heading_path for c in doc.chunks] == ["Guide", "Guide > Install"]
    assert doc.title == "Guide"


def test_yaml_front_matter_gives_the_title_and_is_not_indexed() -> None:
    doc = chunk_markdown('---\ntitle: "Write data"\nweight: 10\n---\n\nBody text.\n')

    assert doc.title == "Write data"
    assert [c.content for c in doc.chunks] == ["Write data\n\nBody text."]  # the title heads the breadcrumb
    assert "weight" not in doc.chunks[0].content


def test_a_front_matter_title_heads_the_breadcrumbs_until_a_level_one_heading() -> None:
    titled = chunk_markdown("---\ntitle: Telegraf agent settings\n---\n\n## Collection > interval\n\nTen seconds.\n")
    own_h1 = chunk_markdown("---\ntitle: Agent\n---\n\n# Telegraf agent\n\n## interval\n\nTen seconds.\n")

    assert [c.heading_path for c in titled.chunks] == ["Telegraf agent settings > Collection > interval"]
    assert [c.heading_path for c in own_h1.chunks] == ["Telegraf agent > interval"]


def test_thematic_break_without_closing_is_not_front_matter() -> None:
    doc = chunk_markdown("---\n\nJust text.\n")

    assert [c.content for c in doc.chunks] == ["Just text."]


def test_atx_heading_needs_a_space_and_closing_hashes_are_dropped() -> None:
    doc = chunk_markdown("#hashtag is text\n\n## Real ##\n\nbody\n")

    assert [c.heading_path for c in doc.chunks] == ["", "Real"]
    assert doc.chunks[0].content == "#hashtag is text"


def test_empty_and_whitespace_input_has_no_chunks() -> None:
    assert chunk_markdown("").chunks == []
    assert chunk_markdown(" \n\n\t\n").chunks == []
    assert chunk_text("\n\n").chunks == []


def test_paragraphs_pack_to_about_the_target_size() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 40 for i in range(30)]
    doc = chunk_markdown("\n\n".join(paragraphs))

    sizes = [len(c.content.encode()) for c in doc.chunks]
    assert len(doc.chunks) > 1
    assert all(size <= TARGET_BYTES for size in sizes)
    assert all(size > TARGET_BYTES // 2 for size in sizes[:-1])
    joined = "\n\n".join(c.content for c in doc.chunks)
    assert all(p.strip() in joined for p in paragraphs)


def test_a_huge_prose_line_splits_on_character_boundaries() -> None:
    line = "é" * 5000  # two bytes per character

    doc = chunk_text(line)

    assert "".join(c.content for c in doc.chunks) == line
    assert all(len(c.content.encode()) <= TARGET_BYTES for c in doc.chunks)


def test_crlf_and_bom_are_normalised() -> None:
    doc = chunk_markdown("\ufeff# Win\r\n\r\nline one\r\nline two\r\n")

    assert doc.chunks[0].content == "Win\n\nline one\nline two"


def _markdown_it_headings(md: MarkdownIt, text: str) -> list[str]:
    tokens = md.parse(text)
    return [tokens[i + 1].content.strip() for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0]


def test_headings_agree_with_markdown_it_on_real_documentation(shared_fixtures: Path) -> None:
    """The fast scanner finds the same top-level headings as markdown-it-py on real docs."""
    files = sorted((shared_fixtures / "corpus" / "influxdata-docs").rglob("*.md"))
    sample = random.Random(7).sample(files, 150)
    md = MarkdownIt("commonmark")
    disagreements: list[str] = []
    for path in sample:
        text = path.read_text(encoding="utf-8")
        doc = chunk_markdown(text)
        # A front matter title heading a breadcrumb on its own (text before the first heading) is no heading.
        ours = {c.heading_path.rsplit(" > ", 1)[-1] for c in doc.chunks if c.heading_path not in ("", doc.title)}
        body = text
        if text.startswith("---\n"):
            end = text.find("\n---", 4)
            body = text[end + 4 :] if end > 0 else text
        # Breadcrumbs drop markup (comments, shortcodes, link targets): compare with the same text.
        theirs = {clean_heading(h) for h in _markdown_it_headings(md, body)}
        # Every section we cite must be a real heading; headings of empty sections produce no chunk.
        extra = {
            h for h in ours if h not in theirs and " ".join(h.split()) not in {" ".join(t.split()) for t in theirs}
        }
        if extra:
            disagreements.append(f"{path.name}: {sorted(extra)[:3]}")
    assert len(disagreements) <= 3, disagreements


@pytest.mark.parametrize("name", ["tar.md", "git-commit.md"])
def test_tldr_pages_chunk_under_their_title(shared_fixtures: Path, name: str) -> None:
    found = next((shared_fixtures / "corpus" / "tldr-pages").rglob(name))
    doc = chunk_markdown(found.read_text(encoding="utf-8"))

    assert doc.title
    assert doc.chunks and all(c.heading_path == doc.title for c in doc.chunks)


def test_breadcrumbs_drop_comments_shortcodes_links_and_emphasis() -> None:
    text = (
        "# Start {{% product-name %}} <!-- @/docs/includes/x.md -->\n\n"
        "## Use [the CLI](/influxdb/v2/cli/) **safely** {#cli}\n\nBody.\n\n"
        '## {{% show-in "enterprise" %}}\n\nStill under the CLI section.\n'
    )

    doc = chunk_markdown(text)

    assert doc.title == "Start"
    assert [c.heading_path for c in doc.chunks] == ["Start > Use the CLI safely"]
    assert "Still under the CLI section." in doc.chunks[0].content


def test_a_comment_only_block_is_not_indexed() -> None:
    doc = chunk_markdown("<!-- Generated from CHANGELOG.md; do not edit. -->\n\n# Title\n\nBody.\n")

    assert [c.content for c in doc.chunks] == ["Title\n\nBody."]


def test_a_long_paragraph_breaks_between_sentences() -> None:
    sentences = [f"Sentence {i} says the retention period is {i} days and nothing else." for i in range(60)]
    doc = chunk_markdown("# R\n\n" + " ".join(sentences) + "\n")

    assert len(doc.chunks) > 1
    for chunk in doc.chunks:
        body = chunk.body
        assert body.startswith("Sentence ") and body.endswith("nothing else.")
        assert len(chunk.content.encode()) <= TARGET_BYTES + 10


def test_a_hard_wrapped_paragraph_breaks_between_sentences_inside_lines() -> None:
    """Abstracts wrapped at a column end most sentences mid-line (CISI, MED): cuts fall there, not mid-sentence."""
    sentences = [f"Study {i} measured how often readers borrowed the {i} books on the shelf." for i in range(40)]
    # Every line ends inside a sentence, as in an abstract wrapped at a column.
    wrapped = " ".join(sentences).replace(" borrowed ", "\nborrowed ")
    doc = chunk_markdown(f"# Loans\n\nAuthor: Buckland, M.K.\n\n{wrapped}\n")

    assert len(doc.chunks) > 1
    bodies = [chunk.body for chunk in doc.chunks]
    for body in bodies:
        assert body.endswith(("on the shelf.", "Buckland, M.K."))
        assert body.startswith(("Author:", "Study "))
        assert len(body.encode()) <= TARGET_BYTES
    assert " ".join(" ".join(b.split()) for b in bodies) == " ".join(["Author: Buckland, M.K.", *sentences])


def test_an_oversized_list_breaks_between_items_not_at_sentences_inside_one() -> None:
    items = [
        f"- `level-{i}` - returns when {i} nodes answer. Otherwise the write waits in the queue." for i in range(30)
    ]
    doc = chunk_markdown("# Consistency\n\n" + "\n".join(items) + "\n")

    assert len(doc.chunks) > 1
    for chunk in doc.chunks:
        assert all(line.startswith("- `level-") for line in chunk.body.split("\n"))


def test_an_oversized_table_splits_between_rows_and_repeats_its_header() -> None:
    rows = "\n".join(f"| option-{i} | {'the default is ' + str(i) + ' units ' * 4} |" for i in range(60))
    doc = chunk_markdown(f"# T\n\n| Option | Default |\n| --- | --- |\n{rows}\n")

    assert len(doc.chunks) > 1
    for chunk in doc.chunks:
        lines = chunk.body.split("\n")
        assert lines[:2] == ["| Option | Default |", "| --- | --- |"]
        assert all(line.startswith("| option-") and line.endswith("|") for line in lines[2:])


def test_a_list_item_stays_with_its_code_and_a_lead_in_with_its_list() -> None:
    filler = "\n\n".join(f"Paragraph {i} of background prose about the setup." * 3 for i in range(6))
    step = "1. Install the package:\n\n   ```sh\n   apt-get install influxdb2\n   ```"
    doc = chunk_markdown(f"# Install\n\n{filler}\n\nDo the following:\n\n{step}\n")

    holding = [c for c in doc.chunks if "apt-get install influxdb2" in c.content]
    assert len(holding) == 1
    assert "Do the following:" in holding[0].content
    assert "1. Install the package:" in holding[0].content
