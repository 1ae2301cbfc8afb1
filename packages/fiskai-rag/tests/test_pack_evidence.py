from __future__ import annotations

from fiskai_rag import Store
from fiskai_rag.eval import check_evidence


def test_delivered_evidence_passes(store: Store) -> None:
    check = check_evidence(
        store,
        "retention limits",
        budget=1200,
        expected_excerpts={"corpus/design/retention.md": ["never block PRODUCERS"]},
        expected_reads={"corpus/design/retention.md#1": ["Retention policy > Limits"]},
    )

    assert check.passed, check.failures
    assert "corpus/design/retention.md#1" in check.citations


def test_a_delivered_uri_without_its_evidence_still_fails(store: Store) -> None:
    check = check_evidence(
        store,
        "retention limits",
        budget=1200,
        expected_excerpts={"corpus/design/retention.md": ["ninety days"]},
        expected_reads={"corpus/design/retention.md#1": ["hourly sweep"]},
    )

    assert not check.passed
    assert check.failures == (
        "corpus/design/retention.md: delivered excerpt lacks ['ninety days']",
        "corpus/design/retention.md#1: reading corpus/design/retention.md#1 lacks ['hourly sweep']",
    )


def test_evidence_beyond_k_or_the_budget_is_not_delivered(store: Store) -> None:
    check = check_evidence(
        store,
        "retention limits",
        budget=1200,
        k=1,
        expected_excerpts={"corpus/notes/2026-11-26-review.md": ["90 days"]},
        expected_reads={"corpus/ops/upgrade.md": ["one node at a time"]},
    )

    assert [failure.split(":")[0] for failure in check.failures] == [
        "corpus/notes/2026-11-26-review.md",
        "corpus/ops/upgrade.md",
    ]
    assert "within the first 1 items" in check.failures[0]
