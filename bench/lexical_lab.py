"""Experiment harness for lexical ranking changes: every variant scored on CISI, CACM, MED and influx tuning.

A variant replaces the whole re-scoring step of `Store.search` (today `proximity(db, match,
reweight(db, match, ranked))`, where `ranked` is the best `RESCORE_POOL` chunks by FTS5 `bm25()`);
everything around it (named versions, folded copies, the per-document cap, packs seeded from search)
is the product's own code, so a variant's figures are what `fiskai knowledge eval` would print. Term
weights are applied exactly: a chunk's FTS5 `bm25()` for an OR query is the sum of its per-word `bm25()`
scores, so a weighted query is the weighted sum of those (each word's scores are read once per store).
`base` is the step before `_burstiness` (proximity alone), `product` the step as shipped.

Build the stores once (`fiskai knowledge eval SUITE --store DIR` for each of cisi, cacm, med and the
influxdata tuning half, into DIR/cisi, DIR/cacm, DIR/med, DIR/influx), then:

  uv run python bench/lexical_lab.py --stores DIR                       # every variant, a table
  uv run python bench/lexical_lab.py --stores DIR --only base product --mrr --no-answers
  uv run python bench/lexical_lab.py --stores DIR --only base product --per-query med --changed

Never point it at the held-out half (`influxdata-heldout.yaml`).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

import fiskai_rag.store._store as store_module
from fiskai_rag import open_store
from fiskai_rag.eval import check_answers, evaluate, load_suite, suite_from_mapping
from fiskai_rag.search._burstiness import reweight, word_counts
from fiskai_rag.search._proximity import proximity
from fiskai_rag.store._db import Conn

Rescore = Callable[[Conn, str, Sequence[tuple[int, float]]], list[tuple[int, float]]]

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "cisi": ROOT.parent / "shared/fixtures/ir/cisi",
    "cacm": ROOT.parent / "shared/fixtures/ir/cacm",
    "med": ROOT.parent / "shared/fixtures/ir/med",
    "influx": ROOT / "packages/fiskai-rag/evals/influxdata-tuning.yaml",
}


class Stats:
    """Per-store term statistics and per-term FTS5 `bm25()` scores, cached."""

    def __init__(self, db: Conn) -> None:
        self.db = db
        self.n = int(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0])
        word_counts(db, [])  # creates the connection's temporary fts5vocab table
        uses, postings = db.execute("SELECT total(cnt), total(doc) FROM temp.fiskai_vocab").fetchall()[0]
        self.mean_avtf = float(uses) / float(postings)  # the collection's mean cf/df
        self._scores: dict[str, dict[int, float]] = {}
        self._cf: dict[str, int] = {}

    def scores(self, term: str) -> dict[int, float]:
        """Chunk id -> the term's own bm25() (higher is better)."""
        got = self._scores.get(term)
        if got is None:
            rows = self.db.execute(
                "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{term}"',)
            )
            got = {int(r): -float(s) for r, s in rows}
            self._scores[term] = got
        return got

    def cf(self, term: str) -> int:
        """How many times the term occurs in the whole table (both columns)."""
        got = self._cf.get(term)
        if got is None:
            got = self._cf[term] = word_counts(self.db, [term])[term][1]
        return got

    def df(self, term: str) -> int:
        return len(self.scores(term))

    def idf(self, term: str) -> float:
        n = self.df(term)
        return max(1e-6, math.log((self.n - n + 0.5) / (n + 0.5)))

    def weighted(self, weights: dict[str, float]) -> dict[int, float]:
        total: dict[int, float] = {}
        for term, weight in weights.items():
            for chunk, score in self.scores(term).items():
                total[chunk] = total.get(chunk, 0.0) + weight * score
        return total


_STATS: dict[int, Stats] = {}


def stats_of(db: Conn) -> Stats:
    key = id(db)
    if key not in _STATS:
        _STATS[key] = Stats(db)
    return _STATS[key]


def terms_of(match: str) -> list[str]:
    return [part.strip('"') for part in match.split(" OR ")] if match else []


@dataclass
class Figures:
    ndcg: dict[str, float]
    mrr: dict[str, float]
    per_query: dict[str, dict[str, float]]
    top5: dict[str, int]
    pack: dict[str, int]


_STEP = ("proximity", "reweight")


def _unweighted(db: Conn, match: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    return list(ranked)


@contextmanager
def patched(rescore: Rescore) -> Generator[None]:
    """`Store.search` with `rescore` as its whole re-scoring step (`proximity(db, match, reweight(...))`).

    The two names are swapped in `fiskai_rag.store._store`, where `Store.search` looks them up; if that call
    moves, move these names with it.
    """
    saved = [getattr(store_module, name) for name in _STEP]

    def step(
        db: Conn, match: str, ranked: Sequence[tuple[int, float]], scores: object = None
    ) -> list[tuple[int, float]]:
        # `Store` may hand over pair scores its pair worker read; a variant computes its own.
        return rescore(db, match, ranked)

    for name, replacement in zip(_STEP, (step, _unweighted), strict=True):
        setattr(store_module, name, replacement)
    try:
        yield
    finally:
        for name, original in zip(_STEP, saved, strict=True):
            setattr(store_module, name, original)


def _suite(name: str):
    path = SETS[name]
    if path.suffix == ".yaml":
        return suite_from_mapping(yaml.safe_load(path.read_text()), name=path.name, base_dir=path.parent)
    return load_suite(path)


def run(stores: Path, rescore: Rescore, sets: Sequence[str], answers: bool) -> Figures:
    ndcg: dict[str, float] = {}
    mrr: dict[str, float] = {}
    per_query: dict[str, dict[str, float]] = {}
    top5: dict[str, int] = {}
    pack: dict[str, int] = {}
    with patched(rescore):
        for name in sets:
            suite = _suite(name)
            with open_store(stores / name, read_only=True) as store:
                report = evaluate(suite, lambda text: [h.citation for h in store.search(text, top_k=20).hits])
                ndcg[name] = report.ndcg
                mrr[name] = report.mrr
                per_query[name] = {r.query_id: r.ndcg for r in report.results}
                if answers and name == "influx":
                    for query in suite.queries:
                        check = check_answers(store, query, top=5, budget=1500)
                        for kind in (query.kind, "all"):
                            top5[kind] = top5.get(kind, 0) + (check.hit_rank is not None)
                            pack[kind] = pack.get(kind, 0) + check.in_pack
    return Figures(ndcg, mrr, per_query, top5, pack)


# ---------------------------------------------------------------- variants


def base(db: Conn, match: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Before: BM25, then proximity."""
    return proximity(db, match, ranked)


def product(db: Conn, match: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """The product's step: verbose questions re-weighted by burstiness (`_burstiness`), then proximity."""
    return proximity(db, match, reweight(db, match, ranked))


def sdm(db: Conn, match: str, unigram: dict[int, float], pool: int = 100) -> list[tuple[int, float]]:
    """The product's proximity re-scoring over the best `pool` chunks of a (re-weighted) unigram score."""
    ranked = sorted(unigram.items(), key=lambda kv: (-kv[1], kv[0]))[:pool]
    return proximity(db, match, [(c, -s) for c, s in ranked])


def weighted_query(
    weight: Callable[[Stats, str, list[str]], float], norm: str = "mean", min_terms: int = 2, pool_only: bool = False
) -> Rescore:
    """Each query word's per-use weight times its BM25 score, then the product's proximity features."""

    def rescore(db: Conn, match: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
        st = stats_of(db)
        terms = terms_of(match)
        if len(set(terms)) < max(2, min_terms):
            return proximity(db, match, ranked)
        raw = {t: weight(st, t, terms) for t in set(terms)}
        if norm == "mean":
            mean = sum(raw[t] for t in terms) / len(terms)
        elif norm in ("floor", "floor-once", "floor-distinct"):
            distinct = list(dict.fromkeys(terms))
            mean = (
                sum(raw[t] for t in distinct) / len(distinct)
                if norm == "floor-distinct"
                else sum(raw[t] for t in terms) / len(terms)
            )
            raw = {t: max(mean, w) for t, w in raw.items()}
            if norm == "floor-once":  # the gain is added once per word, not once per use
                weights_once: dict[str, float] = {}
                for t in terms:
                    weights_once[t] = weights_once.get(t, 0.0) + 1.0
                for t in weights_once:
                    weights_once[t] += raw[t] / mean - 1.0
                return sdm(db, match, st.weighted(weights_once))
        elif norm == "min":
            mean = min(raw.values())
        else:
            mean = 1.0
        weights: dict[str, float] = {}
        for t in terms:
            weights[t] = weights.get(t, 0.0) + raw[t] / mean
        scored = st.weighted(weights)
        if pool_only:
            scored = {c: scored.get(c, 0.0) for c, _ in ranked}
        return sdm(db, match, scored)

    return rescore


def burst(st: Stats, t: str, terms: list[str]) -> float:
    df = st.df(t)
    return st.cf(t) / df if df else 1.0


def ridf(st: Stats, t: str, terms: list[str]) -> float:
    df, cf = st.df(t), st.cf(t)
    if not df:
        return 1.0
    expected = st.n * (1 - math.exp(-cf / st.n))
    return math.log(expected / df)


def poisson_burst(st: Stats, t: str, terms: list[str]) -> float:
    """Observed cf/df over cf/df expected if the term's uses fell at random (Poisson): exp(residual idf)."""
    df, cf = st.df(t), st.cf(t)
    if not df:
        return 1.0
    return st.n * (1 - math.exp(-cf / st.n)) / df


def shrunk(m: float) -> Callable[[Stats, str, list[str]], float]:
    """cf/df with m pseudo-documents at the collection's mean cf/df: a term seen in one or two chunks has
    no evidence of burstiness either way, so it stays near the mean."""

    def weight(st: Stats, t: str, terms: list[str]) -> float:
        return (st.cf(t) + m * st.mean_avtf) / (st.df(t) + m)

    return weight


def shrunk_to_query(m: float) -> Callable[[Stats, str, list[str]], float]:
    """cf/df with m pseudo-documents at the query's own mean cf/df (no collection-wide scan needed)."""

    def weight(st: Stats, t: str, terms: list[str]) -> float:
        seen = [st.cf(u) / st.df(u) for u in set(terms) if st.df(u)]
        prior = sum(seen) / len(seen) if seen else 1.0
        return (st.cf(t) + m * prior) / (st.df(t) + m)

    return weight


def discount(m: float, power: float = 1.0) -> Callable[[Stats, str, list[str]], float]:
    """Discount only: a word less bursty than the collection's average word (shrunk cf/df below the mean)
    weighs (shrunk / mean)^power; every other word keeps its weight 1."""

    def weight(st: Stats, t: str, terms: list[str]) -> float:
        return min(1.0, ((st.cf(t) + m * st.mean_avtf) / (st.df(t) + m) / st.mean_avtf)) ** power

    return weight


def boost(m: float) -> Callable[[Stats, str, list[str]], float]:
    """Boost only, against the collection: max(1, shrunk cf/df / the collection's mean cf/df)."""

    def weight(st: Stats, t: str, terms: list[str]) -> float:
        return max(1.0, (st.cf(t) + m * st.mean_avtf) / (st.df(t) + m) / st.mean_avtf)

    return weight


def coordinated(inner: Rescore, by_idf: bool) -> Rescore:
    """`inner`'s ranking with each chunk's score times the share of the question's distinct words it has
    (Lucene's classic coord factor), or their share of the question's idf."""

    def rescore(db: Conn, match: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
        st = stats_of(db)
        words = list(dict.fromkeys(terms_of(match)))
        scored = inner(db, match, ranked)
        if len(words) < 2:
            return scored
        weight = {w: (st.idf(w) if by_idf else 1.0) for w in words}
        total = sum(weight.values())
        out = [(c, score * sum(weight[w] for w in words if c in st.scores(w)) / total) for c, score in scored]
        return sorted(out, key=lambda kv: (-kv[1], kv[0]))

    return rescore


def aspect_feedback(inner: Rescore, covering: bool, mix: float = 0.5, depth: int = 10) -> Rescore:
    """Re-weight the question's own words by how many of the top `depth` chunks (after `inner`) have
    them: weight = (1 - mix) x uses + mix x |q| x share among the feedback chunks' word hits. With
    `covering`, only the chunks having every rarer word (idf above the question's median) count, and with
    fewer than 3 of them there is no feedback (an aspect-preserving, self-gating form)."""

    def rescore(db: Conn, match: str, ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
        st = stats_of(db)
        terms = terms_of(match)
        words = list(dict.fromkeys(terms))
        first = inner(db, match, ranked)
        if len(words) < 2:
            return first
        top = [c for c, _ in first[:depth]]
        if covering:
            idfs = sorted(st.idf(w) for w in words)
            median = idfs[len(idfs) // 2]
            rare = [w for w in words if st.idf(w) >= median]
            top = [c for c in top if all(c in st.scores(w) for w in rare)]
            if len(top) < 3:
                return first
        hits = {w: sum(1 for c in top if c in st.scores(w)) for w in words}
        total = sum(hits.values()) or 1
        uses = {w: terms.count(w) for w in words}
        weights = {w: (1 - mix) * uses[w] + mix * len(terms) * hits[w] / total for w in words}
        scored = st.weighted(weights)
        return sdm(db, match, {c: scored.get(c, 0.0) for c, _ in ranked})

    return rescore


VARIANTS: dict[str, Rescore] = {
    "base": base,
    "product": product,
    "coord (share of distinct words)": coordinated(base, by_idf=False),
    "coord by idf": coordinated(base, by_idf=True),
    "product + coord": coordinated(product, by_idf=False),
    "product + coord by idf": coordinated(product, by_idf=True),
    "feedback on own words from top 10 (0.5)": aspect_feedback(base, covering=False),
    "feedback from top 10 covering every rarer word (0.5)": aspect_feedback(base, covering=True),
    "product + feedback covering every rarer word (0.5)": aspect_feedback(product, covering=True),
    "product + feedback covering every rarer word (0.3)": aspect_feedback(product, covering=True, mix=0.3),
    "weights 1 (exact re-sum)": weighted_query(lambda st, t, terms: 1.0),
    "burst cf/df": weighted_query(burst),
    "burst sqrt(cf/df)": weighted_query(lambda st, t, terms: math.sqrt(burst(st, t, terms))),
    "burst log(1+cf/df)": weighted_query(lambda st, t, terms: math.log1p(burst(st, t, terms))),
    "ridf 1+": weighted_query(lambda st, t, terms: 1 + ridf(st, t, terms)),
    "burst (cf/df)^0.75": weighted_query(lambda st, t, terms: burst(st, t, terms) ** 0.75),
    "burst cf/df, min-normalised": weighted_query(burst, norm="min"),
    "burst sqrt, min-normalised": weighted_query(lambda st, t, terms: math.sqrt(burst(st, t, terms)), norm="min"),
    "burst cf/df, raw (no norm)": weighted_query(burst, norm="none"),
    "poisson burst exp(ridf)": weighted_query(poisson_burst),
    "poisson burst sqrt": weighted_query(lambda st, t, terms: math.sqrt(poisson_burst(st, t, terms))),
    "burst cf/df, >=4 terms": weighted_query(burst, min_terms=4),
    "burst cf/df, >=5 terms": weighted_query(burst, min_terms=5),
    "burst cf/df, >=3 terms": weighted_query(burst, min_terms=3),
    "burst cf/df, >=6 terms": weighted_query(burst, min_terms=6),
    "burst cf/df, pool only": weighted_query(burst, pool_only=True),
    "burst cf/df, >=4 terms, pool only": weighted_query(burst, min_terms=4, pool_only=True),
    "burst sqrt, >=4 terms": weighted_query(lambda st, t, terms: math.sqrt(burst(st, t, terms)), min_terms=4),
    "poisson burst, >=4 terms": weighted_query(poisson_burst, min_terms=4),
    "discount m=1": weighted_query(discount(1), norm="none"),
    "discount m=1, >=4": weighted_query(discount(1), norm="none", min_terms=4),
    "discount m=3, >=4": weighted_query(discount(3), norm="none", min_terms=4),
    "discount^2 m=1, >=4": weighted_query(discount(1, 2), norm="none", min_terms=4),
    "discount m=1, >=4, mean-normalised": weighted_query(discount(1), min_terms=4),
    "shrunk m=1, never below the mean, >=4": weighted_query(shrunk(1), norm="floor", min_terms=4),
    "shrunk m=3, never below the mean, >=4": weighted_query(shrunk(3), norm="floor", min_terms=4),
    "shrunk m=2, never below the mean, >=4": weighted_query(shrunk(2), norm="floor", min_terms=4),
    "shrunk m=5, never below the mean, >=4": weighted_query(shrunk(5), norm="floor", min_terms=4),
    "shrunk m=10, never below the mean, >=4": weighted_query(shrunk(10), norm="floor", min_terms=4),
    "shrunk m=3, never below the mean": weighted_query(shrunk(3), norm="floor"),
    "shrunk m=3, never below the mean, >=5": weighted_query(shrunk(3), norm="floor", min_terms=5),
    "shrunk m=5, mean-normalised, >=4": weighted_query(shrunk(5), min_terms=4),
    "shrunk m=10, mean-normalised, >=4": weighted_query(shrunk(10), min_terms=4),
    "boost vs collection mean m=3, >=4": weighted_query(boost(3), norm="none", min_terms=4),
    "boost vs collection mean m=1, >=4": weighted_query(boost(1), norm="none", min_terms=4),
    "shrunk to query m=3, never below, >=4": weighted_query(shrunk_to_query(3), norm="floor", min_terms=4),
    "shrunk to query m=3, never below, every question": weighted_query(shrunk_to_query(3), norm="floor"),
    "shrunk to query m=3, never below, >=3": weighted_query(shrunk_to_query(3), norm="floor", min_terms=3),
    "shrunk to query m=3, never below, >=5": weighted_query(shrunk_to_query(3), norm="floor", min_terms=5),
    "shrunk to query m=3, never below, >=6": weighted_query(shrunk_to_query(3), norm="floor", min_terms=6),
    "shrunk to query m=3, never below, >=4, pool only": weighted_query(
        shrunk_to_query(3), norm="floor", min_terms=4, pool_only=True
    ),
    "shrunk to query m=1, never below, >=4": weighted_query(shrunk_to_query(1), norm="floor", min_terms=4),
    "shrunk to query m=5, never below, >=4": weighted_query(shrunk_to_query(5), norm="floor", min_terms=4),
    "shrunk to query m=3, never below, gain once per word, >=4": weighted_query(
        shrunk_to_query(3), norm="floor-once", min_terms=4
    ),
    "shrunk to query m=3, never below the distinct words' mean, >=4": weighted_query(
        shrunk_to_query(3), norm="floor-distinct", min_terms=4
    ),
    "poisson, never below the mean, >=4": weighted_query(poisson_burst, norm="floor", min_terms=4),
    "burst, never below the mean": weighted_query(burst, norm="floor"),
    "burst, never below the mean, >=4": weighted_query(burst, norm="floor", min_terms=4),
    "burst shrunk m=1": weighted_query(shrunk(1)),
    "burst shrunk m=3": weighted_query(shrunk(3)),
    "burst shrunk m=1, >=4": weighted_query(shrunk(1), min_terms=4),
    "burst shrunk m=3, >=4": weighted_query(shrunk(3), min_terms=4),
    "burst shrunk m=1, >=4, pool only": weighted_query(shrunk(1), min_terms=4, pool_only=True),
    "burst shrunk m=1, >=5": weighted_query(shrunk(1), min_terms=5),
    "burst shrunk m=1, >=3": weighted_query(shrunk(1), min_terms=3),
    "burst shrunk to query m=1, >=4": weighted_query(shrunk_to_query(1), min_terms=4),
    "burst shrunk to query m=1, >=4, pool": weighted_query(shrunk_to_query(1), min_terms=4, pool_only=True),
    "burst shrunk to query m=2, >=4, pool": weighted_query(shrunk_to_query(2), min_terms=4, pool_only=True),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", type=Path, required=True, help="folder with cisi/ cacm/ med/ influx/ stores")
    parser.add_argument("--only", nargs="*", help="variant names (default: all)")
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--no-answers", action="store_true", help="skip the influx top-5/pack checks (fast)")
    parser.add_argument("--per-query", help="print per-query nDCG of this set against the first variant")
    parser.add_argument("--changed", action="store_true", help="with --per-query: only queries that moved")
    parser.add_argument("--show-means", action="store_true")
    parser.add_argument("--mrr", action="store_true", help="also print MRR@10 per set")
    args = parser.parse_args(argv)
    names = args.only or list(VARIANTS)
    rows: dict[str, Figures] = {}
    header = " ".join(f"{s:>7}" for s in args.sets)
    if args.show_means:
        for name in args.sets:
            with open_store(args.stores / name, read_only=True) as store:
                st = stats_of(store._require_db())
                print(f"{name}: {st.n} chunks, mean cf/df {st.mean_avtf:.3f}")
    print(f"{'variant':40} {header}  top5 (c/i/k/p)      pack@1500")
    for name in names:
        fig = run(args.stores, VARIANTS[name], args.sets, not args.no_answers)
        rows[name] = fig
        cells = " ".join(f"{fig.ndcg[s]:7.4f}" for s in args.sets)
        kinds = ("conversational", "identifier", "keyword", "paraphrase")
        t5 = f"{fig.top5.get('all', 0):2} ({'/'.join(str(fig.top5.get(k, 0)) for k in kinds)})" if fig.top5 else ""
        pk = f"{fig.pack.get('all', 0):2} ({'/'.join(str(fig.pack.get(k, 0)) for k in kinds)})" if fig.pack else ""
        print(f"{name:40} {cells}  {t5:19} {pk}", flush=True)
        if args.mrr:
            print(f"{'  MRR@10':40} " + " ".join(f"{fig.mrr[s]:7.4f}" for s in args.sets), flush=True)
    if args.per_query:
        first = rows[names[0]].per_query[args.per_query]
        suite = _suite(args.per_query)
        texts = {q.id: q.text for q in suite.queries}
        for qid, value in first.items():
            values = [rows[n].per_query[args.per_query][qid] for n in names[1:]]
            if args.changed and all(abs(v - value) < 1e-9 for v in values):
                continue
            others = " ".join(f"{v:.3f}" for v in values)
            print(f"{qid:>4} {value:.3f} {others}  {texts[qid][:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
