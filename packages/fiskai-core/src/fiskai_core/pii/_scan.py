"""Finding PII in a text, redacting it, and applying `harness.pii.mode` to a prompt or a tool result.

Every detector runs over the text (a detector with hints only when one of them occurs); a match that
overlaps one of an earlier detector is dropped, so one value is one finding.
A match whose check fails and that holds spaces is retried without its last space-separated group: the
pattern for spaced IBANs and cards may take a following word along.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ._patterns import DETECTORS, Detector

__all__ = [
    "PROMPT_REFUSED",
    "RESULT_WITHHELD",
    "Finding",
    "Guarded",
    "PiiMode",
    "Redacted",
    "find",
    "guard",
    "guard_output",
    "placeholder",
    "redact",
]

PiiMode: TypeAlias = Literal["redact", "reject", "off"]

RESULT_WITHHELD = (
    "tool result withheld: it contained personal data or secrets, and this agent is configured not to pass "
    "them to the model (harness.pii.mode: reject). Do not retry the call to see it; tell the user the result "
    "was withheld, or use a call whose output does not carry personal data."
)
"""What the model receives instead of a tool result that holds PII in `reject` mode (fixed, as the reference's)."""

PROMPT_REFUSED = (
    "prompt refused: it contains personal data or secrets (harness.pii.mode: reject); remove them from the "
    "prompt and send it again"
)
"""Why a prompt that holds PII in `reject` mode is not run (the types found are appended)."""


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def placeholder(kind: str) -> str:
    """What replaces a value of `kind` in `redact` mode (inferred: the reference says "a type placeholder")."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True, slots=True)
class Finding:
    """One value found: its type and where it is (never the value itself, so it can be logged)."""

    type: str
    start: int
    end: int


def _spans(detector: Detector, text: str, lowered: str) -> list[tuple[int, int]]:
    """Where the detector's regex matches: scanned, or (anchored) tried at each keyword occurrence only."""
    group = "v" if "v" in detector.regex.groupindex else 0
    if detector.around is not None:
        return [
            match.span(group)
            for lo, hi in _windows(detector, text, lowered)
            for match in detector.regex.finditer(text, lo, hi)
        ]
    if not detector.anchored:
        return [match.span(group) for match in detector.regex.finditer(text)]
    starts: set[int] = set()
    for anchor in detector.hints:
        at = lowered.find(anchor)
        while at >= 0:
            starts.add(at)
            at = lowered.find(anchor, at + 1)
    spans: list[tuple[int, int]] = []
    reached = 0
    for at in sorted(starts):
        if at < reached:
            continue
        match = detector.regex.match(text, at)
        if match is not None:
            spans.append(match.span(group))
            reached = match.end()
    return spans


def _windows(detector: Detector, text: str, lowered: str) -> list[tuple[int, int]]:
    """The stretches around each occurrence of the detector's hints, merged where they touch."""
    assert detector.around is not None
    before, after = detector.around
    haystack = text if detector.exact else lowered
    spots: list[tuple[int, int]] = []
    for hint in detector.hints:
        at = haystack.find(hint)
        while at >= 0:
            spots.append((max(0, at - before), at + len(hint) + after))
            at = haystack.find(hint, at + 1)
    windows: list[tuple[int, int]] = []
    for lo, hi in sorted(spots):
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(hi, windows[-1][1]))
        else:
            windows.append((lo, hi))
    return windows


def _matches(detector: Detector, text: str, lowered: str) -> list[Finding]:
    found: list[Finding] = []
    check = detector.check
    for start, end in _spans(detector, text, lowered):
        if start < 0:
            continue
        if check is not None and not check(text[start:end]):
            end = _shrink(text, start, end, detector)
            if end < 0:
                continue
        found.append(Finding(detector.type, start, end))
    return found


def _shrink(text: str, start: int, end: int, detector: Detector) -> int:
    """The end of the longest space-bounded prefix of the match that passes the check, or -1."""
    assert detector.check is not None
    cut = text.rfind(" ", start, end)
    while cut > start:
        if detector.check(text[start:cut]):
            return cut
        cut = text.rfind(" ", start, cut)
    return -1


def find(text: str) -> list[Finding]:
    """Every PII value in `text`, in order, none overlapping another.

    Detectors claim text in priority order (credential shapes first): a token in a URL's userinfo is a
    secret even though `token@host` also looks like an email address.
    """
    if not text:
        return []
    lowered = text.lower()
    if len(lowered) != len(text):
        # A few characters lowercase to two (İ): keep offsets aligned by lowering ASCII only.
        lowered = text.translate(_ASCII_LOWER)
    starts: list[int] = []
    kept: list[Finding] = []
    for detector in DETECTORS:
        if detector.hints and not detector.exact and not any(hint in lowered for hint in detector.hints):
            continue
        for f in _matches(detector, text, lowered):
            at = bisect.bisect_right(starts, f.start)
            if at and kept[at - 1].end > f.start:
                continue
            if at < len(kept) and kept[at].start < f.end:
                continue
            starts.insert(at, f.start)
            kept.insert(at, f)
    return kept


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    counts: Mapping[str, int] = field(default_factory=dict[str, int])


def redact(text: str) -> Redacted:
    """`text` with each value replaced by its type's placeholder, and how many of each type there were."""
    findings = find(text)
    if not findings:
        return Redacted(text)
    parts: list[str] = []
    counts: dict[str, int] = {}
    at = 0
    for f in findings:
        parts.append(text[at : f.start])
        parts.append(placeholder(f.type))
        counts[f.type] = counts.get(f.type, 0) + 1
        at = f.end
    parts.append(text[at:])
    return Redacted("".join(parts), dict(sorted(counts.items())))


@dataclass(frozen=True, slots=True)
class Guarded:
    """A text after the guard: what goes on, what was found (counts per type), and whether it was held back.

    `blocked` is true in `reject` mode when anything was found (the caller refuses the prompt or withholds
    the result); `failed` when the scan itself failed, which counts as a hit in both modes.
    """

    text: str
    counts: Mapping[str, int] = field(default_factory=dict[str, int])
    blocked: bool = False
    failed: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.counts) or self.failed

    def journal(self) -> dict[str, object]:
        """The journal form: the mode's action and counts per type, never a value."""
        action = "withhold" if self.blocked else "redact"
        out: dict[str, object] = {"action": action, "counts": dict(self.counts)}
        if self.failed:
            out["scan_failed"] = True
        return out


def guard(text: str, mode: PiiMode) -> Guarded:
    """Apply `mode` to `text`: `off` passes it, `redact` replaces values, `reject` blocks on any value.

    A scan that fails counts as a hit (reference 7.4): the text is blocked whatever the mode, since nothing
    is known about what it holds.
    """
    if mode == "off":
        return Guarded(text)
    try:
        redacted = redact(text)
    except Exception:  # noqa: BLE001 - any failure of the scan is a hit, never a pass
        return Guarded("", blocked=True, failed=True)
    if not redacted.counts:
        return Guarded(text)
    if mode == "reject":
        return Guarded(text, redacted.counts, blocked=True)
    return Guarded(redacted.text, redacted.counts)


def guard_output(output: str, mode: PiiMode) -> tuple[str, Guarded]:
    """A tool's output as a model may see it: redacted, or `RESULT_WITHHELD` when blocked; and the verdict.

    The one place the withhold rule lives, for the agent loop and the servers that hand results to
    another model (MCP, the a2a tool endpoint).
    """
    guarded = guard(output, mode)
    return (RESULT_WITHHELD if guarded.blocked else guarded.text), guarded
