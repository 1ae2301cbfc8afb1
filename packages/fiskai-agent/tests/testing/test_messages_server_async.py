"""The scripted Messages server with the SDK's async client (JSON, streaming, retries, timeouts)."""

from __future__ import annotations

import anthropic
import anyio
import pytest

from fiskai_agent.testing import Failure, Hang, MessagesServer, Turn, text, thinking, tool_use

pytestmark = pytest.mark.anyio


async def test_async_client_streams_thinking_and_tool_use_after_a_retry() -> None:
    script = [
        Failure(429, "slow down", retry_after=0.001),
        Turn([thinking("check first"), text("Checking."), tool_use("cluster_status", {"verbose": True})]),
    ]
    with MessagesServer(script) as server:
        client = anthropic.AsyncAnthropic(api_key="test", base_url=server.base_url, max_retries=1)
        with anyio.fail_after(10):
            async with client.messages.stream(
                model="claude-sonnet-4-6", max_tokens=256, messages=[{"role": "user", "content": "status"}]
            ) as stream:
                message = await stream.get_final_message()
            await client.close()
    assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
    call = message.content[2]
    assert call.type == "tool_use"
    assert call.input == {"verbose": True}
    assert message.stop_reason == "tool_use"
    assert [(r.stream, r.retry_count) for r in server.requests] == [(True, 0), (True, 1)]


async def test_async_client_json_turn() -> None:
    with MessagesServer([Turn([text("fine")])]) as server:
        client = anthropic.AsyncAnthropic(api_key="test", base_url=server.base_url)
        with anyio.fail_after(10):
            message = await client.messages.create(
                model="m", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
            )
            await client.close()
    assert message.content[0].type == "text"
    assert message.content[0].text == "fine"
    assert not server.requests[0].stream


async def test_async_hang_hits_the_call_timeout() -> None:
    with MessagesServer([Hang()]) as server:
        client = anthropic.AsyncAnthropic(api_key="test", base_url=server.base_url, timeout=0.3, max_retries=0)
        with anyio.fail_after(10), pytest.raises(anthropic.APITimeoutError):
            await client.messages.create(model="m", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
        await client.close()
    assert len(server.requests) == 1
