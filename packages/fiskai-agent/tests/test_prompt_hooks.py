"""`user_prompt_submit` on every prompt that enters a conversation: the first, a chat's follow-ups and a
served conversation's next turn, each decision journaled with the prompt it judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pytest

from fiskai_agent import FollowUp, RunOptions, SessionOptions, run
from fiskai_agent.llm import TextBlock
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer
from fiskai_core.config import LLMSettings
from fiskai_core.hooks import Allow, Deny, Hooks, PromptSubmit, RewritePrompt
from fiskai_core.tools import Tool, ToolSet
from fiskai_runstate import FileJournalStore
from fiskai_runstate.records import MetaRecord, UserRecord

pytestmark = pytest.mark.anyio


class App(Protocol):
    tools: list[Tool]


async def policy(prompt: PromptSubmit) -> Allow | Deny | RewritePrompt:
    """Denies anything about secrets, masks card numbers, lets the rest through."""
    if "secret" in prompt.prompt:
        return Deny("secrets are not discussed")
    if "4111" in prompt.prompt:
        return RewritePrompt(prompt.prompt.replace("4111", "****"), reason="card number")
    return Allow()


HOOKS = Hooks(user_prompt_submit=(policy,))


class Operator:
    def __init__(self, *turns: FollowUp | None) -> None:
        self._turns = list(turns)
        self.ended: list[str] = []

    async def __call__(self, error: str) -> FollowUp | None:
        self.ended.append(error)
        return self._turns.pop(0)


def _texts(provider: ScriptedProvider, call: int) -> list[str]:
    return [b.text for m in provider.requests[call].messages for b in m.content if isinstance(b, TextBlock)]


def _options(app: App, provider: ScriptedProvider, prompt: str, **kw: Any) -> RunOptions:
    return RunOptions(
        prompt=prompt,
        llm=LLMSettings(model="claude-sonnet-4-6"),
        tools=ToolSet.of(app.tools),
        provider=provider,
        interactive=True,
        hooks=HOOKS,
        **kw,
    )


async def test_a_chats_follow_ups_meet_the_hook_and_each_decision_is_journaled(app: App, tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    provider = ScriptedProvider.of(answer("first"), answer("second"))
    events = RecordingEvents()
    operator = Operator(FollowUp(text="tell me the secret"), FollowUp(text="charge 4111 please"), None)
    session = SessionOptions(store=store, checkpoint=True, name="chat", agent="shop")
    result = await run(_options(app, provider, "card 4111?", next_prompt=operator, session=session, events=events))

    assert result.reason == "suspended" and result.answer == "second"
    # The denied turn never reached the model; the rewritten ones did, rewritten.
    assert _texts(provider, 1) == ["card ****?", "first", "charge **** please"]
    # The operator is told why the denied turn went nowhere, and may type again.
    assert operator.ended == ["", "prompt denied by policy: secrets are not discussed", ""]
    records = [r.payload for r in await store.load("chat")]
    meta = records[0]
    assert isinstance(meta, MetaRecord) and meta.prompt == "card ****?" and meta.agent == "shop"
    assert [(h["decision"], h.get("original"), h.get("rewritten")) for h in meta.hooks] == [
        ("rewrite", "card 4111?", "card ****?")
    ]
    (user,) = [r for r in records if isinstance(r, UserRecord)]
    assert "charge **** please" in str(user.message) and "4111" not in str(user.message)
    assert [(h["point"], h["decision"], h.get("reason")) for h in user.hooks] == [
        ("user_prompt_submit", "rewrite", "card number")
    ]


async def test_a_served_conversations_next_turn_meets_the_hook(app: App, tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    first = await run(
        _options(
            app,
            ScriptedProvider.of(answer("one")),
            "hello",
            next_prompt=Operator(None),
            session=SessionOptions(store=store, checkpoint=True, name="conv", agent="shop", caller="alice"),
        )
    )
    assert first.reason == "suspended"
    before = await store.load("conv")

    refused = await run(
        _options(
            app,
            ScriptedProvider.of(),
            "",
            next_prompt=Operator(None),
            session=SessionOptions(store=store, resume_id="conv", follow_up="what is the secret?"),
        )
    )
    assert (refused.reason, refused.error) == ("error", "prompt denied by policy: secrets are not discussed")
    assert await store.load("conv") == before  # nothing journaled, the session untouched

    later = ScriptedProvider.of(answer("two"))
    again = await run(
        _options(
            app,
            later,
            "",
            next_prompt=Operator(None),
            session=SessionOptions(store=store, resume_id="conv", follow_up="pay with 4111"),
        )
    )
    assert again.answer == "two"
    assert _texts(later, 0) == ["hello", "one", "pay with ****"]
    records = await store.load("conv")
    (user,) = [r.payload for r in records if isinstance(r.payload, UserRecord)]
    assert [h["decision"] for h in user.hooks] == ["rewrite"]
    meta = records[0].payload
    assert isinstance(meta, MetaRecord) and (meta.agent, meta.caller) == ("shop", "alice")
    assert all(r.time for r in records[1:])  # every record after the meta one carries its time
