"""Markdown to cited chunks: sections under a heading breadcrumb, blocks packed to about 1200 bytes.

The block structure comes from a single pass over lines (`_blocks.scan`) that follows CommonMark's block
rules for the constructs chunking cares about: ATX and setext headings, fenced code (backticks and
tildes, closed by a run of the same character at least as long), indented code, thematic breaks and
YAML/TOML front matter.
markdown-it-py parses the same documents correctly but at about 5 MB/s on this machine class, which alone
would spend the whole cold-index budget; this scanner chunks influxdata-docs at about 90 MB/s (22 MB in
0.25 s, 2026-12-01) and the tests check it
against markdown-it-py's headings and fences on real documentation.

Known deviation from CommonMark: a fence opener is recognised at any indentation (fences inside list
items are common in documentation, and keeping them whole matters more than the rare 4-space indented
literal backtick line).

Chunks keep an answer whole (issue 16; influxdata tuning questions with an answer in the top 5 hits,
each change removed alone from the final state): a list item stays with its indented continuation and
a lead-in ending in `:` with what it introduces (0.591 -> 0.614, keyword +1); oversized prose splits at
sentence ends, list items and table rows, tables repeating their header (0.591 -> 0.614, paraphrase +1;
CISI 0.396 -> 0.399, MED 0.686 -> 0.689). Breadcrumbs without markup and dropping comment-only blocks
(1.2k chunks of `<!-- Generated from ... -->` alone) move no answer and cost 0.005 tuning nDCG@10 each;
they are kept because a breadcrumb is shown to users and agents, and noise there is read as content.
A front matter title heading the breadcrumbs of a page without a `#` heading (Hugo pages start at `##`,
so no section named its page): answers in the top 5 unchanged at 0.614 (identifier +1, keyword -1),
in the pack at budget 1500 0.455 -> 0.477, tuning nDCG@10 0.526 -> 0.525; CISI, CACM, MED unchanged
(their documents have a `#` title). Copies stay copies: the fingerprint leaves this title out. A page
with neither is headed by its folder and file name (`_page_name`).

Hard-wrapped prose (CISI, MED abstracts wrapped at a column) ends most sentences inside a line: cutting
only after a line that ends a sentence made a short piece, then a cut mid-sentence at a plain line and
often a small tail (CISI 0089: 807 / 1133 / 169 bytes, where size alone gave 1227 / 1035). In a paragraph
the last sentence end that fits, inside a line or at its end, is the cut; a list or table still breaks
between items and rows. nDCG@10 with term proximity: CISI 0.399 -> 0.405, CACM 0.541 -> 0.542, MED 0.690
-> 0.695; influx tuning unchanged (nDCG 0.583, top 5 0.636, pack 0.682). Also cutting inside list items:
CISI 0.405, MED 0.693, and an item's text cut from its label.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from ._blocks import CODE, PROSE, Item, front_matter, is_list_item, normalise, scan

__all__ = [
    "Chunk",
    "ChunkedDocument",
    "Rows",
    "chunk_markdown",
    "chunk_text",
    "clean_heading",
    "markdown_rows",
    "text_rows",
]

TARGET_BYTES = 1200
"""Blocks are packed into a chunk until adding the next would pass this size."""
SPLIT_BYTES = 1500
"""A prose block larger than this is split at line boundaries; code blocks are never split."""

_BREADCRUMB_SEP = " > "
_HEADING_MARKUP = frozenset("<{[*!")
_HEADING_NOISE = re.compile(r"<!--.*?-->|\{\{[<%].*?[%>]\}\}|\{(?:[#.]|[\w-]+=)[^{}]*\}\s*$|</?[A-Za-z][^>]*>")
"""HTML comments, Hugo shortcodes (`{{< product-name >}}`, `{{% show-in %}}`), heading attributes
(`{#anchor}`, `{id="intervals"}`), HTML tags."""
_HEADING_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HEADING_EMPHASIS = re.compile(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1")
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=\S)")
_INDENTS = (" ", "\t")
_ENDS_SENTENCE = (".", "!", "?", ":", ".)", ".*", "`.")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One searchable piece of a document."""

    heading_path: str
    """The heading breadcrumb, `Design > Backpressure`, or `""` before the first heading."""
    content: str
    """The breadcrumb and the body, as indexed and shown."""

    @property
    def body(self) -> str:
        """The content without its breadcrumb line."""
        return self.content[len(self.heading_path) + 2 :] if self.heading_path else self.content


@dataclass(frozen=True, slots=True)
class ChunkedDocument:
    """A document's title and its chunks in order (a chunk's ordinal is its index)."""

    title: str
    chunks: list[Chunk]
    date: str = ""
    """Front matter `date:` as `YYYY-MM-DD` (a timestamp is cut to its day), or `""` when absent or invalid."""
    root: str = ""
    """The front matter title that heads breadcrumbs of sections outside a `#` heading, or `""`."""


class Rows(NamedTuple):
    """A chunked document as the indexer stores it: `ChunkedDocument` with its chunks as two parallel lists."""

    title: str
    date: str
    root: str
    headings: list[str]
    """Each chunk's `heading_path`."""
    contents: list[str]
    """Each chunk's `content`."""


def chunk_markdown(text: str, name: str = "") -> ChunkedDocument:
    r"""Split Markdown into chunks under heading breadcrumbs.

    Args:
        text: The document; `\\r\\n` and a leading byte-order mark are normalised away.
        name: The page's name when it has no title (`_page_name.page_name`): it heads the breadcrumbs
            in the title's place.

    Returns:
        The title (front matter `title:`, else the first heading, else `""`), the front matter `date:`
        and the chunks.
    """
    return _document(markdown_rows(text, name))


def markdown_rows(text: str, name: str = "") -> Rows:
    """`chunk_markdown` without a `Chunk` object per chunk (the indexer only stores their two strings)."""
    lines = normalise(text).split("\n")
    start, title, day = front_matter(lines)
    if title and not _HEADING_MARKUP.isdisjoint(title):
        title = clean_heading(title)
    # A page titled in its front matter usually starts at `##`: the title heads its breadcrumbs, so every
    # section names the page it is on. A `#` heading is the page's own title and takes its place.
    root = title or name
    rows: tuple[list[str], list[str]] = ([], [])
    levels: list[int] = []
    crumbs: list[str] = []
    breadcrumb = root
    blocks: list[Item] = []
    for item in scan(lines, start):
        heading, level = item
        if level <= 0:  # a block, not a heading
            if heading[:1] != "<" or not _only_comment(heading):
                blocks.append(item)
            continue
        if "<" in heading or "{" in heading or "[" in heading or "*" in heading or "!" in heading:
            # `_HEADING_MARKUP`, spelled out: five memchr calls beat iterating a set over the heading.
            heading = clean_heading(heading)
            if not heading:
                continue  # only markup (`## {{% show-in "enterprise" %}}`): the section stays under its parent
        if blocks:
            _pack(breadcrumb, blocks, rows)
            blocks = []
        if not title:
            title = heading
        while levels and levels[-1] >= level:
            levels.pop()
            crumbs.pop()
        levels.append(level)
        crumbs.append(heading)
        breadcrumb = _BREADCRUMB_SEP.join([root, *crumbs] if root and levels[0] > 1 else crumbs)
    if blocks:
        _pack(breadcrumb, blocks, rows)
    return Rows(title, day, root, *rows)


def _document(rows: Rows) -> ChunkedDocument:
    chunks = [Chunk(heading, content) for heading, content in zip(rows.headings, rows.contents, strict=True)]
    return ChunkedDocument(title=rows.title, chunks=chunks, date=rows.date, root=rows.root)


def clean_heading(text: str) -> str:
    """A heading as a reader sees it: no comments, shortcodes, anchors or tags; links and emphasis as their text."""
    text = _HEADING_NOISE.sub("", text)
    if "](" in text:
        text = _HEADING_LINK.sub(r"\1", text)
    if "*" in text:
        text = _HEADING_EMPHASIS.sub(r"\2", text)
    return " ".join(text.split())


def _only_comment(text: str) -> bool:
    """Whether a block is one HTML comment and nothing else (invisible on the page: not indexed)."""
    if not text.startswith("<!--"):
        return False
    end = text.find("-->")
    return end != -1 and not text[end + 3 :].strip()


def chunk_text(text: str) -> ChunkedDocument:
    """Split plain text into paragraph-packed chunks with no breadcrumb.

    Args:
        text: A `.txt` or `.text` document.

    Returns:
        An untitled document whose chunks pack blank-line separated paragraphs.
    """
    return _document(text_rows(text))


def text_rows(text: str) -> Rows:
    """`chunk_text` without a `Chunk` object per chunk."""
    blocks: list[Item] = []
    for para in normalise(text).split("\n\n"):
        stripped = para.strip("\n")
        if stripped.strip():
            blocks.append((stripped, PROSE))
    rows: tuple[list[str], list[str]] = ([], [])
    if blocks:
        _pack("", blocks, rows)
    return Rows("", "", "", *rows)


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode())


_SMALL = SPLIT_BYTES // 4
"""A block of at most this many characters is never oversized (4 bytes a character at most)."""


def _pack(breadcrumb: str, blocks: list[Item], rows: tuple[list[str], list[str]]) -> None:
    """Pack a section's blocks into chunks of about `TARGET_BYTES`, prefixing the breadcrumb; append to `rows`.

    Blocks that answer together form a unit: a block is glued to the one before it as a list item's
    indented continuation (code, paragraphs), or as what a lead-in ending with `:` introduces. A unit
    that fits in a chunk of its own is never split across two: the chunk is closed before it instead. A larger unit is packed block by block, and
    an oversized prose block is split at sentence ends, list items and table rows (`_split`).
    """
    head = f"{breadcrumb}\n\n" if breadcrumb else ""
    headings, contents = rows
    buffer: list[str] = []
    size = 0
    count = len(blocks)
    for i, (text, kind) in enumerate(blocks):
        if (
            buffer  # so `i > 0`
            and i + 1 < count
            and (text[-1:] == ":" or blocks[i + 1][0][:1] in _INDENTS)  # the next block is glued to this one
            and not (text[:1] in _INDENTS or blocks[i - 1][0].endswith(":"))  # this one starts a unit
        ):
            end = i + 1
            unit_size = _size(text) + 2
            glued = text
            while end < count:
                following = blocks[end][0]
                if not (following[:1] in _INDENTS or glued.endswith(":")):
                    break
                unit_size += _size(following) + 2
                glued = following
                end += 1
            if size + unit_size > TARGET_BYTES and unit_size <= TARGET_BYTES:
                headings.append(breadcrumb)
                contents.append(head + "\n\n".join(buffer))
                buffer, size = [], 0
        piece_size = len(text) if text.isascii() else len(text.encode())
        if kind == CODE or piece_size <= SPLIT_BYTES:
            # Most blocks are not oversized: no splitting generator for them (`_split` keeps them whole).
            if buffer and size + piece_size + 2 > TARGET_BYTES:
                headings.append(breadcrumb)
                contents.append(head + "\n\n".join(buffer))
                buffer, size = [], 0
            buffer.append(text)
            size += piece_size + 2
            continue
        for piece in _split(text):
            piece_size = len(piece) if piece.isascii() else len(piece.encode())
            if buffer and size + piece_size + 2 > TARGET_BYTES:
                headings.append(breadcrumb)
                contents.append(head + "\n\n".join(buffer))
                buffer, size = [], 0
            buffer.append(piece)
            size += piece_size + 2
    if buffer:
        headings.append(breadcrumb)
        contents.append(head + "\n\n".join(buffer))


def _cut_after(line: str, following: str) -> bool:
    """Whether a piece may end after `line`: it ends a sentence, or the next line opens a list item or row."""
    if line.rstrip().endswith(_ENDS_SENTENCE):
        return True
    nxt = following.lstrip()
    return nxt[:1] == "|" or is_list_item(nxt)


def _split(text: str) -> Iterator[str]:
    """Split an oversized prose block between sentences, list items or table rows.

    A piece ends at the last such line before the target size (at a plain line only when there is none),
    and a single huge line is split between sentences. In a paragraph (no list item, no table row) a
    sentence end inside a line is as good as one at a line end. A table's pieces each repeat its header
    rows, so every row keeps its column names.
    """
    if len(text) <= _SMALL or len(text.encode()) <= SPLIT_BYTES:
        yield text
        return
    lines = text.split("\n")
    header: list[str] = []
    if len(lines) > 2 and lines[0].lstrip()[:1] == "|" and set(lines[1].strip()) <= set("|:- "):
        header = lines[:2]
        lines = lines[2:]
    header_size = sum(len(h.encode()) + 1 for h in header)
    piece: list[str] = []
    size = header_size
    cut = 0  # how many lines of `piece` end at a safe place (0: none yet)
    # Inside a list item or a table row a sentence end is no place to cut: the item or row is the unit.
    prose = not any(line.lstrip()[:1] == "|" or is_list_item(line.lstrip()) for line in lines)
    for line in lines:
        line_size = len(line.encode()) + 1
        if piece and (size + line_size > TARGET_BYTES or line_size > SPLIT_BYTES):
            # Hard-wrapped prose ends most sentences inside a line: the last sentence end that fits, in
            # this line or in a line after the last safe one, beats an earlier safe line (a short piece,
            # then a cut mid-sentence) and a plain line (a cut mid-sentence).
            mid = _sentence_end(line, TARGET_BYTES - size - 1) if prose else None
            if mid is not None:
                yield "\n".join([*piece, line[: mid[0]]])
                piece, size, cut = [], header_size, 0
                line = line[mid[1] :]
                line_size = len(line.encode()) + 1
            else:
                keep = cut if cut else len(piece)
                for j in range(len(piece) - 1, cut - 1, -1):
                    mid = _sentence_end(piece[j], None) if prose else None
                    if mid is not None:
                        piece[j : j + 1] = [piece[j][: mid[0]], piece[j][mid[1] :]]
                        keep = j + 1
                        break
                yield "\n".join(header + piece[:keep])
                piece = piece[keep:]
                size = header_size + sum(len(p.encode()) + 1 for p in piece)
                cut = 0
        if line_size > SPLIT_BYTES:
            if piece:
                yield "\n".join(header + piece)
                piece, size, cut = [], header_size, 0
            yield from _split_sentences(line)
            continue
        if piece and _cut_after(piece[-1], line):
            cut = len(piece)
        piece.append(line)
        size += line_size
    if piece:
        yield "\n".join(header + piece)


def _sentence_end(line: str, room: int | None) -> tuple[int, int] | None:
    """The last sentence end inside `line` (where its text ends, where the next sentence starts), or None.

    With `room`, only an end whose text fits in `room` bytes counts.
    """
    found = None
    for match in _SENTENCE_END.finditer(line):
        if room is not None and len(line[: match.start()].encode()) > room:
            break
        found = (match.start(), match.end())
    return found


def _split_sentences(line: str) -> Iterator[str]:
    """Pack a long line's sentences into pieces of at most `TARGET_BYTES`.

    A longer sentence is cut at characters (`_split_chars`).
    """
    piece = ""
    for sentence in _SENTENCE_END.split(line):
        joined = f"{piece} {sentence}" if piece else sentence
        if len(joined.encode()) <= TARGET_BYTES:
            piece = joined
            continue
        if piece:
            yield piece
        if len(sentence.encode()) > TARGET_BYTES:
            yield from _split_chars(sentence)
            piece = ""
        else:
            piece = sentence
    if piece:
        yield piece


def _split_chars(line: str) -> Iterator[str]:
    """Slice a long line into pieces of at most `TARGET_BYTES` bytes, never inside a character."""
    start = 0
    while start < len(line):
        end = min(len(line), start + TARGET_BYTES)
        while len(line[start:end].encode()) > TARGET_BYTES:
            end -= max(1, (len(line[start:end].encode()) - TARGET_BYTES) // 4)
        yield line[start:end]
        start = end
