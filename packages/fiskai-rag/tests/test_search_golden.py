"""Every hit of every search on the shared collections, pinned: citation, exact score, copies, section.

`data/search-golden.json` holds a digest of each search's hits and each pack's text, written by
`collect` at 0237cbf, before search was rewritten as a list of named stages (`search/_stages.py`).
With every stage on, the hits must stay those of that single search method to the last bit of each
score: IR collections lexical and hybrid (a static model's weighted RRF and a contextual model's or a
server's full-weight RRF, with hashed vectors; the latter re-pinned when issue 31 replaced the blend), the influxdata questions at two depths, and context packs, which start from search.

A ranking change that is meant shows up here as the changed keys; regenerate the file with
`uv run python packages/fiskai-rag/tests/test_search_golden.py` once the change is measured and kept.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from fiskai_rag import Embedder, open_store
from fiskai_rag.eval import load_trec_suite
from fiskai_rag.testing import FakeEmbedder

pytestmark = pytest.mark.ranking

GOLDEN = Path(__file__).parent / "data" / "search-golden.json"
EVALS = Path(__file__).resolve().parents[1] / "evals"
_DAY = dt.date(2026, 12, 1)


class _StaticFake(FakeEmbedder):
    """Hashed vectors fused as a static model's are (RRF at a small weight) rather than at full weight."""

    contextual = False


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:20]


def _searches(
    out: dict[str, str],
    name: str,
    store_dir: Path,
    corpus: Path,
    queries: list[str],
    ks: tuple[int, ...],
    *,
    embedder: Embedder | None = None,
    packs: bool = False,
) -> None:
    with open_store(store_dir, read_only=False, embedder=embedder) as writer:
        writer.index([str(corpus)])
    with open_store(store_dir, read_only=True, embedder=embedder) as store:
        for query in queries:
            key = hashlib.sha256(query.encode()).hexdigest()[:12]
            for k in ks:
                hits = [
                    [h.citation, repr(h.score), list(h.also), h.also_total, h.heading_path]
                    for h in store.search(query, top_k=k).hits
                ]
                out[f"{name}|{k}|{key}"] = _digest(hits)
            if packs:
                out[f"{name}|pack|{key}"] = _digest(store.context(query, budget=1500, today=_DAY).text)


def collect(shared: Path, work: Path) -> dict[str, str]:
    """Each search's and pack's digest by `collection|top_k|query digest` (only APIs 0237cbf had)."""
    out: dict[str, str] = {}
    for name in ("cisi", "cacm", "med"):
        queries = [q.text for q in load_trec_suite(shared / "ir" / name).queries]
        _searches(out, name, work / name, shared / "ir" / name / "corpus", queries, (10,), packs=name == "cisi")
    cisi = [q.text for q in load_trec_suite(shared / "ir" / "cisi").queries]
    corpus = shared / "ir" / "cisi" / "corpus"
    _searches(out, "cisi-contextual", work / "contextual", corpus, cisi, (10,), embedder=FakeEmbedder(dimension=64))
    static = _StaticFake(dimension=64, model="static-fake")
    _searches(out, "cisi-rrf", work / "rrf", corpus, cisi, (10,), embedder=static)
    questions = [
        str(q["query"])
        for half in ("tuning", "heldout")
        for q in cast("dict[str, Any]", yaml.safe_load((EVALS / f"influxdata-{half}.yaml").read_text()))["queries"]
    ]
    influx = shared / "corpus" / "influxdata-docs"
    _searches(out, "influx", work / "influx", influx, questions, (5, 20), packs=True)
    return out


def test_every_search_and_pack_on_the_shared_collections_is_the_pinned_one(
    shared_fixtures: Path, tmp_path: Path
) -> None:
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))

    got = collect(shared_fixtures, tmp_path)

    assert len(got) == len(expected)
    changed = sorted(key for key in expected if got.get(key) != expected[key])
    assert not changed, f"{len(changed)} of {len(expected)} searches or packs changed, e.g. {changed[:5]}"


if __name__ == "__main__":
    # Regenerate the golden file: python test_search_golden.py [SHARED_FIXTURES] [WORK_DIR]
    import tempfile

    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[4] / "shared" / "fixtures"
    with tempfile.TemporaryDirectory() as scratch:
        digests = collect(shared, Path(sys.argv[2]) if len(sys.argv) > 2 else Path(scratch))
    GOLDEN.write_text(json.dumps(digests, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(digests)} digests written to {GOLDEN}")  # noqa: T201
