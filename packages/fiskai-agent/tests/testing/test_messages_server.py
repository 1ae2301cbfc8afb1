"""The scripted Messages server, driven by the real anthropic SDK over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from fiskai_agent.testing import (
    Drop,
    Failure,
    Hang,
    MessagesServer,
    RecordedRequest,
    Step,
    Turn,
    Usage,
    redacted_thinking,
    text,
    thinking,
    tool_search,
    tool_use,
)

_TOOLS: list[Any] = [
    {"name": "cluster_status", "description": "Show the cluster", "input_schema": {"type": "object"}},
    {
        "name": "node_restart",
        "description": "Restart a node",
        "input_schema": {"type": "object", "properties": {"node": {"type": "string"}}},
        "defer_loading": True,
    },
    {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
]


_OPEN: list[anthropic.Anthropic] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _client(server: MessagesServer, **kwargs: Any) -> anthropic.Anthropic:
    client = anthropic.Anthropic(api_key="test", base_url=server.base_url, **kwargs)
    _OPEN.append(client)
    return client


def _full_turn() -> Turn:
    return Turn(
        [
            thinking("I should look for the restart tool.", signature="c2ln"),
            *tool_search("restart a node", ["node_restart"], id="srvtoolu_1"),
            text("Restarting node **n1**."),
            tool_use("node_restart", {"node": "n1", "force": False}, id="toolu_1"),
        ],
        usage=Usage(input_tokens=10, output_tokens=5, cache_read_input_tokens=100, cache_creation_input_tokens=7),
    )


def _create(client: anthropic.Anthropic, tools: list[Any] = _TOOLS) -> anthropic.types.Message:
    return client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=1024,
        messages=[{"role": "user", "content": "restart n1"}],
        tools=tools,
    )


def _assert_full_turn(message: anthropic.types.Message) -> None:
    assert [block.type for block in message.content] == [
        "thinking",
        "server_tool_use",
        "tool_search_tool_result",
        "text",
        "tool_use",
    ]
    first = message.content[0]
    assert first.type == "thinking"
    assert (first.thinking, first.signature) == ("I should look for the restart tool.", "c2ln")
    search = message.content[1]
    assert search.type == "server_tool_use"
    assert (search.id, search.input) == ("srvtoolu_1", {"query": "restart a node"})
    result = message.content[2]
    assert result.type == "tool_search_tool_result"
    references: Any = result.to_dict()["content"]
    assert references["tool_references"] == [{"type": "tool_reference", "tool_name": "node_restart"}]
    call = message.content[4]
    assert call.type == "tool_use"
    assert (call.id, call.name, call.input) == ("toolu_1", "node_restart", {"node": "n1", "force": False})
    assert message.stop_reason == "tool_use"
    usage = message.usage
    assert (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
    ) == (10, 5, 100, 7)


def test_json_turn_round_trips_every_block_kind_through_the_sdk() -> None:
    with MessagesServer([_full_turn()]) as server:
        message = _create(_client(server))
    _assert_full_turn(message)
    (request,) = server.requests
    assert not request.stream
    assert request.tool_names == ["cluster_status", "node_restart", "tool_search_tool_bm25"]
    assert request.deferred_tool_names == ["node_restart"]
    assert request.loaded_tool_names == ["cluster_status"]
    assert request.headers["authorization"] == "Bearer test"


def test_streamed_turn_accumulates_to_the_same_message() -> None:
    with (
        MessagesServer([_full_turn()]) as server,
        _client(server).messages.stream(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            messages=[{"role": "user", "content": "restart n1"}],
            tools=_TOOLS,
        ) as stream,
    ):
        kinds = [event.type for event in stream]
        message = stream.get_final_message()
    _assert_full_turn(message)
    assert server.requests[0].stream
    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    assert kinds.count("content_block_stop") == 5


def test_raw_input_is_sent_as_written_in_json_and_in_stream_fragments() -> None:
    raw = '{"ratio": 1.50, "count": 1e2, "note": "1.50"}'
    turn = Turn([tool_use("node_restart", id="toolu_raw", raw_input=raw), text("1.50 stays text")])
    with MessagesServer([turn, turn]) as server:
        client = _client(server)
        body = client.messages.with_raw_response.create(
            model="claude-sonnet-4-6", max_tokens=1024, messages=[{"role": "user", "content": "x"}], tools=_TOOLS
        ).http_response.read()
        with client.messages.with_streaming_response.create(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            messages=[{"role": "user", "content": "x"}],
            tools=_TOOLS,
            stream=True,
        ) as streamed:
            events = [
                json.loads(line.removeprefix("data: ")) for line in streamed.iter_lines() if line.startswith("data: ")
            ]
    assert b'"input": {"ratio": 1.50, "count": 1e2, "note": "1.50"}' in body
    assert json.loads(body)["content"][1] == {"type": "text", "text": "1.50 stays text"}
    fragments = [
        event["delta"]["partial_json"]
        for event in events
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta"
    ]
    assert len(fragments) > 1 and "".join(fragments) == raw
    (start,) = [event for event in events if event["type"] == "content_block_start" and event["index"] == 0]
    assert start["content_block"]["input"] == {}


@pytest.mark.parametrize("raw", ["null", '"x"', "[1]"])
def test_raw_input_may_be_no_object(raw: str) -> None:
    with MessagesServer([Turn([tool_use("node_restart", raw_input=raw)])]) as server:
        body = (
            _client(server)
            .messages.with_raw_response.create(
                model="claude-sonnet-4-6", max_tokens=1024, messages=[{"role": "user", "content": "x"}], tools=_TOOLS
            )
            .http_response.read()
        )
    assert json.loads(body)["content"][0]["input"] == json.loads(raw)


def test_assistant_turn_sent_back_verbatim_is_recorded_for_assertions() -> None:
    with MessagesServer([_full_turn(), Turn([text("done")])]) as server:
        client = _client(server)
        first = _create(client)
        client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            system=[{"type": "text", "text": "be careful", "cache_control": {"type": "ephemeral"}}],
            thinking={"type": "adaptive", "display": "summarized"},
            messages=[
                {"role": "user", "content": "restart n1"},
                {"role": "assistant", "content": [b.to_dict() for b in first.content]},  # pyright: ignore[reportArgumentType]
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}],
                },
            ],
            tools=_TOOLS,
        )
    second = server.requests[1]
    assert second.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert second.body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assistant = second.messages[1]["content"]
    assert [block["type"] for block in assistant] == [
        "thinking",
        "server_tool_use",
        "tool_search_tool_result",
        "text",
        "tool_use",
    ]
    assert assistant[0]["signature"] == "c2ln"
    assert second.tool_results() == [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]


@pytest.mark.parametrize("status", [429, 529])
def test_retryable_failures_are_retried_by_the_sdk_and_seen_by_the_server(status: int) -> None:
    script = [Failure(status, retry_after=0.001), Failure(status, retry_after=0.001), Turn([text("hello")])]
    with MessagesServer(script) as server:
        message = _create(_client(server, max_retries=2))
    assert message.content[0].type == "text"
    assert [r.retry_count for r in server.requests] == [0, 1, 2]
    assert len(server.service_seconds) == 3
    assert all(seconds >= 0 for seconds in server.service_seconds)


def test_retries_exhausted_surface_the_status_error() -> None:
    with MessagesServer([Failure(529, "Overloaded", retry_after=0.001)] * 2) as server:
        with pytest.raises(anthropic.OverloadedError) as caught:
            _create(_client(server, max_retries=1))
    assert caught.value.status_code == 529
    assert caught.value.body == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert len(server.requests) == 2


def test_bad_request_is_not_retried() -> None:
    with MessagesServer([Failure(400, "messages: roles must alternate")]) as server:
        with pytest.raises(anthropic.BadRequestError) as caught:
            _create(_client(server, max_retries=2))
    assert caught.value.status_code == 400
    assert len(server.requests) == 1


def test_hang_ends_in_the_client_timeout_and_the_retry_is_served() -> None:
    with MessagesServer([Hang(), Turn([text("after the hang")])]) as server:
        message = _create(_client(server, timeout=httpx2.Timeout(0.3, connect=2.0), max_retries=1))
    block = message.content[0]
    assert block.type == "text"
    assert block.text == "after the hang"
    assert [r.retry_count for r in server.requests] == [0, 1]
    assert len(server.service_seconds) == 1


def test_hang_without_retries_raises_the_timeout() -> None:
    with MessagesServer([Hang()]) as server:
        with pytest.raises(anthropic.APITimeoutError):
            _create(_client(server, timeout=0.3, max_retries=0))


def test_dropped_connection_is_a_connection_error() -> None:
    with MessagesServer([Drop()]) as server:
        with pytest.raises(anthropic.APIConnectionError):
            _create(_client(server, max_retries=0))


def test_exhausted_script_answers_an_unretried_500_naming_the_request() -> None:
    with MessagesServer([]) as server:
        with pytest.raises(anthropic.InternalServerError) as caught:
            _create(_client(server, max_retries=2))
    assert "script exhausted at request 1" in str(caught.value.body)
    assert len(server.requests) == 1


def test_responder_builds_turns_from_the_request() -> None:
    def respond(request: RecordedRequest) -> Turn:
        results = request.tool_results()
        if not results:
            return Turn([tool_use("cluster_status", {})])
        return Turn([text(f"status said: {results[0]['content']}")])

    with MessagesServer(responder=respond) as server:
        client = _client(server)
        first = _create(client)
        call = first.content[0]
        assert call.type == "tool_use"
        assert call.id.startswith("toolu_")
        second = client.messages.create(
            model="m",
            max_tokens=100,
            messages=[
                {"role": "user", "content": "status?"},
                {"role": "assistant", "content": [call.to_dict()]},  # pyright: ignore[reportArgumentType]
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "green"}]},
            ],
        )
    reply = second.content[0]
    assert reply.type == "text"
    assert reply.text == "status said: green"


def test_callable_step_and_explicit_stop_reasons() -> None:
    script: list[Step] = [
        lambda request: Turn([text(f"{len(request.messages)} message(s)")], stop_reason="pause_turn"),
        Turn([redacted_thinking(), text("cut")], stop_reason="max_tokens"),
    ]
    with MessagesServer(script) as server:
        client = _client(server)
        paused = _create(client)
        truncated = _create(client)
    assert paused.stop_reason == "pause_turn"
    assert paused.content[0].type == "text"
    assert paused.content[0].text == "1 message(s)"
    assert truncated.stop_reason == "max_tokens"
    assert truncated.content[0].type == "redacted_thinking"


def test_usage_is_estimated_from_sizes_when_not_scripted() -> None:
    with MessagesServer([Turn([text("x" * 400)])]) as server:
        message = _create(_client(server))
    raw = server.requests[0].raw
    assert message.usage.input_tokens == -(-len(raw) // 4)
    assert message.usage.output_tokens >= 100


def test_local_mode_rejects_defer_loading_and_search_tools_and_never_caches() -> None:
    plain = [{"name": "cluster_status", "description": "Show", "input_schema": {"type": "object"}}]
    search_only: list[Any] = [*plain, {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}]
    deferred_only: list[Any] = [*plain, {**plain[0], "name": "node_restart", "defer_loading": True}]
    turn = Turn([text("ok")], usage=Usage(input_tokens=5, output_tokens=1, cache_read_input_tokens=50))
    with MessagesServer([turn], local=True) as server:
        client = _client(server, max_retries=2)
        with pytest.raises(anthropic.BadRequestError) as search_error:
            _create(client, tools=search_only)
        with pytest.raises(anthropic.BadRequestError) as defer_error:
            _create(client, tools=deferred_only)
        message = client.messages.create(
            model="qwen3",
            max_tokens=10,
            messages=[{"role": "user", "content": "hi"}],
            tools=plain,  # pyright: ignore[reportArgumentType]
            system=[{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
        )
    assert "tool_search_tool_bm25_20251119" in str(search_error.value.body)
    assert "tools.1.defer_loading" in str(defer_error.value.body)
    assert message.usage.cache_read_input_tokens == 0
    # Rejections are final (no retries) and do not consume the script.
    assert len(server.requests) == 3
    assert server.remaining == 0


def test_wait_for_requests_times_out_with_the_count_seen() -> None:
    with MessagesServer([]) as server, pytest.raises(TimeoutError) as caught:
        server.wait_for_requests(1, timeout=0.05)
    assert "saw 0 request(s)" in str(caught.value)


def test_unknown_path_is_a_404() -> None:
    with MessagesServer([]) as server:
        with httpx2.Client() as http:
            response = http.post(server.base_url + "/v1/complete", json={})
    assert response.status_code == 404
    assert json.loads(response.content)["error"]["type"] == "not_found_error"
    assert server.requests == []
