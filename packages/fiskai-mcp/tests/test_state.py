"""Approval state for the 2026-07-28 round trip: bound to one call, single-use, short-lived, unforgeable."""

from __future__ import annotations

from fiskai_mcp._state import ApprovalStates


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_redeems_once_for_the_call_it_was_minted_for() -> None:
    states = ApprovalStates(ttl=60)
    token = states.mint("cluster_config_set", {"key": "a", "value": "b"})

    assert states.redeem(token, "cluster_config_set", {"value": "b", "key": "a"})
    assert not states.redeem(token, "cluster_config_set", {"key": "a", "value": "b"})
    assert states.outstanding == 0


def test_a_token_for_other_arguments_or_another_tool_is_refused_and_used_up() -> None:
    states = ApprovalStates(ttl=60)
    token = states.mint("cluster_config_set", {"key": "a"})
    assert not states.redeem(token, "cluster_config_set", {"key": "b"})
    assert not states.redeem(token, "cluster_config_set", {"key": "a"})

    other = states.mint("cluster_config_set", {"key": "a"})
    assert not states.redeem(other, "cluster_node_drain", {"key": "a"})


def test_an_altered_or_foreign_token_is_refused() -> None:
    states = ApprovalStates(ttl=60)
    token = states.mint("t", {})
    prefix, body, mac = token.split(".")
    flipped = body[:-1] + ("A" if body[-1] != "A" else "B")

    assert not states.redeem(f"{prefix}.{flipped}.{mac}", "t", {})
    assert not states.redeem(ApprovalStates(ttl=60).mint("t", {}), "t", {})
    for junk in ("", "x", "fiskai-approval-v1..", "fiskai-approval-v1.%%%.%%%", None):
        assert not states.redeem(junk, "t", {})
    assert states.redeem(token, "t", {})


def test_a_token_expires() -> None:
    clock = _Clock()
    states = ApprovalStates(ttl=30, clock=clock)
    token = states.mint("t", {})
    clock.now += 30

    assert not states.redeem(token, "t", {})
