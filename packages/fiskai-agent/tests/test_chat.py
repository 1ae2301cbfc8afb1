"""Chat continuation (reference 6.6): `RunOptions.next_prompt` asked at each turn boundary."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pytest

from fiskai_agent import FollowUp, RunOptions, SessionOptions, run
from fiskai_agent.llm import TextBlock
from fiskai_agent.testing import ScriptedProvider, answer, calls
from fiskai_core.config import BudgetSettings, LLMSettings
from fiskai_core.tools import Tool, ToolSet
from fiskai_runstate import FileJournalStore
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
