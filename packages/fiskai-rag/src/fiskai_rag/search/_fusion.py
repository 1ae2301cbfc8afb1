"""Hybrid search's last ranking step: the lexical ranking fused with the query's nearest vectors.

Every vector source (an embeddings server, an in-process contextual or static model) joins by
Reciprocal Rank Fusion as the seed specifies: K=60 over the best `SEARCH_FANOUT` (50) of each side
(`rrf`). RRF fuses by rank, so the incomparable scales of BM25 and vector distance never need
normalising against each other. A static model's list alone enters at a small weight
(`STATIC_VECTOR_WEIGHT`), the one extra weighting kept: it holds on every shared collection.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "RRF_K",
    "SEARCH_FANOUT",
    "STATIC_VECTOR_WEIGHT",
    "fuse",
    "hybrid_tier",
    "names_only",
    "rrf",
    "static_model",
]

RRF_K = 60
SEARCH_FANOUT = 50
STATIC_VECTOR_WEIGHT = 0.05
"""RRF weight of the vector list when the vectors come from an in-process static model (the lexical list
weighs 1). The nearest chunk then adds 0.05/61, less than the gap between lexical ranks 1 and 3, so the
vectors break near-ties and add recall where the words find little (a synonym-only query), but never
override a lexical ranking: a static model alone ranks far below it. nDCG@10 CISI/CACM/MED (issue 16,
after proximity re-scoring): lexical 0.404/0.542/0.686; vector list alone 0.247/0.301/0.466 for a model
distilled here from multilingual-e5-small, 0.188/0.146/0.327 for the toy tokenlearn model. Hybrid by weight,
distilled e5: 1.0 -> 0.355/0.464/0.632, 0.2 -> 0.400/0.527/0.686, 0.1 -> 0.408/0.543/0.683,
0.05 -> 0.406/0.544/0.689, 0.02 -> 0.406 (CISI); toy: 1.0 -> 0.312/0.388/0.587, 0.1 -> 0.394/0.537/0.701,
0.05 -> 0.402/0.546/0.697, 0.02 -> 0.403/0.541/0.690. 0.05 is the largest weight at which neither model
loses more than noise (0.005) on any collection (before proximity, 0.1 was; a stronger lexical ranking
leaves the vectors less to add). An e5-small server's vectors, by contrast, gain at weight 1 (MED 0.772).
Re-measured for issue 31 (bench/knowledge_fusion.py, the toy model in-process): lexical 0.415/0.551/0.731,
weight 0.05 0.406/0.557/0.738, weight 1 0.318/0.392/0.608: still the better weight on every collection."""


def rrf(*rankings: Sequence[int], weights: Sequence[float] = ()) -> list[tuple[int, float]]:
    """Reciprocal Rank Fusion: list i adds `weights[i] / (RRF_K + rank + 1)`; ties go to the smaller id.

    A list without a weight counts 1.
    """
    scores: dict[int, float] = {}
    for index, ranking in enumerate(rankings):
        weight = weights[index] if index < len(weights) else 1.0
        for rank, chunk_id in enumerate(ranking):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (RRF_K + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


_NAME_MARK = re.compile(r"[_\-./=]")
_NAME_QUERY_WORDS = 4


def fuse(
    lexical: Sequence[tuple[int, float]], vectors: Sequence[tuple[int, float]], *, static: bool
) -> list[tuple[int, float]]:
    """The hybrid ranking: RRF (K=60) of the best `SEARCH_FANOUT` lexical chunks and nearest vectors.

    Each side counts 1, but a static model's vectors count `STATIC_VECTOR_WEIGHT`: they only break
    near-ties. Issue 31 replaced the score blend a contextual model or a server had (figures in the
    package README: MiniLM in-process, nDCG@10 lexical -> blend -> RRF).
    """
    lexical_ids = [chunk_id for chunk_id, _ in lexical[:SEARCH_FANOUT]]
    vector_ids = [chunk_id for chunk_id, _ in vectors[:SEARCH_FANOUT]]
    return rrf(lexical_ids, vector_ids, weights=(1.0, STATIC_VECTOR_WEIGHT if static else 1.0))


def static_model(embedder: object) -> bool:
    """Whether `embedder` is a static in-process model (its vectors enter RRF at `STATIC_VECTOR_WEIGHT`).

    A contextual model or a server (`contextual` true or absent) counts fully.
    """
    return getattr(embedder, "contextual", True) is False


def hybrid_tier(embedder: object, dimension: int | None = None) -> str:
    """The tier line of a hybrid search with `embedder`, worded as the Go original's."""
    model = getattr(embedder, "model", "?")
    return f"hybrid (FTS5 + vectors, RRF) - model={model}" + ("" if dimension is None else f" dim={dimension}")


def names_only(query: str) -> bool:
    """Whether `query` is a few names (an option, flag, variable or key) rather than a sentence.

    At most four words, one of them shaped like a name: holding `_ - . / =` or in capitals
    (`INFLUXDB_HTTP_BIND_ADDRESS`, `hinted-handoff max-age`, `chronograf --port`). A contextual model
    reads such a query as noise, so its vectors stay out. Measured with all-MiniLM-L6-v2 on influxdata
    tuning (11 of 44 questions are such; blend -> blend except these): answer in the top 5 0.682 ->
    0.705 (identifier 0.909 -> 1.000), nDCG@10 0.642 -> 0.633; the IR collections, whose questions are
    mostly sentences: CISI 0.459 -> 0.455, CACM 0.570 -> 0.570, MED 0.807 -> 0.805.
    """
    words = query.split()
    return len(words) <= _NAME_QUERY_WORDS and any(
        _NAME_MARK.search(word.strip("`'\"?,")) or (word.isupper() and len(word) >= 4) for word in words
    )
