"""The name of a page that has no title of its own: the words of its file name.

A Markdown page without a front matter `title:` or a `#` heading (a fragment that a site includes into
other pages, a page whose title lives in a site's navigation file) would otherwise head its sections with
nothing: `Data types and format > UInteger` says neither which page nor what it is about. Its author
still named it, by its file: `v3-line-protocol.md`, `config-options.md`. Site generators title such a
page from that name (MkDocs and Docusaurus both fall back to the file name), so the chunker uses it as
the page's title in its breadcrumbs: `v3 line protocol > Data types and format > UInteger`. An index page
(`index.md`, `_index.md`, `README.md`) is named by its folder, as the generators name a section.

Measured (issue 16, lexical tier, chunker 3 -> 4; influxdata tuning: answer in the top 5 hits, out of 44,
per kind keyword / identifier / paraphrase / conversational): 28 (8/10/5/5) -> 30 (8/11/5/6), nDCG@10
0.583 -> 0.587, pack @1500 30 -> 32; CISI, CACM, MED unchanged (their pages have `#` titles). Tried: the
parent folder's name before the file's (`influxdb3 cli config options`), 31 (9/11/5/6) alone but equal
with heading-weighted terms (`_term_weight`) and longer breadcrumbs; every folder of the path, worse
(29 with heading weights, nDCG 0.595).
"""

from __future__ import annotations

import re
from pathlib import PurePath

__all__ = ["page_name"]

_INDEX_STEMS = frozenset({"index", "_index", "readme"})
_SEPARATORS = re.compile(r"[-_.\s]+")


def page_name(key: str) -> str:
    """The words of a document's file name (its folder's, for an index page), or `""` when it has none.

    `content/shared/v3-line-protocol.md` -> `v3 line protocol`; `telegraf/v1/_index.md` -> `v1`.
    """
    path = PurePath(key)
    stem = path.stem
    if stem.lower() in _INDEX_STEMS and path.parent.name:
        stem = path.parent.name
    return " ".join(word for word in _SEPARATORS.split(stem) if word)
