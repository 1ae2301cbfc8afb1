"""fold: the journal replayed into the state a resume continues from."""

from __future__ import annotations

import pytest

from fiskai_runstate import Record, fold
from fiskai_runstate.errors import JournalCorruptError, JournalVersionError
from fiskai_runstate.records import (
    SCHEMA_VERSION,
    AssistantRecord,
    JsonObject,
    JsonValue,
    MetaRecord,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
    args_digest,
    effect_id,
)
from fiskai_runstate.testing import sample_meta, sample_turn

META = Record(seq=1, payload=sample_meta("r"))


def _assistant(seq: int, iteration: int, *use_ids: str, stop: str = "tool_use") -> Record:
    content: list[JsonValue] = [{"text": {"text": "thinking aloud"}}]
    content.extend({"tool_use": {"id": use_id, "name": "t", "input": {}}} for use_id in use_ids)
    message: JsonObject = {"role": "assistant", "content": content}
    payload = AssistantRecord(
        iteration=iteration, message=message, stop_reason=stop, in_tokens=10, out_tokens=2, cache_read_tokens=3
    )
    return Record(seq=seq, payload=payload)


def _intent(seq: int, use_id: str) -> Record:
    return Record(
        seq=seq,
        payload=ToolIntentRecord(
            tool_use_id=use_id, tool_name="t", args_digest=args_digest({}), effect_id=effect_id("r", use_id)
        ),
    )


def _result(seq: int, use_id: str, *, remote: bool = False) -> Record:
    return Record(
        seq=seq,
        payload=ToolResultRecord(tool_use_id=use_id, result={"tool_use_id": use_id, "content": "ok"}, remote=remote),
    )


def _user(seq: int, text: str) -> Record:
    return Record(seq=seq, payload=UserRecord(message={"role": "user", "content": [{"text": {"text": text}}]}))


def test_meta_only_starts_with_the_prompt_at_iteration_zero() -> None:
    state = fold([META])
    assert state.messages == ({"role": "user", "content": [{"text": {"text": "report on ORDERS"}}]},)
    assert (state.next_iteration, state.pending, state.terminal, state.status, state.last_seq) == (
        0,
        None,
        None,
        "open",
        1,
    )


def test_crash_mid_batch_leaves_answered_and_unanswered_calls_and_unresolved_intents() -> None:
    records = [
        META,
        _assistant(2, 0, "a"),
        _intent(3, "a"),
        _result(4, "a", remote=True),
        _assistant(5, 1, "b", "c", "d"),
        _intent(6, "b"),
        _result(7, "b"),
        _intent(8, "c"),
    ]
    state = fold(records)
    assert len(state.messages) == 3  # prompt, first turn, its results; the open turn is not committed
    assert state.messages[2] == {"role": "user", "content": [{"tool_result": {"tool_use_id": "a", "content": "ok"}}]}
    pending = state.pending
    assert pending is not None
    assert (pending.iteration, pending.answered, pending.unanswered) == (1, frozenset({"b"}), ("c", "d"))
    assert [r.tool_use_id for r in pending.results] == ["b"]
    assert [i.tool_use_id for i in state.intents_without_results] == ["c"]
    assert state.intents_without_results[0].effect_id == "r/c"
    counters = state.counters
    assert (counters.llm_calls, counters.tool_calls, counters.remote_tool_calls) == (2, 2, 1)
    assert (counters.in_tokens, counters.out_tokens, counters.cache_read_tokens) == (20, 4, 6)
    assert (state.next_iteration, state.last_stop_reason, state.last_seq) == (2, "tool_use", 8)


def test_fully_answered_turn_is_committed_with_one_results_message() -> None:
    state = fold([META, _assistant(2, 0, "a", "b"), _result(3, "b"), _result(4, "a")])
    assert state.pending is None
    assert state.messages[-1] == {
        "role": "user",
        "content": [
            {"tool_result": {"tool_use_id": "b", "content": "ok"}},
            {"tool_result": {"tool_use_id": "a", "content": "ok"}},
        ],
    }


def test_user_records_merge_into_a_preceding_user_message() -> None:
    records = [META, _assistant(2, 0, "a"), _result(3, "a"), _user(4, "more"), _user(5, "and more")]
    state = fold(records)
    assert len(state.messages) == 3
    assert state.messages[-1]["content"] == [
        {"tool_result": {"tool_use_id": "a", "content": "ok"}},
        {"text": {"text": "more"}},
        {"text": {"text": "and more"}},
    ]
    final = fold([*records, _assistant(6, 1, stop="end_turn"), _user(7, "next")])
    assert final.messages[-1] == {"role": "user", "content": [{"text": {"text": "next"}}]}
    assert (final.next_iteration, final.last_stop_reason) == (2, "end_turn")


def test_last_terminal_record_wins_and_only_completed_is_final() -> None:
    records = [META, _assistant(2, 0, stop="end_turn"), Record(seq=3, payload=TerminalRecord(reason="suspended"))]
    assert not fold(records).completed
    done = fold([*records, Record(seq=4, payload=TerminalRecord(reason="completed", message="bye"))])
    assert done.completed
    assert done.status == "completed"


def test_counters_are_derived_from_a_sample_run() -> None:
    records = [META, *sample_turn("r", seq=2, iteration=0), *sample_turn("r", seq=5, iteration=1)]
    state = fold(records)
    assert (state.counters.llm_calls, state.counters.tool_calls, state.next_iteration) == (2, 2, 2)
    assert state.intents_without_results == ()


@pytest.mark.parametrize(
    ("records", "reason"),
    [
        ([], "no records"),
        ([_user(1, "x")], "first record is not the meta"),
        ([META, _user(2, "x"), _user(2, "y")], "seq 2 not increasing after 2"),
        ([META, _result(2, "a")], "tool_result before any assistant"),
        ([META, _intent(2, "a")], "tool_intent before any assistant"),
        ([META, Record(seq=2, payload=sample_meta("r"))], "a second meta record"),
    ],
    ids=["empty", "no-meta", "seq-repeats", "orphan-result", "orphan-intent", "second-meta"],
)
def test_malformed_sequences_are_corrupt(records: list[Record], reason: str) -> None:
    with pytest.raises(JournalCorruptError) as caught:
        fold(records)
    assert reason in str(caught.value)


def test_newer_meta_version_is_refused_by_fold() -> None:
    meta = sample_meta("r")
    newer = MetaRecord(
        run_id=meta.run_id, created=meta.created, fingerprint=meta.fingerprint, prompt=meta.prompt, version=99
    )
    with pytest.raises(JournalVersionError) as caught:
        fold([Record(seq=1, payload=newer)])
    assert (caught.value.found, caught.value.supported) == (99, SCHEMA_VERSION)


def test_older_meta_version_is_accepted() -> None:
    meta = sample_meta("r")
    older = MetaRecord(run_id=meta.run_id, created=meta.created, fingerprint=meta.fingerprint, version=2)
    assert fold([Record(seq=1, payload=older, version=2)]).version == 2


def test_a_rotated_session_names_its_predecessor_in_the_fold() -> None:
    meta = sample_meta("r")
    rotated = MetaRecord(
        run_id=meta.run_id, created=meta.created, fingerprint=meta.fingerprint, interactive=True, previous="first"
    )
    state = fold([Record(seq=1, payload=rotated)])
    assert (state.previous, state.interactive) == ("first", True)
    assert fold([META]).previous == ""
