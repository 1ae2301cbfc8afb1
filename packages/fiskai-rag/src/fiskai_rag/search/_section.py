"""Named sections: a verbose question that names one of the corpus's documentation trees prefers it.

A documentation site keeps one top-level folder per product (`content/chronograf/`, `content/telegraf/`,
`content/kapacitor/`), and a question often names the product it is about among many generic words:
"which port does the Chronograf web interface use by default". Those generic words (`port`, `web`,
`interface`, `default`) match another product's pages just as well (Telegraf Controller's "ui-port"),
and outweigh the one word that says which product is meant. Such a question raises the score of the
chunks in that product's tree by `SECTION_BOOST` of itself, like a named version (`_version`).

Everything is read from the store, no list of names:

- The trees are the folders at the level where a root's documents first branch (`influxdata-docs/
  content/` holds `chronograf`, `telegraf`, `shared`, ...). Citation paths are indexed and sorted, so
  that level is the folder prefix a root's first and last path share: two index seeks, not a walk of
  every path. A flat collection (CISI, CACM, MED: `corpus/0001.md`) has no trees and is never touched.
  Folder names are matched as the question's lowercase words (a folder `Chronograf/` is not named).
- A question word names a tree only when it is the tree's name AND its uses are concentrated there:
  of the chunks using it, those outside the tree are at most half the share chance puts outside
  (`MIN_SHARE`, `names_its_tree`; for a small tree, a majority of its uses). A product name is used
  mostly in its own pages; a common word that happens to name a folder is used everywhere. On
  influxdata-docs (share of the word's chunks in the tree / the tree's share of all chunks):
  `kapacitor` 0.90 / 0.11, `chronograf` 0.77 / 0.02, `telegraf` 0.70 / 0.12 name their trees;
  `flux` 0.54 / 0.16, `influxdb3` 0.47 / 0.14, `shared` 0.32 / 0.24, `influxdb` 0.27 / 0.13,
  `platform` 0.16 / 0.01, `resources` 0.04 / 0.00 do not. On tldr-pages (`pages/common/`,
  `pages/linux/`, ...; no judged questions, read for the rule only) `linux`, `freebsd`, `netbsd` and
  `sunos` do; `common` (0.61 / 0.63), `windows` (0.45 / 0.04) and `osx` do not. The counts are read
  from the FTS5 posting list over the tree's chunk-id ranges (chunks of a document, and documents
  indexed together, have consecutive ids), about 1 ms for a word in 14k chunks; a connection keeps
  the answer until the index changes.
- A boosted chunk is one with a folder of the tree's name anywhere in its path, so the fragments a site
  includes into a product's pages from a shared folder (`content/shared/telegraf/...`) count as that
  product's; `shared/influxdb-v2/` is not in `influxdb` (folder names are whole, not split).
- Only verbose questions (`VERBOSE_TERMS` distinct content words, the same line `_burstiness` draws):
  in a short question every word was chosen and BM25 already weighs the product name against the
  others. With every question, `telegraf test config` lost its answer (an influxdb3 page that gives
  the command) to Telegraf pages.

Measured (issue 16, lexical tier; nDCG@10 CISI / CACM / MED, influxdata tuning nDCG and answers in the
top 5 of 44 (keyword / identifier / paraphrase / conversational), pack at 1500 of 44). "Split": folder
names split at `/_-.` as `_version` does (`shared/influxdb-v1` is then in `influxdb`); "any folder": a
folder of that name anywhere in the path, for the share as for the boost; "top-level": the tree itself.

| variant | CISI | CACM | MED | tuning | top 5 | pack |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
| before | 0.415 | 0.551 | 0.731 | 0.589 | 30 (9/11/5/5) | 32 |
| every question, split, share 0.5, boost 0.1 | same | same | same | 0.586 | 30 (8/11/6/5) | 31 |
| every question, top-level, boost 0.05 / 0.1 / 0.2 | same | same | same | 0.587 / 0.591 / 0.588 | 30 / 30 (8/11/6/5) / 30 | 32 / 31 / 31 |
| verbose, split (`influxdb` qualifies at 0.59) | same | same | same | 0.593 | 31 (9/11/6/5) | 32 |
| verbose, any folder, share 0.25 (`influxdb` qualifies) | same | same | same | 0.593 | 31 | 32 |
| verbose, top-level, boost 0.05 / 0.1 / 0.2 | same | same | same | 0.590 / 0.595 / 0.595 | 30 / 31 / 31 | 32 |
| verbose, any folder, share 0.5, boost 0.1 | same | same | same | 0.595 | 31 (9/11/6/5) | 32 |
| verbose, share in the top-level tree, boost any folder, majority (share 0.5), boost 0.1 | same | same | same | 0.595 | 31 (9/11/6/5) | 32 |
| **the same, majority measured against chance (`names_its_tree`; kept)** | same | same | same | 0.595 | 31 (9/11/6/5) | 32 |
| the majority form with boost 0.05 / 0.2; with share 0.6 / 0.75 | same | same | same | 0.590 / 0.595; 0.595 / 0.595 | 30 / 31; 31 / 31 | 32 |

With the kept form the Chronograf question's answer goes from rank 12 to 2 and "how often does
telegraf collect metrics if I don't set anything?" from nDCG 0.301 to 0.315; no question moves down.
A boost below a tenth does not lift the Chronograf answer into the top 5; above it nothing more moves.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Sequence

from fiskai_rag.store._db import Conn, change_stamp, columns

from ._burstiness import VERBOSE_TERMS
from ._path_boost import boost_paths, chunk_paths
from ._query import query_terms

__all__ = ["MIN_SHARE", "SECTION_BOOST", "names_its_tree", "prefer_sections", "tree_prefix"]

SECTION_BOOST = 0.1
"""The named-version step's boost (`_version.VERSION_BOOST`): a tenth of a chunk's score reorders chunks
whose words match about equally, not a chunk that matches far better in another tree. 0.05 lifted no
answer into the top 5, 0.2 the same answers as 0.1."""

MIN_SHARE = 0.5
"""How much of the word's use outside its tree that chance predicts must be missing: a word names its
tree when its chunks outside the tree are at most half the share chance puts there (the tree's share of
all chunks), `outside <= (1 - MIN_SHARE) * (1 - tree share)`. For a small tree this is a plain majority
of the word's chunks in the tree; for a tree holding most of a corpus it asks for more (tldr-pages'
`common/` holds 0.63 of the chunks and 0.61 of the uses of `common`: a majority, but no concentration).
On influxdata-docs a majority and this rule pick the same names but `flux` (0.54 of its uses in a tree of
0.16: a majority, short of 0.58), and the tuning figures are the same; 0.6 and 0.75 as a plain majority
measured the same, 0.25 let `influxdb` qualify and cost a question."""


def names_its_tree(inside: int, using: int, tree_chunks: int, all_chunks: int) -> bool:
    """Whether a word used in `using` chunks, `inside` of them in a tree of `tree_chunks` of `all_chunks`, names it."""
    if using <= 0 or all_chunks <= 0:
        return False
    outside_by_chance = 1.0 - min(1.0, tree_chunks / all_chunks)
    return (using - inside) / using <= (1.0 - MIN_SHARE) * outside_by_chance


_CACHED_WORDS = 4096
_MAX_RANGES = 64
"""Chunk-id ranges of a tree counted one seek each; past this many (pages re-indexed one by one get new
ids at the end), one join over the word's whole posting list is cheaper (about 5 ms for 14k chunks)."""


class _Seen:
    """What one connection has read about the trees, valid while the index is unchanged.

    A plain class, not a dataclass: a dataclass costs about 0.45 ms of every CLI start-up to build.
    """

    __slots__ = ("all_chunks", "names_its_tree", "prefixes", "version")

    def __init__(self, version: tuple[int, int]) -> None:
        self.version = version
        """(data_version, total_changes): another connection's commit changes the first, this one's the second."""
        self.prefixes: list[str] | None = None
        self.all_chunks: int | None = None
        self.names_its_tree: dict[str, bool] = {}


_SEEN: weakref.WeakKeyDictionary[object, _Seen] = weakref.WeakKeyDictionary()


def tree_prefix(first: str, last: str) -> str | None:
    """The folder where a root's documents first branch, from its first and last citation path in order.

    Sorted paths share the prefix their first and last share, so two index seeks find it
    (`site/content/alpha/a.md` .. `site/content/beta/b.md` -> `site/content/`). A root whose documents
    all sit in one folder (`cisi/corpus/0001.md` .. `cisi/corpus/1460.md`) has no trees: None.
    """
    common = os.path.commonprefix([first, last])
    prefix = common[: common.rfind("/") + 1]
    if "/" in first[len(prefix) :] or "/" in last[len(prefix) :]:
        return prefix
    return None


def _seen(db: Conn) -> _Seen:
    version = change_stamp(db)
    seen = _SEEN.get(db)
    if seen is None or seen.version != version:
        seen = _SEEN[db] = _Seen(version)
    return seen


def _prefixes(db: Conn) -> list[str]:
    """Each root's branching folder; two seeks on the `cite` index per root."""
    prefixes: list[str] = []
    for (label,) in db.execute("SELECT label FROM roots").fetchall():
        bounds = (f"{label}/", f"{label}0")  # `0` sorts right after `/`: every path under the root
        first = db.execute("SELECT cite FROM documents WHERE cite >= ? AND cite < ? ORDER BY cite LIMIT 1", bounds)
        last = db.execute("SELECT cite FROM documents WHERE cite >= ? AND cite < ? ORDER BY cite DESC LIMIT 1", bounds)
        ends = [str(row[0]) for row in (*first.fetchall(), *last.fetchall())]
        prefix = tree_prefix(ends[0], ends[1]) if len(ends) == 2 else None
        if prefix is not None:
            prefixes.append(prefix)
    return prefixes


def _chunk_ranges(db: Conn, start: str) -> tuple[list[tuple[int, int]], int]:
    """The chunk ids of the documents under folder `start` (`.../chronograf/`) as merged ranges; their count."""
    rows = db.execute(
        # Subqueries keep the `cite` index range as the only loop: a join scans every document or chunk.
        "SELECT (SELECT min(id) FROM chunks WHERE document_id = d.id), "
        "(SELECT max(id) FROM chunks WHERE document_id = d.id) AS high, d.chunk_count "
        "FROM documents d WHERE d.cite >= ? AND d.cite < ? AND high IS NOT NULL ORDER BY 1",
        (start, start[:-1] + "0"),
    ).fetchall()
    ranges: list[tuple[int, int]] = []
    for low, high, _ in rows:
        if ranges and int(low) == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], int(high))
        else:
            ranges.append((int(low), int(high)))
    return ranges, sum(int(count) for _, _, count in rows)


def _word_names_a_tree(db: Conn, seen: _Seen, prefixes: Sequence[str], word: str) -> bool:
    """Whether `word` is the name of a tree and its uses are concentrated there (`names_its_tree`)."""
    known = seen.names_its_tree.get(word)
    if known is None:
        found = [_chunk_ranges(db, f"{prefix}{word}/") for prefix in prefixes]
        ranges = [r for tree_ranges, _ in found for r in tree_ranges]
        known = False
        if ranges:
            # A chunk's id is its FTS5 rowid; a rowid range is a seek within the word's posting list.
            phrase = f'"{word}"'
            ((using,),) = db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)).fetchall()
            if len(ranges) <= _MAX_RANGES:
                inside = sum(
                    int(
                        db.execute(
                            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ?",
                            (phrase, low, high),
                        ).fetchall()[0][0]
                    )
                    for low, high in ranges
                )
            else:  # a tree scattered by many re-indexed pages: one pass over the posting list instead
                ((inside,),) = db.execute(
                    "SELECT count(*) FROM chunks_fts f JOIN chunks c ON c.id = f.rowid "
                    "JOIN documents d ON d.id = c.document_id WHERE chunks_fts MATCH ? "
                    "AND (" + " OR ".join("(d.cite >= ? AND d.cite < ?)" for _ in prefixes) + ")",
                    (phrase, *(bound for prefix in prefixes for bound in (f"{prefix}{word}/", f"{prefix}{word}0"))),
                ).fetchall()
            if seen.all_chunks is None:
                seen.all_chunks = int(db.execute("SELECT total(chunk_count) FROM documents").fetchall()[0][0])
            known = names_its_tree(int(inside), int(using), sum(count for _, count in found), seen.all_chunks)
        if len(seen.names_its_tree) >= _CACHED_WORDS:  # a long-lived server asks about ever new words
            seen.names_its_tree.clear()
        seen.names_its_tree[word] = known
    return known


def _in_folder(path: str, name: str) -> bool:
    return name in path.lower().split("/")[:-1]


def prefer_sections(db: Conn, text: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """`ranked` (higher scores better), with the chunks in a documentation tree `text` names boosted.

    Returns the ranking re-sorted (ties to the smaller id) when `text` is a verbose question naming a
    tree; otherwise `ranked` as it was. A store of schema 1 (no citation paths) is left alone.
    """
    words = set(query_terms(text))
    if not ranked or len(words) < VERBOSE_TERMS:
        return list(ranked)
    seen = _seen(db)
    if seen.prefixes is None:
        seen.prefixes = _prefixes(db) if "cite" in columns(db, "documents") else []
    if not seen.prefixes:
        return list(ranked)
    named = [word for word in sorted(words) if _word_names_a_tree(db, seen, seen.prefixes, word)]
    if not named:
        return list(ranked)
    # A chunk counts as the tree's wherever a folder of its path has the tree's name, so the fragments
    # a site includes into a product's pages from a shared folder (`shared/telegraf/`) count as its own.
    return boost_paths(
        ranked, chunk_paths(db, ranked), lambda path: any(_in_folder(path, word) for word in named), SECTION_BOOST
    )
