"""`knowledge_search`'s Go-agent result shape (`harness.knowledge.result_format: json`).

`{"tier": ..., "status": "ok"|"index_not_built"|"index_empty", "note"?: ..., "results": [{"citation",
"section"?, "content"}]}`, `results` always an array. The budget is the Go agent's: `max_injected_tokens *
4` bytes of content, hits added in order while they fit, the first always (even alone over it).
"""

from __future__ import annotations

import json
from typing import NamedTuple

from fiskai_core.knowledge import KnowledgeResult

from ._citations import CitationRewriter

__all__ = ["DEGRADED_NOTE", "GoJson", "go_json"]

DEGRADED_NOTE = "the embeddings server was unreachable, so this query used the lexical tier only"
_NOT_BUILT_NOTE = "the knowledge index has not been built yet; run: fiskai knowledge index"
_EMPTY_NOTE = "the knowledge index is empty or the query had no searchable terms"
_NOT_BUILT_TIER = "lexical (FTS5) - no embeddings configured"


class GoJson(NamedTuple):
    """The result text and the citations it delivered."""

    text: str
    citations: tuple[str, ...]


def go_json(result: KnowledgeResult | None, *, budget_chars: int, cite: CitationRewriter | None = None) -> GoJson:
    """The Go agent's JSON for `result` (None: no index file, so `index_not_built`).

    With citation rules (`cite`), each result's `citation` is rewritten and `index_ref`, `path` and `ref` follow
    it (the 0.0.6 fields); without, the entries keep the plain shape prompts were written against.
    """
    if result is None:
        body: dict[str, object] = {"tier": _NOT_BUILT_TIER, "status": "index_not_built", "note": _NOT_BUILT_NOTE}
        body["results"] = []
        return GoJson(json.dumps(body, ensure_ascii=False), ())
    body = {"tier": result.tier, "status": result.status}
    if result.status == "index_not_built":
        body["note"] = _NOT_BUILT_NOTE  # overrides the degraded note, as in the Go agent
    elif result.status == "index_empty":
        body["note"] = _EMPTY_NOTE
    elif result.degraded is not None:
        body["note"] = DEGRADED_NOTE
    results: list[dict[str, str]] = []
    used = 0
    for hit in result.hits:
        size = len(hit.content.encode())
        if results and used + size > budget_chars:
            break
        entry = cite.cite_ref(hit.citation, hit.heading_path) if cite is not None and cite.has_rules else {}
        entry = {"citation": hit.citation, **entry}
        if hit.heading_path:
            entry["section"] = hit.heading_path
        entry["content"] = hit.content
        results.append(entry)
        used += size
    body["results"] = results
    delivered = tuple(entry.get("index_ref", entry["citation"]) for entry in results)  # raw refs, as a pack's
    return GoJson(json.dumps(body, ensure_ascii=False), delivered)
