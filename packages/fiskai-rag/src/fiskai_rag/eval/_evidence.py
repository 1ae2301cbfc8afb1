"""Answer-bearing checks for evaluation: was the evidence delivered, not only the right URI?

For one judged query, `check_evidence` builds the pack an agent would get and checks two maps from an
expected URI (a relpath: any chunk of that document; or a citation: that chunk) to case-insensitive text
fragments:

- `expected_excerpts`: the URI must be delivered within the first `k` items, and the excerpts delivered
  for it must contain every fragment;
- `expected_reads`: `Store.show` of the delivered citation(s) for that URI (the follow-up read an agent
  would make) must contain every fragment.

High recall with missing evidence still fails. Reads are offline; nothing is fetched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fiskai_rag.errors import CitationError
from fiskai_rag.pack._select import PackItem
from fiskai_rag.store._citation import Citation
from fiskai_rag.store._store import Store

__all__ = ["EvidenceCheck", "check_evidence"]


@dataclass(frozen=True, slots=True)
class EvidenceCheck:
    """The outcome of one query's answer-bearing checks."""

    citations: tuple[str, ...]
    """What the pack delivered, in order."""
    failures: tuple[str, ...]
    """One sentence per unmet expectation; empty when the query passes."""

    @property
    def passed(self) -> bool:
        """Whether every expected excerpt and read was found."""
        return not self.failures


def _matches(citation: str, uri: str) -> bool:
    parsed = Citation.try_parse(citation)
    document = parsed.path if parsed is not None else citation
    target = citation if Citation.try_parse(uri) is not None else document
    return target == uri or target.endswith("/" + uri)


def _delivered(items: Sequence[PackItem], uri: str, k: int) -> list[PackItem]:
    return [item for item in items[:k] if _matches(item.citation, uri)]


def _missing(text: str, fragments: Sequence[str]) -> list[str]:
    folded = text.casefold()
    return [fragment for fragment in fragments if fragment.casefold() not in folded]


def check_evidence(
    store: Store,
    query: str,
    *,
    budget: int,
    expected_excerpts: Mapping[str, Sequence[str]] = {},
    expected_reads: Mapping[str, Sequence[str]] = {},
    k: int = 10,
) -> EvidenceCheck:
    """Build the pack for `query` and check the expected excerpts and reads against it.

    Args:
        store: An open store (a reader is enough).
        query: The judged query text.
        budget: The pack budget, as the agent would use (`max_injected_tokens`).
        expected_excerpts: URI -> fragments that its delivered excerpts must contain.
        expected_reads: URI -> fragments that `show` of its delivered citation must contain.
        k: Only the first k delivered items count.

    Returns:
        The delivered citations and the failures (empty when everything was found).
    """
    pack = store.context(query, budget=budget)
    failures: list[str] = []
    for uri, fragments in expected_excerpts.items():
        delivered = _delivered(pack.items, uri, k)
        if not delivered:
            failures.append(f"{uri}: not delivered within the first {k} items (status {pack.status})")
            continue
        missing = _missing("\n".join(item.excerpt for item in delivered), fragments)
        if missing:
            failures.append(f"{uri}: delivered excerpt lacks {missing}")
    for uri, fragments in expected_reads.items():
        delivered = _delivered(pack.items, uri, k)
        if not delivered:
            failures.append(f"{uri}: not delivered within the first {k} items, so it cannot be read")
            continue
        texts: list[str] = []
        for item in delivered:
            try:
                texts.append(store.show(item.citation).content)
            except CitationError as err:
                failures.append(f"{item.citation}: cannot be read back ({err})")
        missing = _missing("\n".join(texts), fragments)
        if texts and missing:
            failures.append(f"{uri}: reading {', '.join(i.citation for i in delivered)} lacks {missing}")
    return EvidenceCheck(pack.citations, tuple(failures))
