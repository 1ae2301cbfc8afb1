"""The Anthropic adapter through the real SDK against the scripted Messages server (JSON and SSE)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Protocol

import anyio
import pytest

from fiskai_agent import RunOptions, SetupError, run
from fiskai_agent.errors import ProviderError
from fiskai_agent.llm import (
    HttpExchange,
    Message,
    Provider,
    ProviderBlock,
    ProviderSettings,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    create_provider,
)
from fiskai_agent.llm._stream import collect_stream
from fiskai_agent.testing import (
    Drop,
    Failure,
    Hang,
    MessagesServer,
    RecordingEvents,
    Turn,
    Usage as WireUsage,
    redacted_thinking,
    text,
    thinking,
    tool_search,
    tool_use,
)
from fiskai_core.config import BudgetSettings, LLMSettings
from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import command_tools
from fiskai_core.testing import write_fake_app
from fiskai_core.tools import JsonNumber, Tool, ToolSet

pytestmark = pytest.mark.anyio

MODEL = "claude-sonnet-4-6"
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"stream": {"type": "string", "description": "Stream name"}, "n": {"type": "integer"}},
    "required": ["stream"],
}


class App(Protocol):
    tools: list[Tool]

    def calls(self) -> list[str]: ...


class Observed:
    def __init__(self) -> None:
        self.exchanges: list[HttpExchange] = []

    def exchange(self, exchange: HttpExchange) -> None:
        self.exchanges.append(exchange)


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    with MessagesServer() as running:
        yield running


def _provider(server: MessagesServer, **settings: Any) -> Provider:
    return create_provider(
        "anthropic", ProviderSettings(model=MODEL, api_key="test", base_url=server.base_url, **settings)
    )


def _request(**fields: Any) -> Request:
    base: dict[str, Any] = {
        "model": MODEL,
        "system": ("You operate NATS.", "Memory note."),
        "messages": (Message(role="user", content=(TextBlock(text="list streams"),)),),
        "tools": (
            ToolDef(name="stream_ls", description="List streams", input_schema=_SCHEMA, defer_loading=True),
            ToolDef(name="memory_list", description="List memory", input_schema={"type": "object"}),
        ),
        "tool_search": True,
        "thinking": True,
        "max_output_tokens": 16384,
        "prompt_cache": True,
    }
    base.update(fields)
    return Request(**base)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_request_carries_caching_deferral_search_and_thinking(server: MessagesServer, stream: bool) -> None:
    server.add(
        Turn(
            [thinking("Look at streams."), text("Here:"), tool_use("stream_ls", {"stream": "ORDERS"}, id="toolu_1")],
            usage=WireUsage(
                input_tokens=100, output_tokens=20, cache_read_input_tokens=50, cache_creation_input_tokens=7
            ),
        )
    )
    provider = _provider(server, stream=stream)
    try:
        with anyio.fail_after(10):
            response = await provider.call(_request())
    finally:
        await provider.aclose()
    (sent,) = server.requests
    assert sent.stream is stream
    body = sent.body
    assert body["system"] == [
        {"type": "text", "text": "You operate NATS."},
        {"type": "text", "text": "Memory note.", "cache_control": {"type": "ephemeral"}},
    ]
    assert body["cache_control"] == {"type": "ephemeral"}
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["max_tokens"] == 16384
    assert body["tools"] == [
        {
            "type": "custom",
            "name": "stream_ls",
            "description": "List streams",
            "defer_loading": True,
            "input_schema": {
                "type": "object",
                "properties": {
                    "stream": {"type": "string", "description": "Stream name"},
                    "n": {"type": "integer", "description": "Optional."},
                },
                "required": ["stream"],
            },
        },
        {
            "type": "custom",
            "name": "memory_list",
            "description": "List memory",
            "defer_loading": False,
            "input_schema": {"type": "object"},
        },
        {"type": "tool_search_tool_bm25", "name": "tool_search_tool_bm25"},
    ]
    assert _SCHEMA["properties"]["n"] == {"type": "integer"}, "the tool's own schema is never mutated"
    assert response.stop_reason == "tool_use"
    assert response.message.content == (
        ThinkingBlock(text="Look at streams.", signature="c2lnbmF0dXJl"),
        TextBlock(text="Here:"),
        ToolUseBlock(id="toolu_1", name="stream_ls", input={"stream": "ORDERS"}, exact={"stream": "ORDERS"}),
    )
    assert response.message.tool_uses[0].arguments == {"stream": "ORDERS"}
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_create_tokens) == (
        100,
        20,
        50,
        7,
    )


async def test_tool_search_blocks_and_thinking_go_back_verbatim(server: MessagesServer) -> None:
    server.add(
        Turn([thinking("hmm", "c2ln"), *tool_search("streams", ["stream_ls"]), tool_use("stream_ls", {"stream": "A"})]),
        Turn([text("done")]),
    )
    provider = _provider(server)
    try:
        first = await provider.call(_request())
        kinds = [type(b).__name__ for b in first.message.content]
        assert kinds == ["ThinkingBlock", "ProviderBlock", "ProviderBlock", "ToolUseBlock"]
        search_result = first.message.content[2]
        assert isinstance(search_result, ProviderBlock) and search_result.kind == "tool_search_tool_result"
        (use,) = first.message.tool_uses
        follow = _request(
            messages=(
                *_request().messages,
                first.message,
                Message(role="user", content=(ToolResultBlock(tool_use_id=use.id, content="[]"),)),
            )
        )
        await provider.call(follow)
    finally:
        await provider.aclose()
    assistant = server.requests[1].body["messages"][1]["content"]
    assert assistant[1:3] == tool_search("streams", ["stream_ls"])
    assert assistant[0] == {"type": "thinking", "thinking": "hmm", "signature": "c2ln"}
    assert assistant[2]["content"]["tool_references"] == [{"type": "tool_reference", "tool_name": "stream_ls"}]
    assert server.requests[1].tool_results() == [{"type": "tool_result", "tool_use_id": use.id, "content": "[]"}]


@pytest.mark.parametrize("status", [429, 529])
async def test_rate_limits_and_overload_are_retried(server: MessagesServer, status: int) -> None:
    observed = Observed()
    server.add(Failure(status, retry_after=0.01), Turn([text("ok")]))
    provider = _provider(server, observer=observed)
    try:
        response = await provider.call(_request())
    finally:
        await provider.aclose()
    assert response.message.text == "ok"
    assert [r.retry_count for r in server.requests] == [0, 1]
    assert [(e.attempt, e.status) for e in observed.exchanges] == [(0, status), (1, 200)]
    assert observed.exchanges[1].response_body is not None


async def test_a_hung_response_hits_the_call_timeout(server: MessagesServer) -> None:
    server.add(Hang())
    provider = _provider(server, call_timeout=0.5, max_retries=0)
    try:
        with anyio.fail_after(10), pytest.raises(ProviderError) as caught:
            await provider.call(_request())
    finally:
        await provider.aclose()
    assert "did not finish within 0.5s (llm.budget.call_timeout)" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "message", "failure"),
    [
        (429, "rate limited", "busy"),
        (529, "overloaded", "busy"),
        (503, "unavailable", "busy"),
        (401, "invalid x-api-key", "refused"),
        (403, "forbidden", "refused"),
        (404, "model: claude-nope", "refused"),
        (413, "request too large", "context_exceeded"),
        (400, "prompt is too long: 250000 tokens > 200000 maximum", "context_exceeded"),
        (400, "roles must alternate", "other"),
        (500, "internal", "other"),
    ],
)
async def test_the_sdk_exception_type_decides_the_kind_of_failure(
    server: MessagesServer, status: int, message: str, failure: str
) -> None:
    server.add(Failure(status, message))
    provider = _provider(server, max_retries=0)
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.call(_request())
    finally:
        await provider.aclose()
    assert (caught.value.status, caught.value.failure) == (status, failure)


async def test_a_400_with_thinking_suggests_turning_it_off(server: MessagesServer) -> None:
    server.add(Failure(400, "thinking is not supported"))
    provider = _provider(server, max_retries=0)
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.call(_request())
    finally:
        await provider.aclose()
    assert caught.value.status == 400
    assert str(caught.value) == (
        "HTTP 400 from the model API: thinking is not supported; "
        f'model "{MODEL}" may not support thinking, set llm.thinking.enabled to false'
    )


async def test_pause_turn_passes_through(server: MessagesServer) -> None:
    server.add(Turn([*tool_search("x", [])], stop_reason="pause_turn"))
    provider = _provider(server)
    try:
        response = await provider.call(_request())
    finally:
        await provider.aclose()
    assert response.stop_reason == "pause_turn" and response.message.tool_uses == ()


async def test_a_run_drives_real_commands_through_the_sdk(server: MessagesServer, app: App) -> None:
    server.add(
        Turn([text("Checking."), tool_use("cluster_config_get", {"key": "region"})]),
        Turn([text("Region is unset.")]),
    )
    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="region?",
            llm=LLMSettings(model=MODEL, budget=BudgetSettings()),
            tools=ToolSet.of(app.tools),
            provider=ProviderSettings(model=MODEL, api_key="test", base_url=server.base_url),
            events=events,
        )
    )
    assert (result.reason, result.answer) == ("completed", "Region is unset.")
    assert app.calls() == ["cluster config get -- region"]
    second = server.requests[1]
    (result_block,) = second.tool_results()
    assert '"exit_code":0' in str(result_block["content"])
    assert events.info.provider == "anthropic" and events.info.prompt_cache


async def test_a_local_model_runs_without_tool_search_caching_or_thinking(app: App) -> None:
    with MessagesServer(local=True) as local:
        local.add(Turn([text("hello from a local model")]))
        events = RecordingEvents()
        result = await run(
            RunOptions(
                prompt="hi",
                llm=LLMSettings(model="qwen3:8b"),
                tools=ToolSet.of(app.tools),
                provider=ProviderSettings(model="qwen3:8b", base_url=local.base_url),
                events=events,
            )
        )
        assert result.answer == "hello from a local model"
        body = local.requests[0].body
        assert "cache_control" not in body and "thinking" not in body
        assert all("defer_loading" not in t for t in body["tools"])
        assert "capabilities_reduced" in events.advisory_kinds()


async def test_without_credentials_or_a_base_url_the_run_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SetupError) as caught:
        create_provider("anthropic", ProviderSettings(model=MODEL))
    assert "set ANTHROPIC_API_KEY" in str(caught.value) and "ANTHROPIC_BASE_URL" in str(caught.value)


async def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(SetupError) as caught:
        create_provider("openai", ProviderSettings(model=MODEL))
    assert str(caught.value) == 'unknown llm provider "openai": known providers are [anthropic]'


async def test_the_nats_cli_runs_end_to_end_with_its_tools_deferred(
    server: MessagesServer, natscli: Path, tmp_path: Path
) -> None:
    """Steps:
    1. 221 real NATS CLI commands go to the server deferred, with the BM25 search tool last.
    2. The model searches, loads `stream_ls` and calls it; the command runs; the search blocks go back intact.
    """
    tools = command_tools(load_application(str(write_fake_app(tmp_path, natscli, name="nats"))))
    server.add(
        Turn([*tool_search("list streams", ["stream_ls"]), tool_use("stream_ls", {})]),
        Turn([text("No streams yet.")]),
    )
    result = await run(
        RunOptions(
            prompt="what streams exist?",
            llm=LLMSettings(model=MODEL),
            tools=ToolSet.of(tools),
            provider=ProviderSettings(model=MODEL, api_key="t", base_url=server.base_url),
        )
    )
    assert result.answer == "No streams yet."
    first, second = server.requests
    assert len(first.deferred_tool_names) >= 200
    assert first.tool_names[-1] == "tool_search_tool_bm25"
    assert set(first.loaded_tool_names) == {t.name for t in tools if "ai:no_defer" in t.tags}
    assert second.messages[1]["content"][:2] == tool_search("list streams", ["stream_ls"])
    assert (tmp_path / "nats.calls").read_text(encoding="utf-8").startswith("[stream]\n[ls]\n")


async def test_a_dropped_connection_is_a_provider_error_naming_the_server(server: MessagesServer) -> None:
    server.add(Drop())
    provider = _provider(server, max_retries=0)
    try:
        with anyio.fail_after(10), pytest.raises(ProviderError) as caught:
            await provider.call(_request())
    finally:
        await provider.aclose()
    assert str(caught.value).startswith(f"cannot reach {server.base_url}")


async def test_a_large_output_cap_switches_to_streaming(server: MessagesServer) -> None:
    server.add(Turn([text("long answer")]))
    provider = _provider(server)
    try:
        response = await provider.call(_request(max_output_tokens=32000))
    finally:
        await provider.aclose()
    assert response.message.text == "long answer"
    assert server.requests[0].stream and server.requests[0].body["max_tokens"] == 32000


async def test_redacted_thinking_goes_back_unchanged(server: MessagesServer) -> None:
    server.add(Turn([redacted_thinking("b3BhcXVl"), text("ok")]), Turn([text("again")]))
    provider = _provider(server)
    try:
        first = await provider.call(_request())
        assert first.message.content[0] == ProviderBlock(
            kind="redacted_thinking", raw={"type": "redacted_thinking", "data": "b3BhcXVl"}
        )
        follow = (
            *_request().messages,
            first.message,
            Message(role="user", content=(TextBlock(text="more"),)),
        )
        await provider.call(_request(messages=follow))
    finally:
        await provider.aclose()
    assert server.requests[1].messages[1]["content"][0] == {"type": "redacted_thinking", "data": "b3BhcXVl"}


@pytest.mark.parametrize(
    ("template", "fragment"),
    [
        ("http://user:pw@{host}", "must not embed userinfo credentials"),
        ("ftp://{host}", "scheme must be http or https"),
    ],
)
async def test_an_environment_base_url_is_validated_like_a_flag(
    server: MessagesServer, app: App, monkeypatch: pytest.MonkeyPatch, template: str, fragment: str
) -> None:
    # The SDK reads ANTHROPIC_BASE_URL itself when no base URL is passed; the provider must read and check
    # it first, or a run would send the key and the conversation wherever the environment says, unchecked.
    server.add(Turn([text("should never be asked")]))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", template.format(host=server.base_url.removeprefix("http://")))
    with pytest.raises(SetupError) as caught:
        await run(
            RunOptions(
                prompt="x",
                llm=LLMSettings(model=MODEL),
                tools=ToolSet.of(app.tools),
                provider=ProviderSettings(model=MODEL, api_key="k", max_retries=0),
            )
        )
    assert fragment in str(caught.value) and "ANTHROPIC_BASE_URL" in str(caught.value)
    assert server.requests == []


async def test_an_environment_base_url_decides_the_capabilities(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    with MessagesServer(local=True) as local:
        local.add(Turn([text("hello from a local model")]))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", local.base_url)
        result = await run(RunOptions(prompt="hi", llm=LLMSettings(model="qwen3:8b"), tools=ToolSet.of(app.tools)))
        assert result.answer == "hello from a local model"
        assert "cache_control" not in local.requests[0].body


class _Event:
    """One SSE event as the SDK hands it over (only `to_dict` is read)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def to_dict(self) -> dict[str, Any]:
        return self._data


async def _events(*data: dict[str, Any]) -> AsyncIterator[_Event]:
    for item in data:
        yield _Event(item)


async def test_a_streamed_tool_input_sent_whole_in_its_start_event_is_kept() -> None:
    # Some Anthropic-compatible servers stream a tool call's input in content_block_start and send no
    # input_json_delta; the SDK's own accumulator keeps it, and so must ours.
    start = {"type": "message_start", "message": {"id": "m", "model": MODEL, "usage": {"input_tokens": 3}}}
    block = {"type": "tool_use", "id": "toolu_1", "name": "stream_ls", "input": {"stream": "ORDERS", "n": 2}}
    response = await collect_stream(
        _events(
            start,
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 4}},
        )
    )
    (use,) = response.message.tool_uses
    assert use.input == {"stream": "ORDERS", "n": 2}
    assert use.arguments == {"stream": "ORDERS", "n": JsonNumber("2")}
