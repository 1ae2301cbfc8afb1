"""The PII guard in the loop: after the caller's hooks, on the output only, on chat follow-ups too."""

from __future__ import annotations

import json
from typing import Protocol

import pytest

from fiskai_agent import FollowUp, RunOptions, SessionOptions, run
from fiskai_agent.errors import SetupError
from fiskai_agent.events import Advisory
from fiskai_agent.llm import TextBlock, ToolResultBlock
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer, calls
from fiskai_core.config import LLMSettings
from fiskai_core.hooks import Allow, Hooks, ToolOutput
from fiskai_core.tools import Tool, ToolSet
from fiskai_runstate import FileJournalStore
from fiskai_runstate.records import ToolResultRecord

pytestmark = pytest.mark.anyio

LLM = LLMSettings(model="claude-sonnet-4-6")


class App(Protocol):
    tools: list[Tool]


def _results(provider: ScriptedProvider, call: int) -> list[ToolResultBlock]:
    return [b for m in provider.requests[call].messages for b in m.content if isinstance(b, ToolResultBlock)]


async def test_the_hook_sees_the_output_the_guard_then_redacts_and_the_journal_counts(
    app: App, store: FileJournalStore
) -> None:
    seen: list[str] = []

    async def audit(event: ToolOutput) -> Allow:
        seen.append(event.output)
        return Allow()

    provider = ScriptedProvider.of(calls(("cluster_config_get", {"key": "jane.roe@example.com"})), answer("done"))
    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="read it",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            events=events,
            hooks=Hooks(post_tool_use=(audit,)),
            session=SessionOptions(store=store, checkpoint=True, name="guarded"),
        )
    )
    assert result.reason == "completed", result.error
    assert "[jane.roe@example.com]" in seen[0]  # the caller's hook runs first, on the tool's own output
    (block,) = _results(provider, 1)
    sent = json.loads(block.content)
    assert "[[REDACTED:EMAIL]]" in sent["output"] and "jane.roe@example.com" not in sent["output"]
    assert "jane.roe@example.com" in sent["command"]  # the model's own arguments are not scanned
    records = [r.payload for r in await store.load("guarded") if isinstance(r.payload, ToolResultRecord)]
    assert records[0].result["hooks"] == [
        {"point": "post_tool_use", "hook": audit.__qualname__, "decision": "allow"},
        {"point": "post_tool_use", "hook": "pii", "decision": "redact", "counts": {"EMAIL": 1}},
    ]
    warned = [a.message for _, a in events.events if isinstance(a, Advisory)]
    assert '"cluster_config_get": redacted 1 EMAIL' in warned


async def test_a_chat_follow_up_with_pii_is_refused_in_reject_mode_and_the_chat_goes_on(app: App) -> None:
    ended: list[str] = []
    turns = [FollowUp(text="my card is 4532015112830366"), FollowUp(text="never mind"), None]

    async def operator(error: str) -> FollowUp | None:
        ended.append(error)
        return turns.pop(0)

    provider = ScriptedProvider.of(answer("first"), answer("second"))
    result = await run(
        RunOptions(
            prompt="hello",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            next_prompt=operator,
            pii_mode="reject",
        )
    )
    assert result.answer == "second"
    assert ended[1].startswith("prompt refused: it contains personal data or secrets") and "CREDIT_CARD" in ended[1]
    sent = [b.text for m in provider.requests[1].messages for b in m.content if isinstance(b, TextBlock)]
    assert sent == ["hello", "first", "never mind"]


async def test_off_passes_the_prompt_and_the_output_unchanged(app: App) -> None:
    provider = ScriptedProvider.of(calls(("cluster_config_get", {"key": "motd"})), answer("done"))
    await run(
        RunOptions(
            prompt="mail jane.roe@example.com",
            llm=LLM,
            tools=ToolSet.of(app.tools),
            provider=provider,
            pii_mode="off",
        )
    )
    (first,) = provider.requests[0].messages
    assert first.content == (TextBlock(text="mail jane.roe@example.com"),)


async def test_a_scanner_that_will_not_build_fails_the_run(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> list[object]:
        raise RuntimeError("pattern did not compile")

    monkeypatch.setattr("fiskai_core.pii.find", broken)
    provider = ScriptedProvider.of(answer("never"))
    with pytest.raises(SetupError, match=r"the PII scanner \(harness.pii.mode: redact\) could not be built"):
        await run(RunOptions(prompt="hi", llm=LLM, tools=ToolSet.of(app.tools), provider=provider))
    assert provider.requests == []
