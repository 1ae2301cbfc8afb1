"""`llm.reasoning_effort` (reference 7.4): sent as `output_config.effort` where the server takes it, dropped
with a warning where it does not, named on a refused level, and part of the resume fingerprint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import pytest

from fiskai_agent import RunOptions, run
from fiskai_agent.errors import ProviderError
from fiskai_agent.llm import Message, ProviderSettings, Request, TextBlock, create_provider
from fiskai_agent.testing import Failure, MessagesServer, RecordingEvents, Turn, text
from fiskai_core.config import LLMSettings
from fiskai_core.tools import Tool, ToolSet
from fiskai_runstate import Fingerprint, check_resume, decode_record, encode_record
from fiskai_runstate.errors import ResumeMismatchError
from fiskai_runstate.records import MetaRecord, Record

pytestmark = pytest.mark.anyio

MODEL = "claude-sonnet-4-6"


class App(Protocol):
    tools: list[Tool]


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    with MessagesServer() as running:
        yield running


async def _run(server: MessagesServer, app: App, model: str, effort: str) -> RecordingEvents:
    events = RecordingEvents()
    result = await run(
        RunOptions(
            prompt="hi",
            llm=LLMSettings(model=model, reasoning_effort=effort),
            tools=ToolSet.of(app.tools),
            provider=ProviderSettings(model=model, api_key="test", base_url=server.base_url),
            events=events,
        )
    )
    assert result.reason == "completed", result.error
    return events


async def test_the_effort_is_sent_as_output_config(server: MessagesServer, app: App) -> None:
    server.add(Turn([text("done")]), Turn([text("done")]))
    events = await _run(server, app, MODEL, "xhigh")
    assert server.requests[0].body["output_config"] == {"effort": "xhigh"}
    assert "reasoning_effort_dropped" not in events.advisory_kinds()
    await _run(server, app, MODEL, "")
    assert "output_config" not in server.requests[1].body  # unset sends nothing


async def test_a_local_server_gets_no_effort_and_the_operator_is_told(app: App) -> None:
    with MessagesServer(local=True) as local:
        local.add(Turn([text("hello")]))
        events = await _run(local, app, "qwen3:8b", "high")
        assert "output_config" not in local.requests[0].body
    assert "reasoning_effort_dropped" in events.advisory_kinds()


async def test_a_refused_level_names_the_setting(server: MessagesServer) -> None:
    server.add(Failure(400, "invalid effort level"))
    provider = create_provider(
        "anthropic", ProviderSettings(model=MODEL, api_key="test", base_url=server.base_url, max_retries=0)
    )
    request = Request(
        model=MODEL, system=(), messages=(Message(role="user", content=(TextBlock(text="x"),)),), effort="extreme"
    )
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.call(request)
    finally:
        await provider.aclose()
    assert server.requests[0].body["output_config"] == {"effort": "extreme"}  # passed through unchecked
    assert 'llm.reasoning_effort "extreme" may not be a level' in str(caught.value)


def test_the_effort_is_fingerprinted_and_a_change_is_config_drift() -> None:
    saved = Fingerprint(provider="anthropic", model=MODEL, reasoning_effort="high", max_tokens=500_000)
    meta = MetaRecord(run_id="r", created="2026-01-01T00:00:00Z", fingerprint=saved)
    line = encode_record(Record(seq=1, payload=meta))
    assert b'"reasoning_effort":"high"' in line
    decoded = decode_record(line, run_id="r").payload
    assert isinstance(decoded, MetaRecord) and decoded.fingerprint == saved
    lowered = Fingerprint(provider="anthropic", model=MODEL, reasoning_effort="low", max_tokens=500_000)
    with pytest.raises(ResumeMismatchError, match="reasoning_effort: high -> low"):
        check_resume(saved, lowered, run_id="r")
    unset = MetaRecord(run_id="r", created="c", fingerprint=Fingerprint(provider="anthropic", model=MODEL))
    assert b"reasoning_effort" not in encode_record(Record(seq=1, payload=unset))  # omitted when empty
