"""The context-pack scorer: small, deterministic, integer arithmetic that `--explain` shows term by term.

FTS5 only narrows the chunks worth scoring; this module decides their order. For each query term that is
not a stop term, an item earns

    rarity(term) * repeats(term) * (max(3 * sat(title), 3 * sat(heading)) + 2 * sat(body))

rounded to an integer per part, where `repeats` is how often the query uses the term (at most 3),
`rarity = min(16, 1 + floor(log2(N / df)))` over the N chunks of the window, and `sat` is a BM25-style
saturation with per-field length normalisation, so a long body or a repeated word cannot dominate. A term in more than half of a multi-item window is a stop term and scores
zero. Items matching several terms earn a small coverage bonus; citation tokens, paths, file slugs and
exact titles earn an identifier bonus. Query terms need three characters and match whole words after a
light suffix folding (`policies` = `policy`, `indexed` = `index`). Function words and request scaffolding
(`_query.is_filler`) are not terms, as search does not look for them either: pack nDCG@10 (budget 8192)
CISI 0.380 -> 0.384, CACM 0.512 -> 0.532, MED 0.686 -> 0.683, influxdata answers in packs unchanged.

`RANKING_VERSION` names this arithmetic: change it whenever a constant or a rule below changes, because
receipts and their input digests bind to it.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from fiskai_rag.search._query import is_filler

from ._temporal import SCAFFOLDING, scaffold_word

__all__ = [
    "RANKING_VERSION",
    "Candidate",
    "QueryPlan",
    "Scored",
    "Scorer",
    "excerpt",
    "plan_query",
    "rarity",
]

RANKING_VERSION = "fiskai-pack-6"
"""6: near-identical copies fold into one item naming the others (`also at`); 5: packs start from search's hits."""

MIN_TERM_RUNES = 3
MAX_TERMS = 40
"""Ranking terms kept from one query (each costs a document-frequency count); later new words are ignored."""
RARITY_CAP = 16
TITLE_WEIGHT = 3
HEADING_WEIGHT = 3
BODY_WEIGHT = 2
"""Measured on CISI (76 judged queries, nDCG@10 of packs): 5/4/1 gave 0.349, 3/3/2 0.374, 1/1/1 0.358."""
MAX_REPEAT = 3
"""A term's weight grows with its repeats in the query, up to this factor."""
COVERAGE_BONUS = 3
"""Per matched term beyond the first: several meaningful terms outrank one isolated word."""
IDENTIFIER_EXACT = 64
"""The query is this item's citation token or its document path."""
IDENTIFIER_BONUS = 32
"""An identifier-shaped term inside the path, a term equal to the file slug, or the query is the exact title."""
_K1 = 1.2
_B = 0.75
_AVERAGE = {"title": 6.0, "heading": 8.0, "body": 150.0}
"""Typical field lengths in words; fixed so a score never depends on which other chunks were candidates."""

_WORD = re.compile(r"[^\W_]+")
_IDENTIFIER_MARKS = frozenset("-/:@.#")
_EDGE = "?!,;\"'()[]<>`"
_STEMS: dict[str, str] = {}


def stem(word: str) -> str:
    """Fold common English suffixes so a plural or an -ing form matches its base word (lowercase input)."""
    cached = _STEMS.get(word)
    if cached is not None:
        return cached
    folded = word
    if len(word) > 4 and word.isalpha():
        if word.endswith("sses"):
            folded = word[:-2]
        elif word.endswith("ies"):
            folded = word[:-3] + "y"
        elif word.endswith(("xes", "ches", "shes")):
            folded = word[:-2]
        elif word.endswith("ing") and len(word) > 5:
            folded = word[:-3]
        elif word.endswith("ed") and len(word) > 5:
            folded = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
            folded = word[:-1]
    if len(_STEMS) < 200_000:
        _STEMS[word] = folded
    return folded


def words(text: str) -> list[str]:
    """Lowercase letter/digit runs, as FTS5's unicode61 tokenizer cuts them."""
    return _WORD.findall(text.lower())


class QueryPlan(NamedTuple):
    """A query as the ranker sees it, with every filtered word kept for the receipt."""

    text: str
    """The query after the temporal expression and leading scaffolding were removed."""
    terms: tuple[str, ...]
    """Folded ranking terms, in query order, each once."""
    surfaces: tuple[str, ...]
    """The word each term was first written as (FTS5 stems it itself)."""
    repeats: tuple[int, ...]
    """How often the query uses each term: a question that dwells on a word weights it that much more."""
    identifiers: tuple[str, ...]
    """Whitespace tokens containing one of `- / : @ . #`, lowercased."""
    scaffolding: tuple[str, ...]
    short: tuple[str, ...]
    """Words under three characters, which do not rank."""


def plan_query(text: str, trimmed: Iterable[str] = (), *, keep_fillers: bool = False) -> QueryPlan:
    """Split a (window-free) query into ranking terms, identifiers and the words it filtered out.

    Function words and request scaffolding are dropped as search drops them, unless they are all the
    query has (then they rank, as in search).
    """
    trimmed = tuple(trimmed)
    scaffolding = list(trimmed)
    identifiers: list[str] = []
    terms: list[str] = []
    surfaces: list[str] = []
    repeats: list[int] = []
    short: list[str] = []
    for token in text.split():
        bare = token.strip(_EDGE).lower()
        if any(mark in _IDENTIFIER_MARKS for mark in bare.strip(".:")) and len(bare) >= MIN_TERM_RUNES:
            identifiers.append(bare.rstrip(".:"))
        if scaffold_word(token) in SCAFFOLDING:
            scaffolding.append(scaffold_word(token))
            continue
        for word in words(token):
            if len(word) < MIN_TERM_RUNES:
                short.append(word)
                continue
            if not keep_fillers and is_filler(word):
                scaffolding.append(word)
                continue
            folded = stem(word)
            if folded in terms:
                repeats[terms.index(folded)] += 1
            elif len(terms) < MAX_TERMS:
                terms.append(folded)
                surfaces.append(word)
                repeats.append(1)
    if not terms and not keep_fillers and len(scaffolding) > len(trimmed):
        return plan_query(text, trimmed, keep_fillers=True)
    return QueryPlan(
        text=text,
        terms=tuple(terms),
        surfaces=tuple(surfaces),
        repeats=tuple(min(r, MAX_REPEAT) for r in repeats),
        identifiers=tuple(dict.fromkeys(identifiers)),
        scaffolding=tuple(scaffolding),
        short=tuple(dict.fromkeys(short)),
    )


def rarity(df: int, total: int) -> int:
    """Log-scaled rarity of a term found in `df` of `total` chunks, capped at 16 (0 when absent)."""
    if df <= 0 or total <= 0:
        return 0
    return min(RARITY_CAP, 1 + math.floor(math.log2(max(1.0, total / df))))


class Candidate(NamedTuple):
    """A chunk worth scoring, with the document fields the ranker reads."""

    citation: str
    path: str
    ordinal: int
    title: str
    date: str
    heading_path: str
    content: str
    digest: str
    """SHA-256 (hex, 16) of the chunk's heading path and content: what a delta pack compares."""

    @property
    def body(self) -> str:
        """The content without its folded-in breadcrumb."""
        head = self.heading_path
        if head and self.content.startswith(head):
            return self.content[len(head) :].lstrip("\n")
        return self.content


class Scored(NamedTuple):
    """An item's integer score and the contributions that sum to it."""

    candidate: Candidate
    score: int
    reasons: tuple[tuple[str, int], ...]
    matched: int
    """Distinct ranking terms matched (stop terms excluded)."""
    identified: bool
    """Whether an identifier bonus applied."""


def _saturation(count: int, length: int, field: str) -> float:
    norm = 1.0 - _B + _B * (length / _AVERAGE[field])
    return count * (_K1 + 1.0) / (count + _K1 * norm)


def term_pattern(terms: Iterable[str]) -> re.Pattern[str] | None:
    """A regex finding the words that may fold to one of `terms`; `stem` then confirms each find.

    Every folded form starts with its term, or with the term minus its final `y` (`-ies` plurals).

    Scanning with one compiled pattern keeps scoring in C: tokenising and folding every word of fifty
    chunks in Python cost several milliseconds a pack.
    """
    prefixes = sorted({t[:-1] if t.endswith("y") and len(t) > 3 else t for t in terms}, key=lambda p: (-len(p), p))
    if not prefixes:
        return None
    return re.compile(r"(?<![^\W_])(?:" + "|".join(re.escape(p) for p in prefixes) + r")[^\W_]*")


def _counts(text: str, terms: frozenset[str], pattern: re.Pattern[str]) -> tuple[Counter[str], int]:
    counts: Counter[str] = Counter()
    lowered = text.lower()
    for found in pattern.findall(lowered):
        folded = stem(found)
        if folded in terms:
            counts[folded] += 1
    # Field length in words, approximated by whitespace runs (cheap, and the same for every run).
    return counts, lowered.count(" ") + lowered.count("\n") + 1


def _identifier_reasons(plan: QueryPlan, item: Candidate) -> list[tuple[str, int]]:
    path = item.path.lower()
    query = plan.text.strip().lower()
    if query in (item.citation.lower(), path):
        return [(f"identifier:{query}", IDENTIFIER_EXACT)]
    slug = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    for ident in plan.identifiers:
        if ident.split("#", 1)[0] in path:
            return [(f"identifier:{ident}", IDENTIFIER_BONUS)]
    if slug and (query == slug or slug in plan.surfaces):
        return [(f"slug:{slug}", IDENTIFIER_BONUS)]
    if item.title and query == item.title.strip().lower():
        return [("exact_title", IDENTIFIER_BONUS)]
    return []


class Scorer:
    """Scores the candidates of one request: the live terms, their pattern and rarities are fixed once.

    Titles and heading paths repeat across the chunks of a document, so their term counts are cached
    for the request.
    """

    def __init__(self, plan: QueryPlan, rarities: Mapping[str, int], stop: frozenset[str]) -> None:
        self.plan = plan
        self.rarities = rarities
        self.live = frozenset(t for t in plan.terms if t not in stop and rarities.get(t, 0) > 0)
        """The terms that can score: present in the window and not stop terms."""
        self.pattern = _pattern_for(self.live)
        self._fields: dict[str, tuple[Counter[str], int]] = {}

    def _field(self, text: str) -> tuple[Counter[str], int]:
        found = self._fields.get(text)
        if found is None:
            assert self.pattern is not None
            found = self._fields[text] = _counts(text, self.live, self.pattern)
        return found

    def score(self, item: Candidate) -> Scored:
        """Score one candidate."""
        plan = self.plan
        live = self.live
        reasons: list[tuple[str, int]] = []
        matched = 0
        if live and self.pattern is not None:
            title, title_len = self._field(item.title)
            heading, heading_len = self._field(item.heading_path)
            body, body_len = _counts(item.body, live, self.pattern)
            for term, surface, repeat in zip(plan.terms, plan.surfaces, plan.repeats, strict=True):
                if term not in live:
                    continue
                weight = self.rarities[term] * repeat
                head = 0
                head_field = ""
                if title[term]:
                    head = round(weight * TITLE_WEIGHT * _saturation(title[term], title_len, "title"))
                    head_field = "title"
                if heading[term]:
                    value = round(weight * HEADING_WEIGHT * _saturation(heading[term], heading_len, "heading"))
                    if value > head:
                        head, head_field = value, "heading"
                tail = round(weight * BODY_WEIGHT * _saturation(body[term], body_len, "body")) if body[term] else 0
                if head:
                    reasons.append((f"{head_field}:{surface}", head))
                if tail:
                    reasons.append((f"body:{surface}", tail))
                if head or tail:
                    matched += 1
        if matched > 1:
            reasons.append(("coverage", COVERAGE_BONUS * (matched - 1)))
        identifier = _identifier_reasons(plan, item)
        reasons.extend(identifier)
        return Scored(item, sum(v for _, v in reasons), tuple(reasons), matched, bool(identifier))


_PATTERNS: dict[frozenset[str], re.Pattern[str] | None] = {}


def _pattern_for(terms: frozenset[str]) -> re.Pattern[str] | None:
    # Read and written without a lock: stores in other threads may share this cache, so the value is
    # returned from a local rather than read back after a possible clear by another thread.
    if terms in _PATTERNS:
        return _PATTERNS[terms]
    if len(_PATTERNS) > 256:
        _PATTERNS.clear()
    pattern = _PATTERNS[terms] = term_pattern(terms)
    return pattern


_PADDING = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")
"""Alignment padding between words (table cells, aligned comments): one space carries the same text."""
_TABLE_RULE = re.compile(r"\s*\|?(\s*:?-+:?\s*\|)+(\s*:?-+:?)?\s*")
"""A Markdown table's header rule (`| :--- | ---: |`): layout, not content."""


def _segments(body: str) -> list[tuple[int, str]]:
    """Non-blank lines (long ones cut at sentence ends) with their offsets in `body`.

    Excerpts are built from these, so layout bytes are squeezed out here: padding runs inside a line
    become one space and table rules are left out (a wide table's padded rows otherwise spent half an
    excerpt on spaces). Leading indentation stays, since it nests lists and code.
    """
    out: list[tuple[int, str]] = []
    offset = 0
    for line in body.split("\n"):
        start = offset
        offset += len(line) + 1
        if _TABLE_RULE.fullmatch(line):
            continue
        stripped = _PADDING.sub(" ", line.rstrip())
        while len(stripped) > 240:
            cut = stripped.rfind(". ", 0, 240)
            cut = cut + 1 if cut > 40 else 240
            out.append((start, stripped[:cut]))
            rest = stripped[cut:]
            start += cut + len(rest) - len(rest.lstrip())
            stripped = rest.lstrip()
        if stripped:
            out.append((start, stripped))
    return out


def excerpt(item: Candidate, terms: frozenset[str], limit: int) -> str:
    """The answer-bearing part of a chunk, rather than simply its first lines.

    The run of lines of at most `limit` characters covering the most distinct query terms not already
    in the heading breadcrumb (ties: the earliest run); a single longer line is cut with an ellipsis.
    Measured (influxdata-tuning answers in packs @800): 0.500 counting heading terms, 0.523 not; @1500
    and the IR collections unchanged. Weighting terms by rarity, or breaking ties on term occurrences,
    moved nothing.
    """
    body = item.body
    segments = _segments(body)
    if not segments:
        return ""
    covers: list[set[str]] = [set() for _ in segments]
    pattern = _pattern_for(terms)
    if pattern is not None and item.heading_path:
        # Terms the heading already names need no showing in the body: a run is chosen for the terms it
        # adds, so a section named for the query (an option's own section, say) starts with its lead.
        named = {stem(w) for w in pattern.findall(item.heading_path.lower())} & terms
        if named:
            terms = terms - named
            pattern = _pattern_for(terms)
    if pattern is not None:
        starts = [start for start, _ in segments]
        for found in pattern.finditer(body.lower()):
            folded = stem(found.group())
            if folded in terms:
                covers[max(0, bisect.bisect_right(starts, found.start()) - 1)].add(folded)
    # prefix[i] = characters (with their newlines) of segments[:i]; a run [first, end) fits the limit when
    # prefix[end] - prefix[first] <= limit + 1, and always holds at least one segment.
    prefix = [0]
    for _, line in segments:
        prefix.append(prefix[-1] + len(line) + 1)
    best = (-1, 0, 1)
    for first in range(len(segments)):
        end = max(first + 1, bisect.bisect_right(prefix, prefix[first] + limit + 1) - 1)
        seen: set[str] = set[str]().union(*covers[first:end])
        if len(seen) > best[0]:
            best = (len(seen), first, end)
        if end == len(segments):
            break  # later starts only cover a suffix of this run
    _, first, end = best
    text = "\n".join(line for _, line in segments[first:end])
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text
