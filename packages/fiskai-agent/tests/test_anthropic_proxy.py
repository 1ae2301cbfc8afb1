"""A proxy never sees loopback model traffic; anything else still goes through the configured proxy (issue 36.5).

A local model is reached over plain http, API key included. httpx (under the SDK) honours HTTP_PROXY,
HTTPS_PROXY and ALL_PROXY for every host NO_PROXY does not name, loopback too; Go's net/http, under the
original, never proxies loopback. Real SDK, real scripted server, a real recording proxy (root conftest).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from fiskai_agent.llm import Message, ProviderSettings, Request, TextBlock, create_provider
from fiskai_agent.testing import MessagesServer, Turn, text

pytestmark = pytest.mark.anyio

MODEL = "claude-sonnet-4-6"
_REQUEST = Request(
    model=MODEL,
    system=("Answer briefly.",),
    messages=(Message(role="user", content=(TextBlock(text="hello"),)),),
    tools=(),
    max_output_tokens=64,
)


async def _call(base_url: str) -> str:
    provider = create_provider("anthropic", ProviderSettings(model=MODEL, api_key="sk-local-key", base_url=base_url))
    try:
        with anyio.fail_after(20):
            response = await provider.call(_REQUEST)
    finally:
        await provider.aclose()
    return "".join(block.text for block in response.message.content if isinstance(block, TextBlock))


@pytest.mark.parametrize(("listen", "host"), [("127.0.0.1", "127.0.0.1"), ("127.0.0.1", "localhost"), ("::1", "[::1]")])
async def test_a_loopback_model_is_reached_directly_whatever_the_proxy_variables_say(
    recording_proxy: Any, listen: str, host: str
) -> None:
    with MessagesServer([Turn([text("direct")])], host=listen) as server:
        port = server.base_url.rsplit(":", 1)[1]
        answer = await _call(f"http://{host}:{port}")
        requests = server.requests

    assert answer == "direct"
    assert len(requests) == 1
    assert recording_proxy.requests == []


async def test_a_remote_model_still_goes_through_the_proxy(recording_proxy: Any) -> None:
    with MessagesServer([Turn([text("proxied")])]) as server:
        recording_proxy.upstream = ("127.0.0.1", int(server.base_url.rsplit(":", 1)[1]))
        # `.invalid` never resolves (RFC 2606): the proxy is the only way there.
        answer = await _call("http://model.invalid")

    assert answer == "proxied"
    assert recording_proxy.requests == ["POST http://model.invalid/v1/messages HTTP/1.1"]
