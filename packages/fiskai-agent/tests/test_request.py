"""What each model request carries: deferral sets, the search flag, thinking, output caps, caching, system blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pytest

from fiskai_agent import KnowledgeOptions, MemoryOptions, RunOptions, SetupError, run
from fiskai_agent.llm import Capabilities, Request
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer
from fiskai_core.config import BudgetSettings, LLMSettings, ThinkingSettings
from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import command_tools
from fiskai_core.testing import FakeSearcher, FakeTool, write_fake_app
from fiskai_core.tools import Tool
from fiskai_memory.testing import InMemoryMemoryStore

pytestmark = pytest.mark.anyio

LLM = LLMSettings(model="claude-sonnet-4-6")


class App(Protocol):
    tools: list[Tool]

    def calls(self) -> list[str]: ...


async def _first_request(options: RunOptions, provider: ScriptedProvider) -> Request:
    await run(options)
    return provider.requests[0]


async def test_a_200_tool_cli_is_deferred_behind_tool_search(tmp_path: Path, natscli: Path) -> None:
    application = load_application(str(write_fake_app(tmp_path, natscli, name="nats")))
    tools = command_tools(application)
    assert len(tools) >= 200
    provider = ScriptedProvider.of(answer("ok"))
    memory = MemoryOptions(store=InMemoryMemoryStore())
    request = await _first_request(
        RunOptions(prompt="streams?", llm=LLM, app_tools=tools, memory=memory, provider=provider), provider
    )
    assert request.tool_search
    by_name = {d.name: d for d in request.tools}
    assert len(request.tools) == len(tools) + 4
    pinned = {t.name for t in tools if "ai:no_defer" in t.tags}
    assert {d.name for d in request.tools if not d.defer_loading} == pinned | {
        "memory_list",
        "memory_read",
        "memory_write",
        "memory_delete",
    }
    assert [d.name for d in request.tools[-4:]] == ["memory_list", "memory_read", "memory_write", "memory_delete"]
    assert by_name[tools[0].name].defer_loading is (tools[0].name not in pinned)


async def test_below_ten_tools_nothing_is_deferred_and_no_search_tool_is_added(app: App) -> None:
    few = app.tools[:5]
    provider = ScriptedProvider.of(answer("ok"))
    request = await _first_request(RunOptions(prompt="x", llm=LLM, app_tools=few, provider=provider), provider)
    assert not request.tool_search
    assert [d.defer_loading for d in request.tools] == [False] * 5


async def test_built_ins_count_toward_the_threshold(app: App) -> None:
    six = [t for t in app.tools if "ai:no_defer" not in t.tags][:6]
    provider = ScriptedProvider.of(answer("ok"))
    request = await _first_request(
        RunOptions(
            prompt="x",
            llm=LLM,
            app_tools=six,
            memory=MemoryOptions(store=InMemoryMemoryStore()),
            provider=provider,
        ),
        provider,
    )
    assert request.tool_search
    assert [d.defer_loading for d in request.tools] == [True] * 6 + [False] * 4


async def test_a_backend_without_tool_search_gets_find_tools_instead_of_the_deferred_tools(app: App) -> None:
    provider = ScriptedProvider.of(answer("ok"), capabilities=Capabilities(provider="anthropic"))
    events = RecordingEvents()
    many = [FakeTool(name=f"t{i}", description="t") for i in range(12)]
    request = await _first_request(
        RunOptions(prompt="x", llm=LLM, custom_tools=many, provider=provider, events=events), provider
    )
    assert not request.tool_search and not any(d.defer_loading for d in request.tools)
    assert [d.name for d in request.tools] == ["find_tools"]
    assert "find_tools" in request.system[-1]
    (advisory,) = events.advisories
    assert advisory.kind == "tool_finder" and advisory.count == 12


async def test_no_tool_search_sends_every_tool_directly_with_its_own_warning() -> None:
    provider = ScriptedProvider.of(answer("ok"))
    events = RecordingEvents()
    many = [FakeTool(name=f"t{i}", description="t") for i in range(12)]
    settings = LLMSettings(model="claude-sonnet-4-6", no_tool_search=True)
    request = await _first_request(
        RunOptions(prompt="x", llm=settings, custom_tools=many, provider=provider, events=events), provider
    )
    assert not request.tool_search
    (advisory,) = events.advisories
    assert advisory.kind == "tool_search_disabled" and advisory.message.startswith("12 tools are available")


async def test_thinking_raises_the_output_cap_and_an_explicit_cap_wins() -> None:
    tool = [FakeTool(name="t", description="t")]
    provider = ScriptedProvider.of(answer("ok"))
    thinking = LLMSettings(model="claude-sonnet-4-6", thinking=ThinkingSettings(enabled=True))
    request = await _first_request(RunOptions(prompt="x", llm=thinking, custom_tools=tool, provider=provider), provider)
    assert request.thinking and request.max_output_tokens == 16384
    provider = ScriptedProvider.of(answer("ok"))
    plain = await _first_request(RunOptions(prompt="x", llm=LLM, custom_tools=tool, provider=provider), provider)
    assert not plain.thinking and plain.max_output_tokens == 8192
    provider = ScriptedProvider.of(answer("ok"))
    explicit = LLMSettings(
        model="claude-sonnet-4-6",
        thinking=ThinkingSettings(enabled=True),
        budget=BudgetSettings(max_output_tokens=3000),
    )
    capped = await _first_request(RunOptions(prompt="x", llm=explicit, custom_tools=tool, provider=provider), provider)
    assert capped.max_output_tokens == 3000


async def test_capabilities_decide_thinking_and_caching_per_run() -> None:
    tool = [FakeTool(name="t", description="t")]
    provider = ScriptedProvider.of(answer("ok"), capabilities=Capabilities(provider="anthropic"))
    thinking = LLMSettings(model="claude-sonnet-4-6", thinking=ThinkingSettings(enabled=True))
    request = await _first_request(RunOptions(prompt="x", llm=thinking, custom_tools=tool, provider=provider), provider)
    assert not request.thinking and not request.prompt_cache and request.max_output_tokens == 8192
    provider = ScriptedProvider.of(answer("ok"))
    cached = await _first_request(
        RunOptions(prompt="x", llm=LLM, custom_tools=tool, provider=provider, interactive=True), provider
    )
    assert cached.prompt_cache and cached.cache_ttl == "1h"


async def test_system_blocks_come_in_order_with_the_memory_index_last() -> None:
    store = InMemoryMemoryStore()
    await store.write("layout", "Where things live", "body")
    provider = ScriptedProvider.of(answer("ok"))
    request = await _first_request(
        RunOptions(
            prompt="x",
            llm=LLM,
            system_prompt="You operate fixturectl.",
            human_in_the_loop=True,
            memory=MemoryOptions(store=store),
            knowledge=KnowledgeOptions(searcher=FakeSearcher(), max_injected_tokens=100),
            provider=provider,
        ),
        provider,
    )
    system = request.system
    assert system[0] == "You operate fixturectl."
    assert system[1].startswith("You are running as a non-interactive agent")
    assert system[2].startswith("You have a persistent memory")
    assert system[3].startswith("You have a searchable knowledge base")
    assert system[4].endswith("<memory-index>\n- layout: Where things live\n</memory-index>")
    names = [d.name for d in request.tools]
    assert names[:3] == ["ask_human_confirm", "ask_human_select", "ask_human_input"]
    assert "knowledge_search" in names


async def test_a_built_in_clashing_with_an_application_tool_stops_setup() -> None:
    clash = FakeTool(name="memory_read", description="app's own")
    with pytest.raises(SetupError) as caught:
        await run(
            RunOptions(
                prompt="x",
                llm=LLM,
                app_tools=[clash],
                memory=MemoryOptions(store=InMemoryMemoryStore()),
                provider=ScriptedProvider.of(),
            )
        )
    assert str(caught.value).startswith('memory adds a built-in tool "memory_read" but the application already')


async def test_no_tools_at_all_names_the_config_file() -> None:
    with pytest.raises(SetupError) as caught:
        await run(
            RunOptions(prompt="x", llm=LLM, has_application=False, config_file="a.yaml", provider=ScriptedProvider.of())
        )
    assert str(caught.value).startswith("no tools available: this agent wraps no application")
    assert '"a.yaml"' in str(caught.value)


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://example.com", "uses http to a non-loopback host"),
        ("https://user:pw@example.com", "must not embed userinfo credentials"),
        ("ftp://127.0.0.1", "scheme must be http or https"),
    ],
)
async def test_a_bad_base_url_is_refused_before_anything_runs(url: str, fragment: str) -> None:
    with pytest.raises(SetupError) as caught:
        await run(RunOptions(prompt="x", llm=LLM, custom_tools=[FakeTool(name="t", description="t")], base_url=url))
    assert fragment in str(caught.value)


async def test_an_environment_base_url_is_validated_like_a_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://models.example.com")
    with pytest.raises(SetupError) as caught:
        await run(RunOptions(prompt="x", llm=LLM, custom_tools=[FakeTool(name="t", description="t")], api_key="k"))
    assert "uses http to a non-loopback host" in str(caught.value)
