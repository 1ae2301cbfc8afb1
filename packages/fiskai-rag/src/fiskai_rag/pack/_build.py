"""Context packs: the best few chunks under a hard token budget, with a receipt (the read path of the seed).

`build_pack` runs inside `Store.context` under the store's lock, in one read transaction:
window -> query plan -> the search ranking's hits for the same words (seeds, from `Store.search`) -> window
statistics (chunk count, each term's document frequency) -> candidates: exact citation/path lookups and the
seeds inside the window, and the pack's own FTS5 query when a window is set or no seed is -> delta and run filters -> scoring
-> floor and order (exact identifiers, then the first `SEEDS` seeds in search order, then the rest by
score) -> collapse -> pins -> selection with excerpts sized to the budget -> exact encoding. Every step is
deterministic; ties break on the citation.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from fiskai_rag.errors import NOT_BUILT_TEXT
from fiskai_rag.search._distinct import fold, stored_prints
from fiskai_rag.search._query import fts_query
from fiskai_rag.store._citation import Citation
from fiskai_rag.store._db import DATES_PENDING, DB_NAME, Conn
from fiskai_rag.store._sql import CHUNK_TEXT, CHUNKS, Columns, chunk_rows, find_chunk, find_documents

from ._rank import Candidate, QueryPlan, Scored, Scorer, excerpt, plan_query, rarity, words
from ._receipt import Context, Warning_, input_digest, make_receipt
from ._receipts_store import load_manifest, save_manifest
from ._render import FORMATS, Format, deliver, encode, item_cost
from ._select import MAX_COLLAPSED, PackItem, Selection, apply_floor, collapse, select
from ._temporal import Window, resolve_window

__all__ = ["EXCERPT_CHARS", "Pack", "SeedHits", "build_pack", "excerpt_limit"]

EXCERPT_CHARS = 400
"""The shortest excerpt of a ranked item, and every pin's excerpt."""
MAX_EXCERPT_CHARS = 1600
SHARE_ITEMS = 5
"""The item budget is shared as if this many items came whole (see `excerpt_limit`). Measured with 10 seeds
(influxdata-tuning answers in packs @1500): 400 characters for every item 0.591; shares of 4 / 5 / 6 items
0.636 / 0.659 / 0.636; CISI, CACM and MED pack nDCG unchanged by it. After the query merge, @800 / @1500:
4 items 0.500 / 0.659, 5 items 0.523 / 0.659, 6 items 0.545 / 0.636. Pooling the five shares so short
items leave room to longer ones (water-filling) gave 0.500 / 0.659: not kept."""
_ITEM_OVERHEAD = 150
"""Bytes of an item's citation and heading lines, roughly."""
CANDIDATES = 32
"""FTS5 candidates scored per request when a date window is set or search gives none (see `_build`). Fixed
rather than budget-sized, so the candidate set (and with it the input digest) never depends on the budget.
On CISI, 30, 40 and 50 candidates rank alike (nDCG@10 0.381, 0.380, 0.374)."""
SEEDS = 10
"""Search hits that lead a pack, in search order: search's first page (the seed callback returns up to 20
hits; the others are candidates the pack scorer orders).

Measured (issue 16; share of influxdata-tuning questions whose answer a pack @1500 carries; pack nDCG@10 on
CISI / CACM / MED), before the query analysis merged: no seeds 0.455, 0.380 / 0.501 / 0.686; 5 seeds 0.614,
0.396 / 0.486 / 0.683; 10 seeds 0.659, 0.397 / 0.509 / 0.684; 20 seeds 0.636, 0.397 / 0.505 / 0.684. After
it: no seeds 0.455, 0.384 / 0.532 / 0.683; 5 seeds 0.614, 0.400 / 0.515 / 0.679; 10 seeds 0.659, 0.393 /
0.535 / 0.679; 20 seeds 0.636, 0.396 / 0.532 / 0.679. Scoring only search's hits, without the pack's own
FTS5 query, measured the same on influxdata-tuning and within 0.003 on the IR sets at about two thirds
of the cost. Fusing search's rank with the pack scorer's (RRF, k 10 or 60) instead of following search's
order: influxdata 0.591, CISI 0.388 (MRR 0.605), CACM 0.549, MED 0.682: rejected (influxdata and CISI
fall)."""
_MAX_IDENTIFIER_CHUNKS = 8
_STALE_NOTE = "this index predates document dates (or is being rebuilt); index the documents again"
_NOT_BUILT = f"{NOT_BUILT_TEXT}; index the documents to cite"


@dataclass(frozen=True, slots=True)
class Pack:
    """A delivered context pack."""

    text: str
    """Exactly the delivered bytes (as str); `receipt["encoded_tokens"]` measures this."""
    items: tuple[PackItem, ...]
    receipt: dict[str, Any]
    citations: tuple[str, ...]
    """The delivered citation tokens, in delivery order."""
    status: str
    """`ok`, `index_not_built`, or the warning kind: `no_candidates`, `no_match`, `over_budget`."""
    degraded: str | None = None
    """Why the search under the pack skipped the index's vectors (its embedder failed), if it did."""


class SeedHits(NamedTuple):
    """What `build_pack`'s `seed` returns: search's hits for the query and how they were ranked."""

    hits: Sequence[tuple[int, str, Sequence[str]]]
    """(chunk id, citation, other locations search folded into it), best first."""
    vectors: bool = False
    """Whether the index's vectors ranked them (a hybrid search that did not degrade)."""
    degraded: str | None = None
    """Why the vectors were skipped, when the index has them and its embedder failed."""


def _digest(heading_path: str, content: str) -> str:
    return hashlib.sha256(f"{heading_path}\0{content}".encode()).hexdigest()[:16]


class _Reader:
    """The SQL of one pack request, against one connection inside one transaction."""

    def __init__(self, db: Conn, window: Window) -> None:
        self.db = db
        self.cols = Columns.of(db)
        self.dated = self.cols.dated
        self.window = window
        since = window.since.isoformat() if window.since else "0000-01-01"
        until = window.until.isoformat() if window.until else "9999-12-31"
        self.bounds = (since, until)

    def _scope(self) -> str:
        return " AND d.date != '' AND d.date BETWEEN ? AND ?" if self.window.active else ""

    def total(self) -> int:
        if not self.window.active:
            return int(self.db.execute("SELECT count(*) FROM chunks").fetchall()[0][0])
        if not self.dated:
            return 0
        sql = f"SELECT count(*) FROM {CHUNKS} WHERE 1" + self._scope()
        return int(self.db.execute(sql, self.bounds).fetchall()[0][0])

    def df(self, word: str) -> int:
        match = f'"{word}"'
        if not self.window.active:
            return int(
                self.db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)).fetchall()[0][0]
            )
        sql = f"SELECT count(*) FROM {CHUNK_TEXT} WHERE chunks_fts MATCH ?" + self._scope()
        return int(self.db.execute(sql, (match, *self.bounds)).fetchall()[0][0])

    def matching(self, match: str) -> list[int]:
        if not match or (self.window.active and not self.dated):
            return []
        if not self.window.active:
            sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts), rowid LIMIT ?"
            return [int(r[0]) for r in self.db.execute(sql, (match, CANDIDATES))]
        sql = (
            f"SELECT f.rowid FROM {CHUNK_TEXT} WHERE chunks_fts MATCH ?"
            + self._scope()
            + " ORDER BY bm25(chunks_fts) LIMIT ?"
        )
        return [int(r[0]) for r in self.db.execute(sql, (match, *self.bounds, CANDIDATES))]

    def by_identity(self, text: str) -> list[int]:
        """Chunks named exactly by the query: a citation token, or a document path (its first chunks)."""
        if not text or " " in text:
            return []
        citation = Citation.try_parse(text)
        if citation is not None:
            found = find_chunk(self.db, self.cols, citation)
            return [] if found is None else [found]
        documents = find_documents(self.db, self.cols, text)
        if not documents:
            return []
        sql = "SELECT id FROM chunks WHERE document_id = ? ORDER BY ordinal LIMIT ?"
        return [int(r[0]) for r in self.db.execute(sql, (documents[0][0], _MAX_IDENTIFIER_CHUNKS))]

    def hydrate(self, ids: Sequence[int]) -> list[Candidate]:
        rows = chunk_rows(self.db, self.cols, ids)
        return [
            Candidate(
                row.citation,
                row.cite,
                row.ordinal,
                row.title,
                row.date,
                row.heading_path,
                row.content,
                _digest(row.heading_path, row.content),
            )
            for row in (rows[i] for i in ids if i in rows)
        ]

    def in_window(self, candidate: Candidate) -> bool:
        if not self.window.active:
            return True
        return bool(candidate.date) and self.bounds[0] <= candidate.date <= self.bounds[1]

    def pin(self, text: str) -> Candidate | None:
        citation = Citation.try_parse(text)
        found = None if citation is None else find_chunk(self.db, self.cols, citation)
        hydrated = self.hydrate([found]) if found is not None else []
        return hydrated[0] if hydrated else None

    def index_state(self) -> dict[str, Any]:
        documents = int(self.db.execute("SELECT count(*) FROM documents").fetchall()[0][0])
        chunks = int(self.db.execute("SELECT count(*) FROM chunks").fetchall()[0][0])
        state: dict[str, Any] = {"state": "used", "path": DB_NAME, "documents": documents, "chunks": chunks}
        if not self.dated or self.db.execute("SELECT 1 FROM rag_meta WHERE key = ?", (DATES_PENDING,)).fetchall():
            state["state"] = "stale"
            state["note"] = _STALE_NOTE
        return state


def _seeded(scored: Scored, seed_rank: dict[str, int]) -> Scored:
    rank = seed_rank.get(scored.candidate.citation)
    if rank is None:
        return scored
    # Zero points: the search rank orders the item (see `apply_floor`) without changing its score.
    return scored._replace(reasons=(*scored.reasons, (f"search_rank:{rank + 1}", 0)))


def excerpt_limit(item_budget: int) -> int:
    """Excerpt characters per ranked item: an even share of the item budget among `SHARE_ITEMS` items.

    A pack is meant to carry at least what the top five search hits carry, so the budget is split as if
    five items were delivered whole (bytes are tokens * 4, less `_ITEM_OVERHEAD` for each item's citation
    line), never below `EXCERPT_CHARS` nor above `MAX_EXCERPT_CHARS`. Most chunks then arrive whole at
    the default budget (median chunk of influxdata-docs: 374 characters, 90th percentile 1,110).
    """
    share = max(0, item_budget) * 4 // SHARE_ITEMS - _ITEM_OVERHEAD
    return max(EXCERPT_CHARS, min(MAX_EXCERPT_CHARS, share))


def _item(
    scored: Scored,
    terms: frozenset[str],
    *,
    pinned: bool = False,
    others: tuple[str, ...] = (),
    count: int = 1,
    limit: int = 0,
) -> PackItem:
    c = scored.candidate
    reasons = (*scored.reasons, ("pinned", 0)) if pinned else scored.reasons
    return PackItem(
        citation=c.citation,
        path=c.path,
        heading_path=c.heading_path,
        title=c.title,
        date=c.date,
        excerpt=excerpt(c, terms, limit or EXCERPT_CHARS),
        score=scored.score,
        reasons=reasons,
        digest=c.digest,
        pinned=pinned,
        count=count,
        collapsed=others,
    )


class _Request(NamedTuple):
    query: str
    budget: int
    fmt: Format
    explain: bool
    pins: Sequence[str]
    exclude: Collection[str]
    since_receipt: str | None
    save_receipt: bool
    store_dir: Path
    seeds: tuple[int, ...] = ()
    """Chunk ids of the search ranking's hits for the query, best first."""
    seed_copies: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(citation, other locations) of each seed search folded copies into (`Hit.also`): those copies are
    not candidates here."""
    vector_seeds: bool = False
    """Whether the index's vectors ranked the seeds: then search's top hits stay in the pack even when
    they share no word with the query (the vectors found them by meaning)."""
    limit: int | None = None
    """At most this many items (`knowledge_search`'s `top_k`); None for as many as the budget holds."""


def _with_search_copies(
    groups: list[tuple[Scored, tuple[str, ...], int]], request: _Request
) -> list[tuple[Scored, tuple[str, ...], int]]:
    # Search already folded copies of its hits away, so the pack never sees them as candidates; the
    # locations search named are added to the item that represents them.
    if not request.seed_copies:
        return groups
    by_citation = dict(request.seed_copies)
    out: list[tuple[Scored, tuple[str, ...], int]] = []
    for item, others, count in groups:
        extra = [c for c in by_citation.get(item.candidate.citation, ()) if c not in others]
        named = (*others, *extra)[:MAX_COLLAPSED]
        out.append((item, named, count + len(extra)))
    return out


def _finish(request: _Request, context: Context, selection: Selection) -> Pack:
    def receipt_for(kept: Sequence[PackItem], detail: int, budget: int) -> dict[str, Any]:
        return make_receipt(context, selection, kept, detail, budget)

    text, kept, receipt = deliver(request.fmt, selection.items, receipt_for, request.budget, request.explain)
    citations = tuple(item.citation for item in kept)
    return Pack(text, tuple(kept), receipt, citations, str(receipt["status"]))


def build_pack(
    db: Conn | None,
    *,
    store_dir: Path,
    query: str,
    budget: int,
    fmt: str,
    explain: bool,
    pins: Sequence[str],
    exclude: Collection[str],
    since: dt.date | None,
    until: dt.date | None,
    since_receipt: str | None,
    save_receipt: bool,
    today: dt.date | None,
    seed: Callable[[str], SeedHits] | None = None,
    limit: int | None = None,
) -> Pack:
    """Build one pack; `db` is None when the index has not been built (a soft `index_not_built` pack).

    `seed` returns the search ranking's hits for the window-free query text, best first, as (chunk id,
    citation, other locations search folded into it): they are the candidates, and the first `SEEDS`
    lead the pack in search order, so a pack carries what the top hits carry (and names the same copies).
    `limit` caps the items (pins aside).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown pack format {fmt!r}; expected one of {', '.join(FORMATS)}")
    request = _Request(
        query,
        budget,
        fmt,
        explain,
        tuple(pins),
        frozenset(exclude),
        since_receipt,
        save_receipt,
        store_dir,
        limit=limit,
    )
    text, window, trimmed = resolve_window(query, since=since, until=until, today=today or dt.date.today())
    plan = plan_query(text, trimmed)
    degraded: str | None = None
    if db is not None and seed is not None and text.strip():
        # Outside the pack's transaction: a hybrid search may wait on an embeddings server first.
        seeded = seed(text)
        degraded = seeded.degraded
        request = request._replace(
            seeds=tuple(chunk_id for chunk_id, _, _ in seeded.hits),
            seed_copies=tuple((citation, tuple(also)) for _, citation, also in seeded.hits if also),
            vector_seeds=seeded.vectors,
        )
    if db is None:
        index = {"state": "missing", "path": DB_NAME, "note": _NOT_BUILT}
        digest = input_digest(
            plan,
            window,
            pins=request.pins,
            exclude=request.exclude,
            since_receipt=since_receipt,
            total=0,
            df={},
            candidates=[],
        )
        context = Context(digest, query, plan, (), fmt, index, window, since_receipt, False, {}, None)
        return _finish(request, context, Selection())
    with db:
        pack = _build(db, request, plan, window)
    return pack if degraded is None else dataclasses.replace(pack, degraded=degraded)


def _build(db: Conn, request: _Request, plan: QueryPlan, window: Window) -> Pack:
    reader = _Reader(db, window)
    index = reader.index_state()
    total = reader.total()
    df = {term: reader.df(surface) for term, surface in zip(plan.terms, plan.surfaces, strict=True)} if total else {}
    stop = frozenset(t for t, n in df.items() if total >= 2 and n * 2 > total)
    if stop and stop >= {t for t, n in df.items() if n}:
        # Stop terms keep common words from outweighing informative ones; when every word the query has
        # in the window is common (a small corpus, a one-word query), they are all the evidence there is.
        stop = frozenset[str]()
    rarities = {t: rarity(n, total) for t, n in df.items()}
    # Repeats stay in the FTS5 query: bm25 then weights the words a question dwells on when choosing
    # which candidates are worth scoring, as the scorer itself does.
    live = [
        surface
        for term, surface, repeat in zip(plan.terms, plan.surfaces, plan.repeats, strict=True)
        if term not in stop and df.get(term)
        for _ in range(repeat)
    ]
    ident_words = [w for ident in plan.identifiers for w in words(ident) if len(w) >= 2]
    ids = reader.by_identity(plan.text.strip()) if total else []
    seeds = [c for c in reader.hydrate(request.seeds) if reader.in_window(c)] if total else []
    seed_rank = {c.citation: rank for rank, c in enumerate(seeds[:SEEDS])}
    if window.active or not seeds:
        # Search applies no date window (its hits outside one are gone) and finds nothing for some
        # queries the pack can still serve: then the pack's own FTS5 query adds candidates.
        ids += [i for i in reader.matching(fts_query(" ".join(live + ident_words))) if i not in ids]
    found = reader.hydrate([i for i in ids if i not in request.seeds])
    in_seeds = {c.citation for c in seeds}
    considered = [*seeds, *(c for c in found if c.citation not in in_seeds)]
    pinned = [(p, reader.pin(p)) for p in request.pins]
    delta: dict[str, str] | None = None
    if request.since_receipt is not None:
        delta = load_manifest(request.store_dir, request.since_receipt, terms=plan.terms)
    candidates = [c for c in considered if c.citation not in request.exclude]
    excluded = len(considered) - len(candidates)
    if delta is not None:
        candidates = [c for c in candidates if delta.get(c.citation) != c.digest]
    unchanged = len(considered) - excluded - len(candidates)
    everything = considered + [c for _, c in pinned if c is not None]
    digest = input_digest(
        plan, window, pins=request.pins, exclude=request.exclude, since_receipt=request.since_receipt,
        total=total, df=df, candidates=everything,
    )  # fmt: skip
    scorer = Scorer(plan, rarities, stop)
    scored = [_seeded(scorer.score(c), seed_rank) for c in candidates]
    ranked, below = apply_floor(scored, seed_rank, vector_seeds=request.vector_seeds)
    # Near-identical copies (a page copied across version trees) are one item that names the others.
    prints = stored_prints(db, reader.cols.cite, [*request.seeds, *ids])
    groups = collapse(ranked, fold([(s.candidate.citation, s.candidate.path, s.candidate.heading_path,
                                     s.candidate.content, prints.get(s.candidate.citation)) for s in ranked]))  # fmt: skip
    groups = _with_search_copies(groups, request)
    if request.limit is not None:
        groups = groups[: max(1, request.limit)]
    terms = frozenset(t for t in plan.terms if t not in stop)
    pin_items: list[PackItem] = []
    rejected: list[tuple[str, str]] = []
    for citation, found in pinned:
        if found is None:
            rejected.append((citation, "not_found"))
        elif all(p.citation != citation for p in pin_items):
            pin_items.append(_item(scorer.score(found), terms, pinned=True))
    remaining = {c.citation for c in candidates}
    # Whether the run filters removed every chunk that would have ranked: search's hits include chunks
    # that match only stop terms, so "nothing left" is judged on relevant ones.
    spent = not groups and any(
        (s.matched or s.identified) for s in (scorer.score(c) for c in considered if c.citation not in remaining)
    )
    empty = _empty(total, window, index, spent, bool(groups), excluded, unchanged, request, plan)
    counts = {
        "window_chunks": total,
        "candidates": len(considered),
        "excluded": excluded,
        "unchanged": unchanged,
        "below_floor": below,
        "collapsed": sum(count - 1 for _, _, count in groups),
    }
    context = Context(digest, request.query, plan, tuple(sorted(stop)), request.fmt, index, window,
                      request.since_receipt, request.save_receipt, counts, empty)  # fmt: skip

    costs: dict[str, int] = {}

    def cost(item: PackItem) -> int:
        if item.citation not in costs:
            costs[item.citation] = item_cost(request.fmt, item, request.explain)
        return costs[item.citation]

    overhead = encode(request.fmt, [], make_receipt(context, Selection(), [], 0, request.budget), request.explain)[1]
    item_budget = request.budget - overhead
    # Items (and their excerpts) are built best first only while they could still matter: once one and a
    # half item budgets have been offered, what follows could only fill leftover slack, and is reported
    # as dropped over budget instead.
    limit = excerpt_limit(item_budget)
    items: list[PackItem] = []
    offered = 0
    unbuilt: list[str] = []
    for position, (scored_item, others, count) in enumerate(groups):
        if offered * 2 > 3 * max(item_budget, 0):
            unbuilt = [g[0].candidate.citation for g in groups[position:]]
            break
        item = _item(scored_item, terms, others=others, count=count, limit=limit)
        items.append(item)
        offered += cost(item)
    selection = select(items, pin_items, item_budget, cost)
    selection.rejected_pins[:0] = rejected
    selection.dropped += [(citation, "over_budget") for citation in unbuilt]
    if request.save_receipt:
        save_manifest(request.store_dir, digest, terms=plan.terms, entries=[(c.citation, c.digest) for c in everything])
    return _finish(request, context, selection)


def _empty(
    total: int,
    window: Window,
    index: dict[str, Any],
    spent: bool,
    matched: bool,
    excluded: int,
    unchanged: int,
    request: _Request,
    plan: QueryPlan,
) -> Warning_:
    """Which of the three empty cases applies before the budget is considered, if any."""
    if matched:
        return None
    if total == 0:
        if window.active:
            stale = f" ({index['note']})" if index["state"] == "stale" else ""
            span = f"{window.since.isoformat() if window.since else '*'}..{window.until.isoformat() if window.until else '*'}"
            return "no_candidates", f"no dated document in the window {span}{stale}; widen --since/--until"
        return "no_candidates", "the knowledge index holds no chunks; index the documents to cite"
    if spent:
        if unchanged and not excluded:
            return "no_candidates", f"nothing new or changed since receipt {request.since_receipt}"
        return "no_candidates", "every matching chunk was already delivered in this run"
    if not plan.terms and not plan.identifiers:
        return "no_match", "the query has no searchable terms once scaffolding words are removed; name the subject"
    return "no_match", "no chunk matches the query above the relevance floor; try other words or widen the window"
