"""Test doubles for code that drives the agent loop.

`ScriptedProvider` is a provider-level fake (no HTTP) with `reply`, `answer` and `calls` helpers;
`RecordingEvents` records every `Events` callback. `RunProcesses` starts and reaps `fiskai run` child processes. `MessagesServer` is a scripted Anthropic Messages API on a loopback port: the real SDK talks to it
over HTTP (JSON and SSE), so tests and benches exercise retries, timeouts and streaming for real.
"""

from fiskai_agent.testing._messages_server import (
    Drop,
    Failure,
    Hang,
    MessagesServer,
    RecordedRequest,
    Step,
    Turn,
    Usage,
    redacted_thinking,
    server_tool_use,
    text,
    thinking,
    tool_search,
    tool_search_result,
    tool_use,
)
from fiskai_agent.testing._processes import RunProcesses
from fiskai_agent.testing._recording import RecordingEvents
from fiskai_agent.testing._scripted import ScriptedProvider, answer, calls, reply

__all__ = [
    "Drop",
    "Failure",
    "Hang",
    "MessagesServer",
    "RecordedRequest",
    "RecordingEvents",
    "RunProcesses",
    "ScriptedProvider",
    "Step",
    "Turn",
    "Usage",
    "answer",
    "calls",
    "redacted_thinking",
    "reply",
    "server_tool_use",
    "text",
    "thinking",
    "tool_search",
    "tool_search_result",
    "tool_use",
]
