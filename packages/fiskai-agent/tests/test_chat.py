"""Chat continuation (reference 6.6): `RunOptions.next_prompt` asked at each turn boundary."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pytest

from fiskai_agent import FollowUp, RunOptions, SessionOptions, run
from fiskai_agent.llm import TextBlock
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer, calls
from fiskai_core.config import BudgetSettings, LLMSettings
from fiskai_core.tools import Tool, ToolSet
from fiskai_runstate import FileJournalStore, fold
from fiskai_runstate.records import UserRecord

pytestmark = pytest.mark.anyio


class App(Protocol):
    tools: list[Tool]


def _llm(**budget: Any) -> LLMSettings:
    return LLMSettings(model="claude-sonnet-4-6", budget=BudgetSettings(**budget))


def _texts(provider: ScriptedProvider, call: int) -> list[str]:
    return [b.text for m in provider.requests[call].messages for b in m.content if isinstance(b, TextBlock)]


class Operator:
    """Answers next_prompt from a list; records what each turn ended with."""

    def __init__(self, *turns: FollowUp | None) -> None:
        self._turns = list(turns)
        self.ended: list[str] = []

    async def __call__(self, error: str) -> FollowUp | None:
        self.ended.append(error)
        return self._turns.pop(0)


async def test_follow_ups_continue_the_conversation_and_none_ends_it(app: App) -> None:
    provider = ScriptedProvider.of(answer("first"), calls(("cluster_node_list", {})), answer("second"))
    operator = Operator(FollowUp(text="and now?"), None)
    result = await run(
        RunOptions(prompt="hello", llm=_llm(), tools=ToolSet.of(app.tools), provider=provider, next_prompt=operator)
    )
    assert result.reason == "completed" and result.answer == "second"
    assert operator.ended == ["", ""]
    assert _texts(provider, 1) == ["hello", "first", "and now?"]


async def test_reset_forgets_the_conversation_and_an_empty_reset_waits_for_text(app: App) -> None:
    provider = ScriptedProvider.of(answer("first"), answer("fresh"))
    operator = Operator(FollowUp(text="", reset=True), FollowUp(text="again", reset=True), None)
    result = await run(
        RunOptions(prompt="hello", llm=_llm(), tools=ToolSet.of(app.tools), provider=provider, next_prompt=operator)
    )
    assert result.answer == "fresh"
    assert _texts(provider, 1) == ["again"]


async def test_each_follow_up_gets_a_fresh_iteration_allowance_after_the_cap(app: App) -> None:
    provider = ScriptedProvider.of(calls(("cluster_node_list", {})), answer("done"))
    operator = Operator(FollowUp(text="go on"), None)
    result = await run(
        RunOptions(
            prompt="hello",
            llm=_llm(max_iterations=1),
            tools=ToolSet.of(app.tools),
            provider=provider,
            next_prompt=operator,
        )
    )
    assert operator.ended[0].startswith("max iterations (1)")
    assert result.reason == "completed" and result.answer == "done"


async def test_a_journaled_chat_records_each_follow_up_and_ends_suspended(app: App, tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    provider = ScriptedProvider.of(answer("first"), answer("second"))
    operator = Operator(FollowUp(text="more"), None)
    result = await run(
        RunOptions(
            prompt="hello",
            llm=_llm(),
            tools=ToolSet.of(app.tools),
            provider=provider,
            next_prompt=operator,
            interactive=True,
            session=SessionOptions(store=store, checkpoint=True, name="chat"),
        )
    )
    assert result.reason == "suspended"
    records = [record.payload for record in await store.load("chat")]
    users = [r for r in records if isinstance(r, UserRecord)]
    assert len(users) == 1 and "more" in str(users[0].message)


def _chat(
    app: App, store: FileJournalStore, provider: ScriptedProvider, operator: Operator, **session: Any
) -> RunOptions:
    return RunOptions(
        prompt="hello",
        llm=_llm(),
        tools=ToolSet.of(app.tools),
        provider=provider,
        next_prompt=operator,
        interactive=True,
        events=RecordingEvents(),
        session=SessionOptions(store=store, **session),
    )


async def test_clear_with_a_prompt_rotates_to_a_new_session_that_names_the_old_one(app: App, tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    provider = ScriptedProvider.of(answer("first"), answer("fresh"))
    operator = Operator(FollowUp(text="", reset=True), FollowUp(text="again", reset=True), None)
    options = _chat(app, store, provider, operator, checkpoint=True, name="chat")
    result = await run(options)
    assert _texts(provider, 1) == ["again"]
    assert result.reason == "suspended" and result.session_id not in (None, "chat")
    new = fold(await store.load(str(result.session_id)))
    old = fold(await store.load("chat"))
    assert (new.previous, new.prompt, new.interactive, new.status) == ("chat", "again", True, "suspended")
    assert (old.previous, old.status, len(old.messages)) == ("", "suspended", 2)  # the old one stays resumable
    assert not any(isinstance(r.payload, UserRecord) for r in await store.load(str(result.session_id)))
    events = options.events
    assert isinstance(events, RecordingEvents)
    assert ("session_rotated", ("chat", result.session_id)) in events.events


async def test_a_bare_clear_then_leaving_rotates_nothing(app: App, tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    provider = ScriptedProvider.of(answer("first"))
    result = await run(
        _chat(app, store, provider, Operator(FollowUp(text="", reset=True), None), checkpoint=True, name="c")
    )
    assert result.session_id == "c"
    assert [s.run_id for s in await store.list()] == ["c"]


async def test_a_chat_resumed_at_the_input_asks_first_and_its_next_turn_sees_the_earlier_ones(
    app: App, tmp_path: Path
) -> None:
    store = FileJournalStore(tmp_path)
    first = ScriptedProvider.of(answer("one"), answer("two"))
    await run(_chat(app, store, first, Operator(FollowUp(text="more"), None), checkpoint=True, name="c"))
    later = ScriptedProvider.of(answer("three"))
    operator = Operator(FollowUp(text="and then?"), None)
    result = await run(_chat(app, store, later, operator, resume_id="c"))
    assert operator.ended == ["", ""]  # asked before any model call
    assert len(later.requests) == 1
    assert _texts(later, 0) == ["hello", "one", "more", "two", "and then?"]
    assert result.reason == "suspended"


async def test_a_chat_that_crashed_after_a_follow_up_resumes_by_answering_it(app: App, tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    # No answer for the follow-up: the conversation ends on its user record, as after a crash mid-turn.
    crashed = ScriptedProvider.of(answer("one"))
    await run(_chat(app, store, crashed, Operator(FollowUp(text="more"), None), checkpoint=True, name="c"))
    assert isinstance((await store.load("c"))[-2].payload, UserRecord)
    later = ScriptedProvider.of(answer("two"))
    operator = Operator(None)
    result = await run(_chat(app, store, later, operator, resume_id="c"))
    assert _texts(later, 0) == ["hello", "one", "more"]
    assert operator.ended == [""] and result.answer == "two"


async def test_a_resumed_chat_takes_its_next_turn_from_follow_up(app: App, tmp_path: Path) -> None:
    """A served conversation: each turn is a run of its own, resumed from the journal with the next prompt."""
    store = FileJournalStore(tmp_path)
    first = ScriptedProvider.of(answer("one"))
    ended = await run(
        RunOptions(
            prompt="hello",
            llm=_llm(),
            tools=ToolSet.of(app.tools),
            provider=first,
            next_prompt=Operator(None),
            interactive=True,
            session=SessionOptions(store=store, checkpoint=True, name="t-conv"),
        )
    )
    assert (ended.reason, ended.answer) == ("suspended", "one")
    second = ScriptedProvider.of(answer("two"))
    again = await run(
        RunOptions(
            prompt="",
            llm=_llm(),
            tools=ToolSet.of(app.tools),
            provider=second,
            next_prompt=Operator(None),
            interactive=True,
            session=SessionOptions(store=store, resume_id="t-conv", follow_up="and then?"),
        )
    )
    assert (again.reason, again.answer) == ("suspended", "two")
    assert _texts(second, 0) == ["hello", "one", "and then?"]
