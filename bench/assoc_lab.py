"""Experiment harness: vocabulary bridging from word associations the corpus itself teaches (issue 16).

A variant replaces `Store._rescored` (the BM25 pool, burstiness re-weighting, term proximity); the rest
of `Store.search` (named versions, folded copies, the per-document cap, packs seeded from search) is the
product's own code, so a variant's figures are what `fiskai knowledge eval` would print. `product` is
the shipped step; `exact re-sum (alpha 0)` rebuilds it from per-word `bm25()` scores and must read the
same (it does), which proves the expansion variants differ only by what they add.

Associations: each stemmed word's chunk set comes from the index's own `fts5vocab` `instance` table
(what FTS5 indexed; content and breadcrumb apart). For a question word w (chunks D_w) and a word v,
with c = |D_w & D_v| chunks holding both (at least 3) and N chunks in all:

- `pmi` log(c N / (df_w df_v)); `npmi` the same over -log(c / N); `dice` 2c / (df_w + df_v);
- `llr` Dunning's G2 of the 2x2 table (positively associated words only);
- `head` a heading -> body translation: p(v in the breadcrumb | w in the body) / p(v in a breadcrumb).

Two ways to use them, on questions of `VERBOSE_TERMS` or more content words:

- expansion (`{method} a{alpha} k3`): each question word's best 3 associates join the query, each
  weighing alpha x (its association / the word's best) of a word use, in the pool's BM25 and after;
  `weak` only for the words with idf below the question's median, `pool` only re-scoring the pool;
- re-rank (`rerank`, `crerank`, `robust`, `sampled`, `local`): the product's ranking, then its top 30
  re-scored: each question word a chunk lacks earns beta x idf(word) x the best association among the
  word's top k associates the chunk has. `crerank` and later: associates exclude function and request
  words and bare numbers; `sampled N`: associates counted from at most N chunks of D_w (evenly spaced
  by id); `local`: associations counted within the product's best 100 chunks only.

Build the stores once (`fiskai knowledge eval SUITE --store DIR/{cisi,cacm,med,influx}`), then

  uv run python bench/assoc_lab.py --stores DIR --like crerank            # a family, with `product`
  uv run python bench/assoc_lab.py --stores DIR --only product "robust llr b0.2 k10" --per-query influx
  uv run python bench/assoc_lab.py --stores DIR --assoc port default --method llr   # look at associates

Never point it at the held-out half (`influxdata-heldout.yaml`).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from lexical_lab import SETS  # the same four sets over the same stores (bench/ is on sys.path)

from fiskai_rag import open_store
from fiskai_rag.eval import check_answers, evaluate, load_suite, suite_from_mapping
from fiskai_rag.search._burstiness import VERBOSE_TERMS, term_weights
from fiskai_rag.search._proximity import RESCORE_POOL, proximity
from fiskai_rag.search._query import is_filler
from fiskai_rag.store._db import Conn
from fiskai_rag.store._store import Store

_QUOTED = re.compile(r'"([^"]+)"')


class Corpus:
    """Postings per stemmed word (any column, body, heading) and per-word bm25() scores, cached."""

    def __init__(self, db: Conn) -> None:
        self.db = db
        self.n = int(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0])
        ro = int(db.execute("PRAGMA query_only").fetchall()[0][0])
        db.execute("PRAGMA query_only=0")
        if not db.execute("SELECT 1 FROM temp.sqlite_master WHERE name='lab_inst'").fetchall():
            db.execute("CREATE VIRTUAL TABLE temp.lab_inst USING fts5vocab(main, chunks_fts, instance)")
        db.execute(f"PRAGMA query_only={ro}")
        body: dict[str, set[int]] = {}
        head: dict[str, set[int]] = {}
        for term, doc, col in db.execute("SELECT term, doc, col FROM temp.lab_inst"):
            (body if col == "content" else head).setdefault(term, set()).add(int(doc))
        self.body = body
        self.head = head
        self.any: dict[str, set[int]] = {t: body.get(t, set()) | head.get(t, set()) for t in set(body) | set(head)}
        self.chunk_terms: dict[int, set[str]] = {}
        self.chunk_head: dict[int, set[str]] = {}
        for t, docs in self.any.items():
            for d in docs:
                self.chunk_terms.setdefault(d, set()).add(t)
        for t, docs in head.items():
            for d in docs:
                self.chunk_head.setdefault(d, set()).add(t)
        self._scores: dict[str, dict[int, float]] = {}
        self._assoc: dict[tuple[str, str], list[tuple[str, float]]] = {}
        self.content_only = False
        self.sample = 0
        self._tok: Any = db.fts5_tokenizer("porter", ["unicode61"])  # type: ignore[attr-defined]

    def stem(self, word: str) -> str:
        toks = self._tok(word.encode(), 4, None)
        return toks[0][2] if toks else word

    def scores(self, stem: str) -> dict[int, float]:
        got = self._scores.get(stem)
        if got is None:
            rows = self.db.execute(
                "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{stem}"',)
            )
            got = self._scores[stem] = {int(r): -float(s) for r, s in rows}
        return got

    def idf(self, stem: str) -> float:
        df = len(self.any.get(stem, ()))
        return max(1e-6, math.log((self.n - df + 0.5) / (df + 0.5)))

    def associates(self, stem: str, method: str, min_co: int, top: int) -> list[tuple[str, float]]:
        key = (stem, f"{method}/{min_co}/{top}/{self.content_only}/{self.sample}")
        got = self._assoc.get(key)
        if got is not None:
            return got
        if method == "head":
            source = self.body.get(stem, set())
            counts: Counter[str] = Counter()
            for d in source:
                counts.update(self.chunk_head.get(d, ()))
            n_head = len(self.chunk_head)
            out: list[tuple[str, float]] = []
            for v, c in counts.items():
                if v == stem or c < min_co:
                    continue
                ratio = (c / len(source)) / (len(self.head[v]) / n_head)
                out.append((v, math.log(ratio)))
        else:
            source = self.any.get(stem, set())
            counts = Counter()
            sample = sorted(source)
            if self.sample and len(sample) > self.sample:  # evenly spaced by rowid, scaled back up
                step = len(sample) / self.sample
                sample = [sample[int(i * step)] for i in range(self.sample)]
            scale = len(source) / len(sample) if sample else 1.0
            for d in sample:
                counts.update(self.chunk_terms[d])
            if scale != 1.0:
                counts = Counter({v: max(1, round(c * scale)) for v, c in counts.items()})
            out = []
            for v, c in counts.items():
                if v == stem or c < min_co:
                    continue
                pmi = math.log(c * self.n / (len(source) * len(self.any[v])))
                if method == "npmi":
                    pmi = pmi / -math.log(c / self.n)
                elif method == "dice":
                    pmi = 2 * c / (len(source) + len(self.any[v])) if pmi > 0 else 0.0
                elif method == "llr":  # Dunning's G2 of the 2x2 table, positive association only
                    pmi = _g2(c, len(source), len(self.any[v]), self.n) if pmi > 0 else 0.0
                out.append((v, pmi))
        out = [(v, s) for v, s in out if s > 0 and (not self.content_only or _content(v))]
        out.sort(key=lambda kv: -kv[1])
        got = self._assoc[key] = out[:top]
        return got


def _g2(k11: int, a: int, b: int, n: int) -> float:
    k12, k21 = a - k11, b - k11
    k22 = n - a - b + k11

    def h(*ks: int) -> float:
        tot = sum(ks)
        return sum(k * math.log(k / tot) for k in ks if k > 0)

    return 2 * (h(k11, k12, k21, k22) - h(k11 + k12, k21 + k22) - h(k11 + k21, k12 + k22))


def _content(stem: str) -> bool:
    """An associate worth crediting: not a function or request word, not a bare number."""
    return len(stem) >= 2 and not stem.isdigit() and not is_filler(stem)


_CORPORA: dict[int, Corpus] = {}


def corpus_of(db: Conn) -> Corpus:
    if id(db) not in _CORPORA:
        _CORPORA[id(db)] = Corpus(db)
    return _CORPORA[id(db)]


Rescore = Callable[[Conn, str], list[tuple[int, float]]]


@dataclass(frozen=True)
class Expansion:
    method: str = "pmi"  # pmi | npmi | head
    alpha: float = 0.0  # weight of an associate relative to a query word use
    per_word: int = 3  # associates per question word
    min_co: int = 3  # co-occurrences needed
    min_terms: int = VERBOSE_TERMS  # distinct content words for a question to be expanded
    weak_only: bool = False  # expand only words with idf below the question's median
    scaled: bool = True  # associate weight scaled by its association / the word's best association
    rerank_only: bool = False  # associates only re-score the product's pool (no new candidates)
    max_df_share: float = 1.0  # skip associates in more than this share of chunks


def rescorer(x: Expansion) -> Rescore:
    def rescore(db: Conn, match: str) -> list[tuple[int, float]]:
        co = corpus_of(db)
        co.content_only = False
        terms = _QUOTED.findall(match)
        distinct = list(dict.fromkeys(terms))
        if len(distinct) >= VERBOSE_TERMS:
            weights = term_weights(db, terms)
        else:
            weights = dict(Counter(terms))
        stems = {t: co.stem(t) for t in distinct}
        uses = Counter(terms)
        extra: dict[str, float] = {}
        if x.alpha > 0 and len(distinct) >= x.min_terms:
            own = set(stems.values())
            idfs = sorted(co.idf(s) for s in own)
            median = idfs[len(idfs) // 2]
            for t in distinct:
                s = stems[t]
                if x.weak_only and co.idf(s) >= median:
                    continue
                assoc = [
                    (v, a)
                    for v, a in co.associates(s, x.method, x.min_co, 50)
                    if v not in own and len(co.any.get(v, ())) <= x.max_df_share * co.n
                ][: x.per_word]
                if not assoc:
                    continue
                best = assoc[0][1]
                for v, a in assoc:
                    extra[v] = extra.get(v, 0.0) + x.alpha * (a / best if x.scaled else 1.0)

        def summed(w: dict[str, float], over: dict[int, float] | None) -> dict[int, float]:
            total: dict[int, float] = dict.fromkeys(over, 0.0) if over is not None else {}
            for t, wt in w.items():
                for c, sc in co.scores(t).items():
                    if over is None or c in total:
                        total[c] = total.get(c, 0.0) + wt * sc
            return total

        plain_w = {t: float(n) for t, n in uses.items()}
        first = summed(plain_w if x.rerank_only else {**plain_w, **extra}, None)
        pool = dict(sorted(first.items(), key=lambda kv: (-kv[1], kv[0]))[:RESCORE_POOL])
        final_w = dict(weights)
        for v, w in extra.items():
            final_w[v] = final_w.get(v, 0.0) + w
        final = summed(final_w, pool)
        ranked = sorted(final.items(), key=lambda kv: (-kv[1], kv[0]))
        return proximity(db, match, [(c, -s) for c, s in ranked])

    return rescore


def translation_rerank(
    method: str,
    beta: float,
    depth: int,
    k: int = 5,
    min_terms: int = VERBOSE_TERMS,
    content: bool = False,
    sample: int = 0,
    min_df: int = 0,
) -> Rescore:
    """The product's ranking, then its top `depth` re-scored: each question word a chunk lacks earns
    beta x idf(word) x the best association (relative to the word's strongest) among its top `k`
    associates the chunk has (a translation model's credit for a word the chunk says otherwise)."""

    def rescore(db: Conn, match: str) -> list[tuple[int, float]]:
        ranked = product(db, match)
        co = corpus_of(db)
        co.content_only = content
        co.sample = sample
        distinct = list(dict.fromkeys(_QUOTED.findall(match)))
        if len(distinct) < min_terms or not ranked:
            return ranked
        stems = {co.stem(t) for t in distinct}
        assoc: dict[str, dict[str, float]] = {}
        for s in stems:
            if len(co.any.get(s, ())) < min_df:  # no associates stored for rarer words
                continue
            got = [(v, a) for v, a in co.associates(s, method, 3, 50) if v not in stems][:k]
            if got:
                best = got[0][1]
                assoc[s] = {v: a / best for v, a in got}
        return _with_bonus(ranked, depth, co, assoc, beta)

    return rescore


def _with_bonus(
    ranked: Sequence[tuple[int, float]], depth: int, co: Any, assoc: dict[str, dict[str, float]], beta: float
) -> list[tuple[int, float]]:
    """The head of `ranked` re-sorted after each question word a chunk lacks earns beta x idf x its best
    associate the chunk has; the tail keeps its order."""
    head: list[tuple[int, float]] = []
    for c, score in ranked[:depth]:
        have = co.chunk_terms.get(c, set())
        bonus = 0.0
        for s, table in assoc.items():
            if s in have:
                continue
            bonus += beta * co.idf(s) * max((a for v, a in table.items() if v in have), default=0.0)
        head.append((c, score + bonus))
    head.sort(key=lambda kv: (-kv[1], kv[0]))
    return head + list(ranked[depth:])


def local_rerank(beta: float, depth: int, k: int = 10, pool: int = RESCORE_POOL) -> Rescore:
    """As `translation_rerank` with LLR associations counted within the product's best `pool` chunks only
    (local context: no corpus-wide statistics, so affordable at query time from the pool's own text)."""

    def rescore(db: Conn, match: str) -> list[tuple[int, float]]:
        ranked = product(db, match)
        co = corpus_of(db)
        distinct = list(dict.fromkeys(_QUOTED.findall(match)))
        if len(distinct) < VERBOSE_TERMS or not ranked:
            return ranked
        stems = {co.stem(t) for t in distinct}
        ids = [c for c, _ in ranked[:pool]]
        sets = [co.chunk_terms.get(c, set()) for c in ids]
        n = len(sets)
        df: Counter[str] = Counter()
        for t in sets:
            df.update(v for v in t if _content(v))
        assoc: dict[str, dict[str, float]] = {}
        for s in stems:
            with_s = [t for t in sets if s in t]
            if not with_s or len(with_s) == n:
                continue
            co_counts: Counter[str] = Counter()
            for t in with_s:
                co_counts.update(v for v in t if v not in stems and _content(v))
            got: list[tuple[str, float]] = []
            for v, c in co_counts.items():
                if c < 3 or c * n <= len(with_s) * df[v]:
                    continue
                got.append((v, _g2(c, len(with_s), df[v], n)))
            got.sort(key=lambda kv: -kv[1])
            got = got[:k]
            if got:
                best = got[0][1]
                assoc[s] = {v: a / best for v, a in got}
        return _with_bonus(ranked, depth, co, assoc, beta)

    return rescore


def product(db: Conn, match: str) -> list[tuple[int, float]]:
    return ORIGINAL(STORE_SELF[0], db, match)


ORIGINAL = Store._rescored
STORE_SELF: list[Any] = [None]


def _suite(name: str) -> Any:
    path = SETS[name]
    if path.suffix == ".yaml":
        return suite_from_mapping(yaml.safe_load(path.read_text()), name=path.name, base_dir=path.parent)
    return load_suite(path)


@dataclass
class Figures:
    ndcg: dict[str, float]
    mrr: dict[str, float]
    top5: Counter[str]
    pack: Counter[str]
    per_query: dict[str, dict[str, float]]


def run(stores: Path, rescore: Rescore, sets: Sequence[str]) -> Figures:
    fig = Figures({}, {}, Counter(), Counter(), {})

    def patched(self: Store, db: Conn, match: str) -> list[tuple[int, float]]:
        STORE_SELF[0] = self
        return rescore(db, match)

    Store._rescored = patched
    try:
        for name in sets:
            suite = _suite(name)
            with open_store(stores / name, read_only=True) as store:
                report = evaluate(suite, lambda text: [h.citation for h in store.search(text, top_k=20).hits])
                fig.ndcg[name], fig.mrr[name] = report.ndcg, report.mrr
                fig.per_query[name] = {r.query_id: r.ndcg for r in report.results}
                if name == "influx":
                    for query in suite.queries:
                        check = check_answers(store, query, top=5, budget=1500)
                        for kind in (query.kind, "all"):
                            fig.top5[kind] += check.hit_rank is not None
                            fig.pack[kind] += check.in_pack
    finally:
        Store._rescored = ORIGINAL
    return fig


def variants() -> dict[str, Rescore]:
    out: dict[str, Rescore] = {"product": product, "exact re-sum (alpha 0)": rescorer(Expansion())}
    for method in ("dice", "head", "llr"):
        for beta in (0.1, 0.2, 0.4):
            for depth in (30, 50):
                out[f"rerank {method} b{beta} top{depth}"] = translation_rerank(method, beta, depth)
            for k in (3, 5, 10):
                out[f"crerank {method} b{beta} k{k}"] = translation_rerank(method, beta, 30, k=k, content=True)
    for beta in (0.15, 0.2, 0.3):
        for k in (8, 10, 15):
            out[f"robust llr b{beta} k{k}"] = translation_rerank("llr", beta, 30, k=k, content=True)
    out["robust llr b0.2 k10 top50"] = translation_rerank("llr", 0.2, 50, k=10, content=True)
    out["robust llr b0.2 k10 top15"] = translation_rerank("llr", 0.2, 15, k=10, content=True)
    out["robust llr b0.2 k10 every question"] = translation_rerank("llr", 0.2, 30, k=10, min_terms=1, content=True)
    out["robust llr b0.2 k10 3+ words"] = translation_rerank("llr", 0.2, 30, k=10, min_terms=3, content=True)
    for beta in (0.1, 0.2, 0.3):
        for k in (5, 10):
            out[f"local llr b{beta} k{k}"] = local_rerank(beta, 30, k=k)
    for min_df in (20, 50, 200):
        out[f"mindf {min_df} llr b0.2 k10"] = translation_rerank("llr", 0.2, 30, k=10, content=True, min_df=min_df)
    for sample in (32, 64, 128, 256):
        out[f"sampled {sample} llr b0.2 k10"] = translation_rerank("llr", 0.2, 30, k=10, content=True, sample=sample)
    for method in ("dice", "llr", "head", "npmi"):
        for alpha in (0.1, 0.2, 0.3):
            out[f"{method} a{alpha} k3"] = rescorer(Expansion(method=method, alpha=alpha))
            out[f"{method} a{alpha} k3 weak"] = rescorer(Expansion(method=method, alpha=alpha, weak_only=True))
            out[f"{method} a{alpha} k3 pool"] = rescorer(Expansion(method=method, alpha=alpha, rerank_only=True))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", type=Path, required=True)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--like", help="variants whose name contains this (and `product`)")
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--assoc", nargs="*", help="print associates of these words (influx store) and exit")
    parser.add_argument("--method", default="llr", help="with --assoc: pmi, npmi, dice, llr or head")
    parser.add_argument("--per-query", help="per-query nDCG of this set, variants against the first")
    args = parser.parse_args(argv)
    if args.assoc:
        with open_store(args.stores / "influx", read_only=True) as store:
            co = corpus_of(store._require_db())
            for w in args.assoc:
                s = co.stem(w)
                a = co.associates(s, args.method, 3, 8)
                print(w, s, len(co.any.get(s, ())), " ".join(f"{v}:{x:.2f}" for v, x in a))
        return 0
    table = variants()
    names = args.only or list(table)
    if args.like:
        names = ["product", *(n for n in table if args.like in n)]
    kinds = ("conversational", "identifier", "keyword", "paraphrase")
    print(f"{'variant':32} " + " ".join(f"{s:>13}" for s in args.sets) + "  top5 all (c/i/k/p)  pack")
    rows: dict[str, Figures] = {}
    for name in names:
        fig = rows[name] = run(args.stores, table[name], args.sets)
        cells = " ".join(f"{fig.ndcg[s]:.3f}/{fig.mrr[s]:.3f}" for s in args.sets)
        t5 = f"{fig.top5['all']:2} ({'/'.join(str(fig.top5[k]) for k in kinds)})" if fig.top5 else ""
        pk = f"{fig.pack['all']:2} ({'/'.join(str(fig.pack[k]) for k in kinds)})" if fig.pack else ""
        print(f"{name:32} {cells}  {t5:19} {pk}", flush=True)
    if args.per_query:
        suite = _suite(args.per_query)
        texts = {q.id: q.text for q in suite.queries}
        first = rows[names[0]].per_query[args.per_query]
        for qid, value in first.items():
            vals = [rows[n].per_query[args.per_query][qid] for n in names[1:]]
            if all(abs(v - value) < 1e-9 for v in vals):
                continue
            print(f"{qid:>5} {value:.3f} " + " ".join(f"{v:.3f}" for v in vals) + f"  {texts[qid][:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
