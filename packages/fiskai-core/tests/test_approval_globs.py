"""What the wildcards of an approval rule may stand for: printable text, within one path segment, never `..`."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from fiskai_core.approvals import ApprovalRule, parse_rule

_TAGS = ("ai:confirm", "impact:rw")
_DRAIN = ["/bin/fixturectl", "cluster", "node", "drain"]


def approves(rule_text: str, *, node: str) -> bool:
    rule: ApprovalRule = parse_rule(rule_text, tags=_TAGS)
    return rule.matches(name="cluster_node_drain", tags=_TAGS, argv=[*_DRAIN, "--", node])


# Characters that change what a terminal shows without showing themselves.
_HIDDEN = [
    "\x1b",  # ESC (C0)
    "\x7f",  # DEL
    "\x85",  # NEL (C1)
    "\x9b",  # CSI (C1): starts an escape sequence on terminals that read 8-bit controls
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u202a",  # LEFT-TO-RIGHT EMBEDDING
    "\u2066",  # LEFT-TO-RIGHT ISOLATE
    "\u2069",  # POP DIRECTIONAL ISOLATE
    "\u200e",  # LEFT-TO-RIGHT MARK
    "\u200f",  # RIGHT-TO-LEFT MARK
    "\u061c",  # ARABIC LETTER MARK
    "\u200b",  # ZERO WIDTH SPACE
    "\u2028",  # LINE SEPARATOR
    "\ufeff",  # ZERO WIDTH NO-BREAK SPACE
]


@pytest.mark.parametrize("hidden", _HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("glob", ["n*", "n?3", "n**", "*"])
def test_no_wildcard_stands_for_a_control_bidi_or_invisible_character(glob: str, hidden: str) -> None:
    assert not approves(f"cluster_node_drain @1='{glob}'", node=f"n{hidden}3")
    # Written out in the rule, the character is literal text the operator chose: it matches itself.
    assert approves(f"cluster_node_drain '@1=n{hidden}3'", node=f"n{hidden}3")


def test_star_and_question_mark_stay_inside_one_path_segment() -> None:
    assert approves("cluster_node_drain @1=/srv/data/*", node="/srv/data/n1.log")
    assert not approves("cluster_node_drain @1=/srv/data/*", node="/srv/data/sub/n1.log")
    assert not approves("cluster_node_drain @1=/srv/data/*", node="/srv/data/../../etc/shadow")
    assert not approves("cluster_node_drain @1=n?3", node="n/3")
    assert approves("cluster_node_drain @1=/srv/*/n1", node="/srv/a/n1")
    assert approves("cluster_node_drain @1=/srv/**", node="/srv/a/b/c"), "** crosses /"
    assert approves("cluster_node_drain '--reason=**'", node="x") is False, "the flag is missing"


@pytest.mark.parametrize(
    "node",
    ["..", "../etc", "/srv/data/..", "/srv/data/../x", "/srv/data/a/../../../etc", "/srv/data/x/.."],
)
def test_no_wildcard_stands_for_a_dotdot_segment(node: str) -> None:
    for glob in ("*", "**", "/srv/data/*", "/srv/data/**", "/srv/data/*/../x", "?.", "**/*"):
        assert not approves(f"cluster_node_drain '@1={glob}'", node=node), (glob, node)


def test_dots_that_are_not_a_dotdot_segment_and_a_written_out_dotdot_match() -> None:
    assert approves("cluster_node_drain @1=*.log", node="..log")
    assert approves("cluster_node_drain @1=*", node="a..b")
    assert approves("cluster_node_drain @1=/srv/**", node="/srv/.../x")
    assert approves("cluster_node_drain @1=/srv/../*", node="/srv/../n1"), "the rule names the .. itself"


def test_escapes_are_literal() -> None:
    assert approves(r"cluster_node_drain '@1=a\*b\?\\'", node="a*b?\\")
    assert not approves(r"cluster_node_drain '@1=a\*b'", node="axb")
    assert approves(r"cluster_node_drain '@1=a\**'", node="a*bc")


_NAME_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))


@settings(max_examples=400, deadline=None)
@given(prefix=st.text("abcn0123_-.", min_size=1, max_size=6), value=st.text(_NAME_CHARS, max_size=12))
def test_a_prefix_star_matches_exactly_printable_single_segment_values(prefix: str, value: str) -> None:
    node = prefix + value
    # One segment (no /), so a .. segment is the whole value: the star may not supply any of its dots.
    expected = value.isprintable() and "/" not in value and (node != ".." or value == "")
    assert approves(f"cluster_node_drain '@1={prefix}*'", node=node) == expected


@settings(max_examples=200, deadline=None)
@given(value=st.text(_NAME_CHARS, max_size=12))
def test_a_question_mark_is_one_character(value: str) -> None:
    expected = len(value) == 1 and value.isprintable() and value != "/"
    assert approves("cluster_node_drain '@1=?'", node=value) == expected


def test_many_stars_against_a_long_nearly_matching_value_take_linear_time() -> None:
    # A backtracking regex takes about 45 s for 4,000 characters of this (and grows as n^4), holding the
    # GIL all along; a model chooses the value, so it could stall every gated call. A child process is the
    # one bound that holds then.
    code = (
        "from fiskai_core.approvals import parse_rule\n"
        "tags = ('ai:confirm',)\n"
        "rule = parse_rule(\"t '@1=*a*a*a*b'\", tags=tags)\n"
        "print(rule.matches(name='t', tags=tags, argv=['bin', '--', 'a' * 200_000]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout == "False\n"
