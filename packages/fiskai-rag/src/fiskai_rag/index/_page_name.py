"""The name of a page that has no title of its own: the words of its folder and file name.

A Markdown page without a front matter `title:` or a `#` heading (a fragment that a site includes into
other pages, a page whose title lives in a site's navigation file) would otherwise head its sections with
nothing: `Data types and format > UInteger` says neither which page nor what it is about. Its author
still named it, by its file and the folder it sits in: `influxdb3-cli/config-options.md`. Site
generators title such a page from its file name and name a section by its folder (MkDocs, Docusaurus),
so the chunker heads the page's breadcrumbs with both, the way a site's navigation shows the page:
`influxdb3 cli > config options > Server configuration options > plugin-dir`. An index page
(`index.md`, `_index.md`, `README.md`) is named by its folder alone, as the generators name a section.

Measured (issue 16, lexical tier, chunker 3 -> 4; nDCG@10 / MRR@10; influxdata tuning: answer in the top
5 hits of 44 questions, keyword / identifier / paraphrase / conversational; pack @1500):

| variant | CISI | CACM | MED | tuning | top 5 | pack |
| --- | --- | --- | --- | --- | --- | ---: |
| no page name (chunker 3) | 0.405 / 0.666 | 0.542 / 0.784 | 0.695 / 0.918 | 0.583 / 0.559 | 28 (8/10/5/5) | 30 |
| file name only (`config options`) | unchanged | unchanged | unchanged | 0.587 / 0.561 | 30 (8/11/5/6) | 32 |
| **folder and file name (kept)** | unchanged | unchanged | unchanged | 0.593 / 0.568 | 31 (9/11/5/6) | 32 |
| every folder of the path and the file | - | - | - | 0.595 | 29 (8/11/5/5) | 29 |

(The last row was measured with heading-weighted query words, see the fiskai-rag README, whose own row
was 0.611 and 30.) CISI, CACM and MED do not move: their pages have `#` titles. Two answers the file
name brings into the top 5 are a line protocol type (`UInteger`, a section of `v3-line-protocol.md` that
starts at `##`): its question names "line protocol", which the page's text never repeats near it.
"""

from __future__ import annotations

__all__ = ["page_name"]

_INDEX_STEMS = frozenset({"index", "_index", "readme"})
_SEPARATORS = str.maketrans("-_.", "   ")


def page_name(key: str) -> str:
    """The words of a document's folder and file name, or `""` when it has none.

    `content/influxdb3-cli/config-options.md` -> `influxdb3 cli > config options`; an index page is
    named by its folder alone: `telegraf/v1/_index.md` -> `v1`.
    """
    # String operations rather than a PurePath: this runs for every file of a cold index (5k files of
    # influxdata-docs: 9 ms, 28 ms with PurePath and a regex split; the cold index takes about 1.2 s).
    folder, _, file = key.replace("\\", "/").rpartition("/")
    stem = file.rpartition(".")[0] or file
    parent = folder.rpartition("/")[2]
    names = [parent, stem] if parent else [stem]
    if stem.lower() in _INDEX_STEMS:
        names = names[:1]
    words = (" ".join(name.translate(_SEPARATORS).split()) for name in names)
    return " > ".join(name for name in words if name)
