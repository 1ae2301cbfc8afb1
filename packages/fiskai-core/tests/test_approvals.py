"""Approval rules: what a pattern matches on the canonical argv, the rules file, and the gate's use of them."""

from __future__ import annotations

import stat
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from fiskai_core.approvals import (
    ApprovalRule,
    Approvals,
    RuleError,
    load_rules,
    no_terminal_warning,
    parse_rule,
    save_rules,
    suggest_rule,
)
from fiskai_core.confirm import ConfirmGate, GateDecision
from fiskai_core.prompter import ConfirmChoice, PromptDeclined
from fiskai_core.testing import ScriptedPrompter

_TAGS = ("ai:confirm", "impact:rw")
_DRAIN = ["/bin/fixturectl", "cluster", "node", "drain"]


def drain(*flags: str, node: str | None = "n3") -> list[str]:
    return [*_DRAIN, *flags, *(["--", node] if node is not None else [])]


def rule(text: str, tags: tuple[str, ...] = _TAGS) -> ApprovalRule:
    return parse_rule(text, tags=tags)


def ok(r: ApprovalRule, argv: list[str], tags: tuple[str, ...] = _TAGS) -> bool:
    return r.matches(name="cluster_node_drain", tags=tags, argv=argv)


def test_a_rule_is_complete_unless_it_says_dots() -> None:
    exact = rule("cluster_node_drain --reason=* @1=n*")
    assert ok(exact, drain("--reason=disk full"))
    assert not ok(exact, drain("--reason=disk", "--force")), "an unmentioned flag is not approved"
    assert not ok(exact, drain()), "a mentioned flag must be present"
    assert not ok(exact, drain("--reason=x", node="m3"))
    assert not ok(exact, [*drain("--reason=x"), "n4"]), "an unmentioned positional is not approved"
    loose = rule("cluster_node_drain @1=n* ...")
    assert ok(loose, drain("--reason=x", "--force"))
    assert not ok(loose, drain(node="x1"))


def test_bare_flags_repeated_flags_and_rest_positionals() -> None:
    assert ok(rule("cluster_node_drain --force @1=n3"), drain("--force"))
    assert not ok(rule("cluster_node_drain --force @1=n3"), drain("--no-force"))
    labels = rule("cluster_node_drain --label=team=* @*=n?")
    assert ok(labels, [*_DRAIN, "--label=team=a", "--label=team=b", "--", "n1", "n2"])
    assert not ok(labels, [*_DRAIN, "--label=team=a", "--label=owner=b", "--", "n1"]), "every value must match"
    assert not ok(labels, [*_DRAIN, "--label=team=a", "--", "n1", "n22"])


def test_tool_name_tags_and_deny() -> None:
    r = rule("cluster_node_drain ...")
    assert not r.matches(name="cluster_node_remove", tags=_TAGS, argv=drain())
    assert not ok(r, drain(), tags=("ai:confirm", "impact:rw", "impact:destructive")), "re-tagged: decide again"
    assert ok(r, drain(), tags=("impact:rw", "ai:confirm")), "tag order does not matter"
    with pytest.raises(RuleError, match="ai:deny"):
        parse_rule("cluster_node_remove ...", tags=("ai:deny",))


def test_glob_escapes_and_control_characters() -> None:
    literal = rule(r"cluster_node_drain '@1=a\*b'")  # quoted, as a shell needs it
    assert ok(literal, drain(node="a*b"))
    assert not ok(literal, drain(node="axb"))
    star = rule("cluster_node_drain @1=*")
    assert not ok(star, drain(node="n1\x1b[2Jhidden")), "* never matches a control character"
    assert not ok(star, drain(node="a\nb"))


def test_suggested_rule_matches_exactly_that_call() -> None:
    argv = drain("--reason=a b*c", "--force", node="n?3")
    text = suggest_rule("cluster_node_drain", argv)
    suggested = rule(text)
    assert ok(suggested, argv)
    assert not ok(suggested, drain("--reason=a bXc", "--force", node="n?3"))
    assert not ok(suggested, drain("--reason=a b*c", "--force", node="nx3"))


def test_unreadable_patterns_are_clear_errors() -> None:
    with pytest.raises(RuleError, match="cannot read pattern 'node=n1'"):
        rule("cluster_node_drain node=n1")
    with pytest.raises(RuleError, match="needs a tool name"):
        rule("  ")
    with pytest.raises(RuleError, match="quote values"):
        rule("cluster_node_drain '@1=n")


_VALUE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(prefix=st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ_", min_size=1, max_size=8), value=_VALUE)
def test_a_prefix_glob_never_matches_a_value_without_that_prefix(prefix: str, value: str) -> None:
    r = rule(f"cluster_node_drain @1={prefix}*")
    matched = ok(r, drain(node=value))
    rest = value[len(prefix) :]
    assert matched == (value.startswith(prefix) and rest.isprintable() and "/" not in rest)


@settings(max_examples=300, deadline=None)
@given(value=_VALUE, other=_VALUE)
def test_an_exact_rule_matches_only_its_own_value(value: str, other: str) -> None:
    r = rule(suggest_rule("cluster_node_drain", drain(f"--reason={value}")))
    assert ok(r, drain(f"--reason={value}")), "literal text matches itself, whatever it holds"
    if other != value:
        assert not ok(r, drain(f"--reason={other}"))


def test_rules_file_round_trip_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "approvals" / "agent.yaml"
    rules = [rule("cluster_node_drain --reason=* @1=n*"), rule("cluster_node_drain ...")]
    save_rules(path, rules, identity="agent")
    assert load_rules(path) == rules
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_rules(tmp_path / "missing.yaml") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [", "is not valid YAML"),
        ("- a\n- b\n", 'must be a mapping with a "rules" list'),
        ("rules:\n  - tool: x\n    patterns: [1]\n", "rule 1 needs tool"),
        ("rules:\n  - tool: x\n    patterns: ['node=1']\n", "cannot read pattern"),
        ("rules:\n  - tool: x\n    tags: [ai:deny]\n", "tagged ai:deny"),
    ],
)
def test_a_malformed_rules_file_names_itself(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RuleError, match=message) as raised:
        load_rules(path)
    assert str(path) in str(raised.value)


def _check(gate: ConfirmGate, argv: list[str]) -> GateDecision:
    return anyio.run(lambda: gate.check(name="cluster_node_drain", tags=list(_TAGS), argv=argv))


def test_gate_uses_a_persisted_rule_before_asking_and_never_without_a_match() -> None:
    approvals = Approvals([rule("cluster_node_drain @1=n*")], identity="agent")
    prompter = ScriptedPrompter.of(interactive=False)
    gate = ConfirmGate(prompter, approvals=approvals)
    allowed = _check(gate, drain())
    assert (allowed.allowed, allowed.channel, allowed.rule) == (True, "rule", "cluster_node_drain '@1=n*'")
    denied = _check(gate, drain("--force"))
    assert (denied.allowed, denied.channel, denied.rule) == (False, "no_terminal", None)
    assert prompter.asked == []


def test_gate_session_command_line_covers_only_that_line() -> None:
    prompter = ScriptedPrompter.of(ConfirmChoice.COMMAND)
    gate = ConfirmGate(prompter)
    first = _check(gate, drain())
    again = _check(gate, drain())
    other = _check(gate, drain(node="n4"))
    assert (first.channel, first.rule is not None and first.rule.startswith("session: command line")) == (
        "prompt",
        True,
    )
    assert (again.allowed, again.channel) == (True, "session")
    assert (other.allowed, other.channel) == (False, "prompt"), "a different line is asked again (script exhausted)"


def test_gate_saves_the_rule_the_operator_enters(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    approvals = Approvals.from_file(path, identity="agent")
    prompter = ScriptedPrompter.of(
        ConfirmChoice.RULE, "cluster_node_drain node=x", "cluster_node_drain @1=m*", "cluster_node_drain @1=n*"
    )
    gate = ConfirmGate(prompter, approvals=approvals)
    decision = _check(gate, drain())
    assert (decision.allowed, decision.channel, decision.rule) == (True, "prompt", "cluster_node_drain '@1=n*'")
    request = prompter.asked[0]
    assert not isinstance(request, str) and request.can_persist and request.suggested_rule == "cluster_node_drain @1=n3"
    assert "does not match the command being approved" in str(prompter.asked[3])
    assert [r.text for r in load_rules(path)] == ["cluster_node_drain '@1=n*'"]
    later = _check(gate, drain(node="n9"))
    assert (later.allowed, later.channel) == (True, "rule")


def test_a_saved_rule_is_reported_only_once_saved(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    prompter = ScriptedPrompter.of(ConfirmChoice.RULE, "cluster_node_drain @1=n*")
    gate = ConfirmGate(prompter, approvals=Approvals.from_file(path, identity="agent"))
    decision = _check(gate, drain())
    assert decision.allowed and decision.rule == "cluster_node_drain '@1=n*'"
    assert prompter.reports == ["approved, rule saved for agent 'agent': cluster_node_drain '@1=n*'"]
    assert [r.text for r in load_rules(path)] == ["cluster_node_drain '@1=n*'"]


def test_dismissing_the_rule_question_asks_the_approval_again(tmp_path: Path) -> None:
    """Escape at the rule question is not a "no" to the command: the operator chooses again."""
    path = tmp_path / "agent.yaml"
    prompter = ScriptedPrompter.of(ConfirmChoice.RULE, PromptDeclined("dismissed at the prompt"), ConfirmChoice.ONCE)
    gate = ConfirmGate(prompter, approvals=Approvals.from_file(path, identity="agent"))
    decision = _check(gate, drain())
    assert (decision.allowed, decision.channel, decision.rule) == (True, "prompt", None)
    assert prompter.reports == ["no rule saved (dismissed at the prompt); asking again"]
    assert [isinstance(asked, str) for asked in prompter.asked] == [False, True, False]
    assert not path.exists()


def test_a_rule_never_saved_denies_after_three_rounds(tmp_path: Path) -> None:
    declined = PromptDeclined("dismissed at the prompt")
    prompter = ScriptedPrompter.of(*[ConfirmChoice.RULE, declined] * 3, ConfirmChoice.ONCE)
    gate = ConfirmGate(prompter, approvals=Approvals.from_file(tmp_path / "agent.yaml", identity="agent"))
    decision = _check(gate, drain())
    assert (decision.allowed, decision.channel) == (False, "prompt")
    assert "no rule was saved" in decision.reason
    assert len(prompter.reports) == 3 and prompter.answers == [ConfirmChoice.ONCE]


_GATED = {"cluster_node_drain": _TAGS, "cluster_config_set": ("ai:confirm", "audit", "impact:rw")}


def test_the_no_terminal_warning_says_which_calls_saved_rules_still_let_run() -> None:
    none = no_terminal_warning(_GATED, None)
    assert none.startswith("2 tool(s) require confirmation") and none.endswith(
        "they will always be declined rather than run"
    )
    assert no_terminal_warning(_GATED, Approvals([])) == none
    stale = rule("cluster_node_drain ...", tags=("ai:confirm",))  # made before drain was re-tagged
    other = rule("cluster_node_list ...", tags=("impact:ro",))  # not a gated tool of this run
    assert no_terminal_warning(_GATED, Approvals([stale, other])) == none
    live = Approvals([rule("cluster_node_drain @1=n*"), rule("cluster_node_drain --force ..."), stale])
    message = no_terminal_warning(_GATED, live)
    assert "always" not in message
    assert "2 saved approval rule(s) still let matching calls of cluster_node_drain run" in message
    assert message.endswith("every other call is declined rather than run")
    many = {f"tool_{n}": _TAGS for n in range(5)}
    everything = Approvals([parse_rule(f"tool_{n} ...", tags=_TAGS) for n in range(5)])
    assert "calls of tool_0, tool_1, tool_2 and 2 more run" in no_terminal_warning(many, everything)
