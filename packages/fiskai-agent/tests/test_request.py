"""What each model request carries: deferral sets, the search flag, thinking, output caps, caching, system blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pytest

from fiskai_agent import RunOptions, SetupError, run
from fiskai_agent.llm import Capabilities, Request, validate_base_url
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer
from fiskai_core.builtins import KnowledgeAccess, agent_tool_set
from fiskai_core.config import BudgetSettings, LLMSettings, ThinkingSettings
from fiskai_core.errors import ToolSelectionError
from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import command_tools
from fiskai_core.prompter import DenyPrompter
from fiskai_core.testing import FakeSearcher, FakeTool, write_fake_app
from fiskai_core.tools import Tool, ToolSet
from fiskai_memory import ToolAccess, build_memory_index
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
    tool_set = agent_tool_set(application=tools, memory=ToolAccess(InMemoryMemoryStore()))
    request = await _first_request(RunOptions(prompt="streams?", llm=LLM, tools=tool_set, provider=provider), provider)
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
    request = await _first_request(RunOptions(prompt="x", llm=LLM, tools=ToolSet.of(few), provider=provider), provider)
    assert not request.tool_search
    assert [d.defer_loading for d in request.tools] == [False] * 5


async def test_built_ins_count_toward_the_threshold(app: App) -> None:
    six = [t for t in app.tools if "ai:no_defer" not in t.tags][:6]
    provider = ScriptedProvider.of(answer("ok"))
    request = await _first_request(
        RunOptions(
            prompt="x",
            llm=LLM,
            tools=agent_tool_set(application=six, memory=ToolAccess(InMemoryMemoryStore())),
            provider=provider,
        ),
        provider,
    )
    assert request.tool_search
    assert [d.defer_loading for d in request.tools] == [True] * 6 + [False] * 4


async def test_a_backend_without_tool_search_gets_find_tools_instead_of_the_deferred_tools(app: App) -> None:
    provider = ScriptedProvider.of(answer("ok"), capabilities=Capabilities(provider="anthropic"))
    events = RecordingEvents()
    # 12 definitions of about 500 tokens each: over the default budget of 4,096 tokens.
    many = [FakeTool(name=f"t{i}", description="t" * 2000) for i in range(12)]
    request = await _first_request(
        RunOptions(prompt="x", llm=LLM, tools=ToolSet.of(many, "custom"), provider=provider, events=events), provider
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
        RunOptions(prompt="x", llm=settings, tools=ToolSet.of(many, "custom"), provider=provider, events=events),
        provider,
    )
    assert not request.tool_search
    (advisory,) = events.advisories
    assert advisory.kind == "tool_search_disabled" and advisory.message.startswith("12 tools are available")


async def test_thinking_raises_the_output_cap_and_an_explicit_cap_wins() -> None:
    tool = [FakeTool(name="t", description="t")]
    provider = ScriptedProvider.of(answer("ok"))
    thinking = LLMSettings(model="claude-sonnet-4-6", thinking=ThinkingSettings(enabled=True))
    request = await _first_request(
        RunOptions(prompt="x", llm=thinking, tools=ToolSet.of(tool, "custom"), provider=provider), provider
    )
    assert request.thinking and request.max_output_tokens == 16384
    provider = ScriptedProvider.of(answer("ok"))
    plain = await _first_request(
        RunOptions(prompt="x", llm=LLM, tools=ToolSet.of(tool, "custom"), provider=provider), provider
    )
    assert not plain.thinking and plain.max_output_tokens == 8192
    provider = ScriptedProvider.of(answer("ok"))
    explicit = LLMSettings(
        model="claude-sonnet-4-6",
        thinking=ThinkingSettings(enabled=True),
        budget=BudgetSettings(max_output_tokens=3000),
    )
    capped = await _first_request(
        RunOptions(prompt="x", llm=explicit, tools=ToolSet.of(tool, "custom"), provider=provider), provider
    )
    assert capped.max_output_tokens == 3000


async def test_capabilities_decide_thinking_and_caching_per_run() -> None:
    tool = [FakeTool(name="t", description="t")]
    provider = ScriptedProvider.of(answer("ok"), capabilities=Capabilities(provider="anthropic"))
    thinking = LLMSettings(model="claude-sonnet-4-6", thinking=ThinkingSettings(enabled=True))
    request = await _first_request(
        RunOptions(prompt="x", llm=thinking, tools=ToolSet.of(tool, "custom"), provider=provider), provider
    )
    assert not request.thinking and not request.prompt_cache and request.max_output_tokens == 8192
    provider = ScriptedProvider.of(answer("ok"))
    cached = await _first_request(
        RunOptions(prompt="x", llm=LLM, tools=ToolSet.of(tool, "custom"), provider=provider, interactive=True), provider
    )
    assert cached.prompt_cache and cached.cache_ttl == "1h"


async def test_system_blocks_come_in_order_with_the_memory_index_last() -> None:
    store = InMemoryMemoryStore()
    await store.write("layout", "Where things live", "body")
    provider = ScriptedProvider.of(answer("ok"))
    index = await build_memory_index(store)
    assert index is not None
    request = await _first_request(
        RunOptions(
            prompt="x",
            llm=LLM,
            system_prompt="You operate fixturectl.",
            tools=agent_tool_set(
                ask_human=DenyPrompter(),
                memory=ToolAccess(store),
                knowledge=KnowledgeAccess(FakeSearcher(), max_injected_tokens=100),
                has_application=False,
            ),
            start_context=[index],
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
    assert len(system) == 5
    names = [d.name for d in request.tools]
    assert names[:3] == ["ask_human_confirm", "ask_human_select", "ask_human_input"]
    assert "knowledge_search" in names


def test_a_built_in_clashing_with_an_application_tool_stops_the_tool_set() -> None:
    clash = FakeTool(name="memory_read", description="app's own")
    with pytest.raises(ToolSelectionError) as caught:
        agent_tool_set(application=[clash], memory=ToolAccess(InMemoryMemoryStore()))
    assert str(caught.value) == (
        'a built-in adds a tool "memory_read" but the application already has that name; exclude or rename one of them'
    )


def test_every_clash_names_both_parts() -> None:
    tool = FakeTool(name="status", description="x")
    with pytest.raises(ToolSelectionError) as caught:
        agent_tool_set(application=[tool], remote=[(FakeTool(name="status", description="peer"), "ops")])
    assert str(caught.value).startswith('remote_tools adds a tool "status" but the application already has that name')
    with pytest.raises(ToolSelectionError) as caught:
        ToolSet.of([tool, tool], "custom")
    assert str(caught.value).startswith('a custom tool adds a tool "status" but a custom tool already has that name')
    with pytest.raises(ToolSelectionError, match="^the application adds a tool with an empty name$"):
        ToolSet.of([FakeTool(name="", description="x")])


async def test_no_tools_at_all_names_the_config_file() -> None:
    with pytest.raises(SetupError) as caught:
        await run(
            RunOptions(
                prompt="x",
                llm=LLM,
                tools=ToolSet((), has_application=False),
                config_file="a.yaml",
                provider=ScriptedProvider.of(),
            )
        )
    assert str(caught.value).startswith("no tools available: this agent wraps no application")
    assert '"a.yaml"' in str(caught.value)
    with pytest.raises(SetupError) as caught:
        await run(
            RunOptions(prompt="x", llm=LLM, tools=ToolSet(), config_file="a.yaml", provider=ScriptedProvider.of())
        )
    assert str(caught.value) == 'no tools available after filtering; check include/exclude in "a.yaml"'


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://example.com", "uses http to a non-loopback host"),
        ("https://user:pw@example.com", "must not embed userinfo credentials"),
        ("ftp://127.0.0.1", "scheme must be http or https"),
    ],
)
def test_a_bad_base_url_is_refused(url: str, fragment: str) -> None:
    with pytest.raises(SetupError) as caught:
        validate_base_url(url)
    assert fragment in str(caught.value)
    assert validate_base_url("http://127.0.0.1:11434") == "http://127.0.0.1:11434"
