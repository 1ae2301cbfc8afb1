"""Named sections: a verbose question that names one of the corpus's documentation trees prefers it.

A documentation site keeps one top-level folder per product (`content/chronograf/`, `content/telegraf/`,
`content/kapacitor/`), and a question often names the product it is about among many generic words:
"which port does the Chronograf web interface use by default". Those generic words (`port`, `web`,
`interface`, `default`) match another product's pages just as well (Telegraf Controller's "ui-port"),
and outweigh the one word that says which product is meant. Such a question raises the score of the
chunks in that product's tree by `SECTION_BOOST` of itself, like a named version (`_version`).

Everything is read from the store, no list of names:

- The trees are the folders where each root's documents first branch into several (`influxdata-docs/
  content/` holds `chronograf`, `telegraf`, `shared`, ...: the single-folder chain `content` is skipped).
  A flat collection (CISI, CACM, MED: `corpus/0001.md`) has no trees and is never touched.
- A question word names a tree only when the word is the tree's name AND most chunks that use the word
  (`MIN_SHARE`) lie in a folder of that name. A product name is used mostly in its own pages; a common
  word that happens to name a folder is used everywhere (on influxdata-docs: `kapacitor` 0.90 of its
  chunks in its tree, `chronograf` 0.77, `flux` 0.76, `telegraf` 0.71, but `influxdb` 0.28, `shared`
  0.32, `platform` 0.16, `resources` 0.04: those four never boost).
- A chunk is in a tree when any folder of its document's path has the tree's name, so the fragments a
  site includes into a product's pages from a shared folder (`content/shared/telegraf/...`) count
  as that product's; `shared/influxdb-v2/` is not in `influxdb` (folder names are whole, not split).
- Only verbose questions (`VERBOSE_TERMS` distinct content words, the same line `_burstiness` draws):
  in a short question every word was chosen and BM25 already weighs the product name against the
  others. With every question, `telegraf test config` lost its answer (an influxdb3 page that gives
  the command) to Telegraf pages.

Measured (issue 16, lexical tier; nDCG@10 CISI / CACM / MED, influxdata tuning nDCG and answers in the
top 5 of 44 (keyword / identifier / paraphrase / conversational), pack at 1500 of 44):

| variant | CISI | CACM | MED | tuning | top 5 | pack |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
| before | 0.415 | 0.551 | 0.731 | 0.589 | 30 (9/11/5/5) | 32 |
| every question, boost 0.1, folder split at `/_-.` (as `_version`) | same | same | same | 0.586 | 30 (8/11/6/5) | 31 |
| every question, top-level folder only, boost 0.05 / 0.1 / 0.2 | same | same | same | 0.587 / 0.591 / 0.588 | 30 / 30 (8/11/6/5) / 30 | 32 / 31 / 31 |
| verbose, split folder names (`influxdb` qualifies: 0.59 via `shared/influxdb-v1`) | same | same | same | 0.593 | 31 (9/11/6/5) | 32 |
| verbose, whole folder names, share 0.25 (`influxdb` qualifies) | same | same | same | 0.593 | 31 | 32 |
| verbose, top-level folder only, boost 0.05 / 0.1 / 0.2 | same | same | same | 0.590 / 0.595 / 0.595 | 30 / 31 / 31 | 32 |
| **verbose, whole folder names, share 0.5, boost 0.1 (kept)** | same | same | same | 0.595 | 31 (9/11/6/5) | 32 |
| the same, boost 0.05 / 0.2; share 0.6 / 0.75 | same | same | same | 0.590 / 0.595; 0.595 / 0.595 | 30 / 31; 31 / 31 | 32 |

With the kept form the Chronograf question's answer goes from rank 12 to 2 and "how often does
telegraf collect metrics if I don't set anything?" from nDCG 0.301 to 0.315; no question moves down.
A boost below a tenth does not lift the Chronograf answer into the top 5; above it nothing more moves.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._burstiness import VERBOSE_TERMS
from ._db import Conn, columns
from ._query import query_terms

__all__ = ["MIN_SHARE", "SECTION_BOOST", "prefer_sections", "top_level_trees"]

SECTION_BOOST = 0.1
"""The named-version step's boost (`_version.VERSION_BOOST`): a tenth of a chunk's score reorders chunks
whose words match about equally, not a chunk that matches far better in another tree. 0.05 lifted no
answer into the top 5, 0.2 the same answers as 0.1."""

MIN_SHARE = 0.5
"""A word names its tree when at least this share of the chunks using it lie in the tree: a majority,
not a fitted figure (0.6 and 0.75 measured the same; 0.25 let `influxdb` qualify and cost a question)."""


@dataclass(slots=True)
class _Seen:
    """What one connection has read about the trees, valid while the index is unchanged."""

    version: tuple[int, int]
    """(data_version, total_changes): another connection's commit changes the first, this one's the second."""
    trees: frozenset[str] | None = None
    names_its_tree: dict[str, bool] = field(default_factory=dict[str, bool])


_SEEN: weakref.WeakKeyDictionary[object, _Seen] = weakref.WeakKeyDictionary()


def top_level_trees(paths: Sequence[str]) -> frozenset[str]:
    """The lowercase folder names where each root's documents (`root/a/b/x.md`) first branch into several.

    A chain of single folders below the root (`content/`) is skipped; a root whose documents all sit in
    one folder has no trees.
    """
    folders_by_root: dict[str, set[tuple[str, ...]]] = {}
    for path in paths:
        root, _, rest = path.partition("/")
        folders_by_root.setdefault(root, set()).add(tuple(rest.split("/")[:-1]))
    trees: set[str] = set()
    for folders in folders_by_root.values():
        depth = 0
        while True:
            names = {folder[depth] for folder in folders if len(folder) > depth}
            if len(names) != 1:
                break
            depth += 1
        if len(names) > 1:
            trees.update(name.lower() for name in names)
    return frozenset(trees)


def _seen(db: Conn) -> _Seen:
    version = (
        int(db.execute("PRAGMA data_version").fetchall()[0][0]),
        int(db.execute("SELECT total_changes()").fetchall()[0][0]),
    )
    seen = _SEEN.get(db)
    if seen is None or seen.version != version:
        seen = _SEEN[db] = _Seen(version)
    return seen


def _cite(db: Conn) -> str:
    return "d.cite" if "cite" in columns(db, "documents") else "d.path"  # an unmigrated schema-1 store


def _in_folder(path: str, name: str) -> bool:
    return name in path.lower().split("/")[:-1]


def _names_its_tree(db: Conn, seen: _Seen, word: str) -> bool:
    known = seen.names_its_tree.get(word)
    if known is None:
        # `word` is letters and digits only (`query_terms`), so it is safe in a GLOB pattern.
        ((using, inside),) = db.execute(
            f"SELECT count(*), total('/' || lower({_cite(db)}) GLOB ?) FROM chunks_fts f "
            "JOIN chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id WHERE chunks_fts MATCH ?",
            (f"*/{word}/*", f'"{word}"'),
        ).fetchall()
        known = seen.names_its_tree[word] = int(using) > 0 and float(inside) >= MIN_SHARE * int(using)
    return known


def prefer_sections(db: Conn, text: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """`ranked` (higher scores better), with the chunks in a documentation tree `text` names boosted.

    Returns the ranking re-sorted (ties to the smaller id) when `text` is a verbose question naming a
    tree; otherwise `ranked` as it was.
    """
    words = set(query_terms(text))
    if not ranked or len(words) < VERBOSE_TERMS:
        return list(ranked)
    seen = _seen(db)
    if seen.trees is None:
        seen.trees = top_level_trees([str(path) for (path,) in db.execute(f"SELECT {_cite(db)} FROM documents d")])
    named = [word for word in words & seen.trees if _names_its_tree(db, seen, word)]
    if not named:
        return list(ranked)
    ids = [chunk_id for chunk_id, _ in ranked]
    marks = ",".join("?" * len(ids))
    path_of = {
        int(chunk_id): str(path)
        for chunk_id, path in db.execute(
            f"SELECT c.id, {_cite(db)} FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN ({marks})",
            ids,
        )
    }
    boosted = [
        (
            chunk_id,
            score + SECTION_BOOST * abs(score)
            if any(_in_folder(path_of.get(chunk_id, ""), word) for word in named)
            else score,
        )
        for chunk_id, score in ranked
    ]
    return sorted(boosted, key=lambda item: (-item[1], item[0]))
