"""The shipped test doubles satisfy the seams they stand in for (pyright checks the assignments)."""

from __future__ import annotations

import pytest

from fiskai_agent.errors import ProviderError
from fiskai_agent.events import Events, NullEvents
from fiskai_agent.llm import Message, Provider, Request, TextBlock
from fiskai_agent.testing import RecordingEvents, ScriptedProvider, answer

pytestmark = pytest.mark.anyio


def _request() -> Request:
    return Request(model="m", system=(), messages=(Message(role="user", content=(TextBlock(text="hi"),)),))


async def test_scripted_provider_is_a_provider_and_fails_when_its_script_runs_out() -> None:
    provider: Provider = ScriptedProvider.of(answer("one"))
    assert (await provider.call(_request())).message.text == "one"
    with pytest.raises(ProviderError) as caught:
        await provider.call(_request())
    assert str(caught.value) == "ScriptedProvider: no scripted response for call 2"


def test_recording_and_null_events_are_events() -> None:
    recording: Events = RecordingEvents()
    ignoring: Events = NullEvents()
    recording.llm_request("x")
    ignoring.llm_request("x")
    assert isinstance(recording, RecordingEvents) and recording.names == ["llm_request"]
