"""Fingerprint diffs and the resume guard."""

from __future__ import annotations

import pytest

from fiskai_runstate import Fingerprint, check_resume, sha256_json
from fiskai_runstate.errors import ProviderChangedError, ResumeMismatchError

SAVED = Fingerprint(
    provider="anthropic",
    model="claude-a",
    system_hash=sha256_json([{"text": "be careful"}]),
    tools_hash=sha256_json([{"name": "stream_info"}]),
    thinking_mode="off",
    max_tokens=200_000,
    max_iterations=50,
)


def _changed(**changes: str | int) -> Fingerprint:
    fields = {name: getattr(SAVED, name) for name in Fingerprint.__slots__}
    fields.update(changes)
    return Fingerprint(**fields)


def test_identical_fingerprints_resume_without_changes() -> None:
    assert check_resume(SAVED, _changed(), run_id="r") == ()


def test_mismatch_names_every_changed_field_and_never_a_prompt() -> None:
    current = _changed(
        model="claude-b",
        system_hash=sha256_json([{"text": "be bold"}]),
        tools_hash=sha256_json([]),
        thinking_mode="summarized",
        max_tokens=1000,
        max_iterations=60,
    )
    with pytest.raises(ResumeMismatchError) as caught:
        check_resume(SAVED, current, run_id="r")
    assert [c.field for c in caught.value.changes] == [
        "model",
        "system_hash",
        "tools_hash",
        "thinking_mode",
        "max_tokens",
        "max_iterations",
    ]
    message = str(caught.value)
    for line in (
        "model: claude-a -> claude-b",
        "system prompt: changed",
        "tool set: changed",
        "thinking: off -> summarized",
        "max_tokens: 200000 -> 1000",
        "max_iterations: 50 -> 60",
    ):
        assert f"\n  {line}" in message
    assert "be bold" not in message
    assert SAVED.system_hash not in message


def test_force_accepts_changes_and_reports_them() -> None:
    changes = check_resume(SAVED, _changed(model="claude-b"), run_id="r", force=True)
    assert [(c.field, c.old, c.new) for c in changes] == [("model", "claude-a", "claude-b")]


def test_provider_change_is_refused_even_with_force() -> None:
    with pytest.raises(ProviderChangedError) as caught:
        check_resume(SAVED, _changed(provider="openai", model="gpt"), run_id="r", force=True)
    assert "--force does not apply" in str(caught.value)
    assert (caught.value.old, caught.value.new) == ("anthropic", "openai")


def test_hashes_ignore_key_order() -> None:
    assert sha256_json({"a": 1, "b": [1, 2]}) == sha256_json({"b": [1, 2], "a": 1})
    assert sha256_json({"a": 1}) != sha256_json({"a": 2})
