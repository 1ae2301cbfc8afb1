"""Precision and recall of the PII detector per type, measured on `corpus.jsonl`.

The corpus holds realistic positives for every type (values in the formats people and tools write them,
with valid checksums where the format has one) and look-alike negatives (order numbers, versions, UUIDs,
timestamps, hashes, IPs, invalid-checksum cards and IBANs, never-issued SSNs, phone-shaped ids). Each line
is `{"text", "expect": [{"type", "value"}]}`; a finding counts only when its type matches and it covers
exactly the expected value (an over- or under-reaching span is both a false positive and a miss).

The thresholds are what was measured when the corpus was written, less a little room: precision and recall
of at least 0.90 for every type, and 0.95 over all types.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fiskai_core.pii import PII_TYPES, find

CORPUS = Path(__file__).with_name("corpus.jsonl")
PER_TYPE = 0.90
OVERALL = 0.95
MIN_POSITIVES = 8


def _score() -> tuple[dict[str, list[int]], list[str]]:
    counts = {kind: [0, 0, 0] for kind in PII_TYPES}  # true positives, false positives, misses
    errors: list[str] = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text = row["text"]
        expected: set[tuple[str, int, int]] = set()
        for item in row["expect"]:
            start = text.index(item["value"])
            expected.add((item["type"], start, start + len(item["value"])))
        found = {(f.type, f.start, f.end) for f in find(text)}
        for kind, _, _ in expected & found:
            counts[kind][0] += 1
        for kind, start, end in found - expected:
            counts[kind][1] += 1
            errors.append(f"false positive {kind} {text[start:end]!r} in {text[:80]!r}")
        for kind, start, end in expected - found:
            counts[kind][2] += 1
            errors.append(f"missed {kind} {text[start:end]!r} in {text[:80]!r}")
    return counts, errors


def test_precision_and_recall_per_type() -> None:
    counts, errors = _score()
    table = [f"\n{'type':18} {'precision':>9} {'recall':>7} {'tp':>4} {'fp':>4} {'fn':>4}"]
    failing: list[str] = []
    for kind in PII_TYPES:
        tp, fp, fn = counts[kind]
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        table.append(f"{kind:18} {precision:9.3f} {recall:7.3f} {tp:4} {fp:4} {fn:4}")
        if tp + fn < MIN_POSITIVES:
            failing.append(f"{kind}: only {tp + fn} positives in the corpus (want {MIN_POSITIVES})")
        if precision < PER_TYPE or recall < PER_TYPE:
            failing.append(f"{kind}: precision {precision:.3f}, recall {recall:.3f} (want >= {PER_TYPE})")
    tp, fp, fn = (sum(c[i] for c in counts.values()) for i in range(3))
    table.append(f"{'all':18} {tp / (tp + fp):9.3f} {tp / (tp + fn):7.3f} {tp:4} {fp:4} {fn:4}")
    table.extend(f"  {error}" for error in errors)
    # Shown with `pytest -s`: the figures are the point of this test, not only the pass.
    sys.stdout.write("\n".join(table) + "\n")
    assert tp / (tp + fp) >= OVERALL and tp / (tp + fn) >= OVERALL, "overall precision or recall fell below 0.95"
    assert not failing, "\n".join(failing)


def test_the_corpus_is_large_and_balanced() -> None:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 150
    negatives = [row for row in rows if not row["expect"]]
    assert len(negatives) >= 60
    assert {item["type"] for row in rows for item in row["expect"]} == set(PII_TYPES)
