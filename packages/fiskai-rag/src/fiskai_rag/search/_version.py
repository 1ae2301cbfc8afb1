"""Named versions: a question that names a product version prefers documents from that version's tree.

Documentation sites keep one tree per product version (`influxdb/v1/...`, `shared/influxdb-v2/...`,
`influxdb3/core/...`) with near-identical pages in each, so the words of a question rarely tell the
trees apart, while the question often names the version it is about (`influxdb 3`, `v2`, `1.x`).
Such a question raises the score of the chunks whose document path carries that version by `VERSION_BOOST`
of itself; other chunks keep theirs.

What counts as naming a version, in the question text (numbers are read from the raw text, since the
FTS5 query drops one-character terms such as the `3` of `influxdb 3`):

- `v2`, `v2.7`, `1.x`, `2.7.1` (a major version with `.x` or a minor part);
- a word glued to a number, `influxdb3`, or a word followed by a number, `influxdb 3`, but only when that
  word (or the two glued) is a path segment of one of the ranked chunks' documents (so `every 10
  seconds` names nothing: no path segment is `every`).

A document path carries version `n` when one of its segments (split at `/ _ - .`) is `v<n>` or a word
of three or more letters glued to `<n>` (`influxdb3`; not `s3`). Collections whose paths carry no
version (CISI, CACM, MED: `corpus/0001.md`) are unaffected by construction.

Measured (issue 16; the boost only reorders, so it cannot add an answer that the ranking lacks):
influxdata tuning nDCG@10 0.568 -> 0.583 (f30a 0.79 -> 0.82, f30b 0.56 -> 0.85, f33b 0 -> 0.29, f36b
0.43 -> 0.50; no question lower), answer in the top 5 hits 28/44 both, packs at 1500 tokens 30/44 both;
CISI 0.399, CACM 0.541, MED 0.690 unchanged. By boost: 0.05 -> no change, 0.1 -> 0.583, 0.2 -> 0.584.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fiskai_rag.store._db import Conn

from ._path_boost import boost_paths, chunk_paths

__all__ = ["VERSION_BOOST", "named_versions", "path_versions", "prefer_versions"]

VERSION_BOOST = 0.1
"""The smallest boost of the grid (0.05, 0.1, 0.2) that moved any question: a tenth of a chunk's score
reorders chunks whose words match about equally, not a chunk that matches far better in another tree."""

_EXPLICIT = re.compile(r"(?i)(?<![\w.])(?:v(\d+)(?:\.\d+)*|(\d+)\.(?:x|\d+)(?:\.\d+)*)(?![\w.])")
"""`v2`, `v2.7`, `1.x`, `2.7.1`: the group that matched holds the major version."""
_NAMED = re.compile(r"(?i)(?<![\w.])([a-z][a-z-]*?)(?:[ _-]?)(\d{1,2})(?![\w.])")
"""A word and a number, glued or one separator apart (`influxdb3`, `influxdb 3`, `telegraf-1`)."""
_SEGMENT = re.compile(r"[/_.\-]")
_PATH_VERSION = re.compile(r"(?:v|[a-z]{3,})(\d+)")


def path_versions(path: str) -> frozenset[str]:
    """The major versions a document path carries (`influxdb/v2/x.md` -> {"2"}, `influxdb3/core` -> {"3"})."""
    found = (_PATH_VERSION.fullmatch(segment) for segment in _SEGMENT.split(path.lower()))
    return frozenset(match.group(1).lstrip("0") or "0" for match in found if match)


def _segments(paths: Sequence[str]) -> frozenset[str]:
    return frozenset(segment for path in paths for segment in _SEGMENT.split(path.lower()) if segment)


def named_versions(text: str, paths: Sequence[str]) -> frozenset[str]:
    """The major versions `text` names; a `word N` mention counts only when `word` or `wordN` is a segment of `paths`."""
    found = {(m.group(1) or m.group(2)).lstrip("0") or "0" for m in _EXPLICIT.finditer(text)}
    named = [(m.group(1).lower(), m.group(2)) for m in _NAMED.finditer(text)]
    if named:
        segments = _segments(paths)
        found.update(
            number.lstrip("0") or "0" for word, number in named if word in segments or word + number in segments
        )
    return frozenset(found)


def _may_name(text: str) -> bool:
    # Most questions hold no digit at all: they skip the path lookup.
    return any(c.isdigit() for c in text)


def prefer_versions(db: Conn, text: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """`ranked` (higher scores better), with the chunks of documents in a version `text` names boosted.

    Returns the ranking re-sorted (ties to the smaller id) when `text` names a version that some ranked
    chunk's path carries; otherwise `ranked` as it was.
    """
    if not ranked or not _may_name(text):
        return list(ranked)
    path_of = chunk_paths(db, ranked)
    wanted = named_versions(text, list(set(path_of.values())))
    if not wanted:
        return list(ranked)
    carrying = {path for path in set(path_of.values()) if path_versions(path) & wanted}
    if not carrying:
        return list(ranked)
    return boost_paths(ranked, path_of, carrying.__contains__, VERSION_BOOST)
