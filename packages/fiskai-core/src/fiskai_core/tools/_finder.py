"""Client-side tool search: a BM25 index over tools a model has not been sent yet.

Used when a tool set is large enough to defer but the model server offers no tool search of its own
(local Anthropic-compatible servers): the model asks `find_tools` in words, and this index answers
with the best few tools. Pure Python and deterministic: the same tools and query give the same list,
ties broken by name.

Each tool is one document with five fields, scored with BM25F (per-field length normalisation, field
weights, one saturation): the name split on `_` and `-`, the first description line, the rest of the
description (without its `Tags: ...` line), the argument names with their descriptions, and the tags.
Text is case folded, split on anything not a letter or digit (any script), stripped of stop words and lightly
stemmed (plural, -ing, -ed, a final e) so `removes`, `removing` and `remove` meet. A query word also
matches the few command-line synonyms in `_SYNONYM_GROUPS` at a lower weight (best variant per word,
so a tool saying both `rm` and `remove` is not counted twice).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from ._protocols import Tool

__all__ = ["ToolFinder", "ToolMatch"]

_WORD = re.compile(r"[^\W_]+")
"""Runs of letters and digits in any script; `_`, `-` and `:` separate words (`consumer_rm`, `impact:ro`)."""

# Words that say nothing about which tool is meant, in the way operators phrase requests.
_STOP_WORDS = frozenset(
    "a an the of to in on for from with by at as into onto about under over via "
    "me my mine i we our us you your it its is are was were be been being am "
    "this that these those there here and or but so then than not no "
    "how what which who whom whose when where why "
    "do does did can could would should will shall may might must "
    "please want wants need needs let lets some any all much many more most every each "
    "use using used tool tools command commands".split()
)

# Command-line verbs and nouns that name one action or thing differently across CLIs. Small on purpose:
# each group is words an operator uses interchangeably for one kind of command (`rm` for delete, `ls`
# for list); a word may sit in two groups when it is ambiguous (`show` lists or describes, `get`
# reads or describes). `store` is left out: in the CLIs it is mostly a noun (KV store, object store).
_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("delete", "remove", "rm", "del", "erase", "destroy", "drop"),
    ("list", "ls", "enumerate", "show"),
    ("create", "add", "new", "make"),
    ("info", "information", "describe", "view", "show", "detail", "inspect", "get"),
    ("get", "fetch", "retrieve", "read", "download"),
    ("put", "write", "upload", "save"),
    ("edit", "update", "modify", "change", "alter"),
    ("publish", "pub", "send"),
    ("subscribe", "sub", "subscription", "listen"),
    ("copy", "cp", "clone", "duplicate"),
    ("backup", "snapshot"),
    ("statistics", "stats", "stat", "metrics", "usage"),
    ("connection", "connect", "conn", "client"),
    ("select", "switch", "choose"),
    ("jetstream", "js"),
    ("message", "msg"),
)

_SYNONYM_WEIGHT = 0.8
"""A synonym counts this much of the word itself, so the operator's own word wins a close call. Not
lower: CLIs name commands by the short form (`stream_ls`, `consumer_rm`), and at 0.6 a tool that says
`list` in passing outranked the one named `ls` (tuning questions: 13 -> 16 of 20 first)."""

_FIELD_WEIGHTS: Mapping[str, float] = {"name": 3.0, "summary": 2.0, "body": 1.0, "arguments": 0.4, "tags": 0.5}
"""Name and first line say what a tool does; argument help mentions many things a tool merely touches."""

_K1 = 1.2
_B = 0.75
_SUMMARY_MAX = 200
"""Characters of the one-line description a match carries (the model reads the full one once loaded)."""


@dataclass(frozen=True, slots=True)
class ToolMatch:
    """One search hit: a tool name and its one-line description."""

    name: str
    summary: str


def _stem(word: str) -> str:
    """Light suffix stripping (plural, -ing, -ed, final e): enough to meet `deletes`/`deleting`/`delete`."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            # `string` keeps its -ing (no vowel left); `speed` keeps its -ed.
            if len(base) >= 3 and any(vowel in base for vowel in "aeiouy") and not base.endswith("e"):
                if base[-1] == base[-2] and base[-1] not in "lsz":
                    base = base[:-1]  # stopped -> stop, running -> run
                word = base
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


@dataclass(frozen=True, slots=True)
class _Bag:
    """One field of one tool: stemmed term counts and the field's length in terms."""

    counts: Mapping[str, int]
    length: int


_EMPTY = _Bag({}, 0)
_SHORT_TEXT = 12


def _bag(text: str, stems: dict[str, str]) -> _Bag:
    """The stemmed, stop-word-free terms of `text`; `stems` caches word -> stem ("" for a stop word)."""
    if not text:
        return _EMPTY  # most tools have no long help
    words = _WORD.findall(text.casefold())
    # Only words not seen before go through Python code.
    for word in set(words).difference(stems):
        stems[word] = "" if word in _STOP_WORDS else _stem(word)
    if len(words) > _SHORT_TEXT:
        counts = Counter(map(stems.__getitem__, words))  # counted in C: argument help runs long
        stop_words = counts.pop("", 0)
        return _Bag(counts, len(words) - stop_words)
    short: dict[str, int] = {}  # a plain loop is twice as fast as building a Counter for a name or a line
    for word in words:
        stem = stems[word]
        if stem:
            short[stem] = short.get(stem, 0) + 1
    return _Bag(short, sum(short.values()))


def _tag_bag(tags: tuple[str, ...], cache: dict[tuple[str, ...], _Bag], stems: dict[str, str]) -> _Bag:
    bag = cache.get(tags)
    if bag is None:
        bag = cache[tags] = _bag(" ".join(tags), stems)
    return bag


def _synonym_table() -> dict[str, tuple[str, ...]]:
    table: dict[str, set[str]] = {}
    for group in _SYNONYM_GROUPS:
        stems = {_stem(word) for word in group}
        for stem in stems:
            table.setdefault(stem, set()).update(stems - {stem})
    return {stem: tuple(sorted(others)) for stem, others in table.items()}


_SYNONYMS = _synonym_table()


def _split_description(description: str, tags: Sequence[str]) -> tuple[str, str]:
    """The first line and the rest of a description, without the trailing `Tags: ...` line."""
    text = description.strip()
    if tags:
        head, sep, last = text.rpartition("\n\n")
        candidate = last if sep else text
        if candidate.startswith("Tags: "):
            text = head.strip() if sep else ""
    first, _, rest = text.partition("\n")
    return first.strip(), rest.strip()


def _argument_text(schema: Mapping[str, object]) -> str:
    """Each argument's name and description, from the schema's `properties` (JSON, so checked as it is read)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    parts: list[str] = []
    for name, spec in cast("Mapping[str, object]", properties).items():
        parts.append(name)
        if isinstance(spec, Mapping):
            help_text = cast("Mapping[str, object]", spec).get("description")
            if isinstance(help_text, str):
                parts.append(help_text)
    return "\n".join(parts)


def _summary(first_line: str) -> str:
    if len(first_line) <= _SUMMARY_MAX:
        return first_line
    return first_line[: _SUMMARY_MAX - 1].rstrip() + "\u2026"


class ToolFinder:
    """A BM25 index over a tool set, built once per run; `find` answers a query in words."""

    __slots__ = ("_names", "_postings", "_summaries")

    def __init__(self, tools: Sequence[Tool]) -> None:
        """Index `tools` (the deferred ones: those the model was not sent).

        Raises:
            ValueError: Two tools share a name.
        """
        stems: dict[str, str] = {}
        tag_bags: dict[tuple[str, ...], _Bag] = {}  # a CLI uses a handful of tag combinations
        names: list[str] = []
        summaries: list[str] = []
        docs: list[dict[str, _Bag]] = []
        for tool in tools:
            first, rest = _split_description(tool.description, tool.tags)
            names.append(tool.name)
            summaries.append(_summary(first))
            docs.append(
                {
                    "name": _bag(tool.name, stems),
                    "summary": _bag(first, stems),
                    "body": _bag(rest, stems),
                    "arguments": _bag(_argument_text(tool.input_schema), stems),
                    "tags": _tag_bag(tuple(tool.tags), tag_bags, stems),
                }
            )
        if len(set(names)) != len(names):
            duplicates = sorted({name for name in names if names.count(name) > 1})
            raise ValueError(f"tool names must be unique to be searched; duplicated: {', '.join(duplicates)}")
        self._names = tuple(names)
        self._summaries = tuple(summaries)
        self._postings = _postings(docs)

    def __len__(self) -> int:
        """How many tools the index holds."""
        return len(self._names)

    @property
    def names(self) -> Sequence[str]:
        """The indexed tool names, in the order given."""
        return self._names

    def find(self, query: str, limit: int = 5) -> list[ToolMatch]:
        """The best `limit` tools for `query`, best first; ties by name. Empty when nothing matches.

        Raises:
            ValueError: `limit` is below 1.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        scores: dict[int, float] = {}
        for variants in self._query_terms(query):
            best: dict[int, float] = {}
            for term, weight in variants:
                posting = self._postings.get(term)
                if posting is None:
                    continue
                idf, entries = posting
                for doc, tf in entries:
                    value = weight * idf * tf / (_K1 + tf)
                    if value > best.get(doc, 0.0):
                        best[doc] = value
            for doc, value in best.items():
                scores[doc] = scores.get(doc, 0.0) + value
        # Rounded so that equal scores reached by different float sums still tie, and fall to the name.
        ranked = sorted(scores.items(), key=lambda item: (-round(item[1], 9), self._names[item[0]]))
        return [ToolMatch(self._names[doc], self._summaries[doc]) for doc, _ in ranked[:limit]]

    def _query_terms(self, query: str) -> list[list[tuple[str, float]]]:
        """Per query word, the index terms it matches with their weights (itself first, then synonyms)."""
        words = [w for w in _WORD.findall(query.casefold()) if w not in _STOP_WORDS]
        stems = [_stem(word) for word in words]
        seen: set[str] = set()
        out: list[list[tuple[str, float]]] = []
        # Two words an index term writes as one (`back up` -> `backup`, `key value` -> `keyvalue`).
        joined = [_stem(a + b) for a, b in zip(words, words[1:], strict=False)]
        for stem in (*stems, *(j for j in joined if j in self._postings)):
            if stem in seen:
                continue
            seen.add(stem)
            out.append([(stem, 1.0), *((other, _SYNONYM_WEIGHT) for other in _SYNONYMS.get(stem, ()))])
        return out


def _postings(docs: Sequence[Mapping[str, _Bag]]) -> dict[str, tuple[float, list[tuple[int, float]]]]:
    """Term -> (IDF, [(document, field-weighted normalised term frequency)]).

    The BM25 saturation is applied at query time, to the few postings a query touches, rather than to
    every posting at build time: the build is the part that runs once per run on every tool.
    """
    count = len(docs)
    if count == 0:
        return {}
    average = {field: (sum(doc[field].length for doc in docs) / count) or 1.0 for field in _FIELD_WEIGHTS}
    weighted: dict[str, list[tuple[int, float]]] = {}
    for index, doc in enumerate(docs):
        mass: dict[str, float] = {}
        for field, weight in _FIELD_WEIGHTS.items():
            bag = doc[field]
            if not bag.length:
                continue
            norm = weight / (1.0 - _B + _B * bag.length / average[field])
            for term, n in bag.counts.items():
                mass[term] = mass.get(term, 0.0) + n * norm
        for term, tf in mass.items():
            entries = weighted.get(term)
            if entries is None:
                weighted[term] = [(index, tf)]
            else:
                entries.append((index, tf))
    return {
        term: (math.log(1.0 + (count - len(entries) + 0.5) / (len(entries) + 0.5)), entries)
        for term, entries in weighted.items()
    }
