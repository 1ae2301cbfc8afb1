"""Recognising the server behind a base URL by its metadata endpoints, over real HTTP on loopback.

Each fake answers only what the named server serves (the real llama-server is exercised by
tests-integration/test_llama_server.py); anything else is a 404, as those servers answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from fiskai_agent import RunOptions, SetupError, run
from fiskai_agent.llm import ProviderSettings, recognise_server
from fiskai_agent.testing import RecordingEvents
from fiskai_core.config import LLMSettings, Mode, parse_config
from fiskai_core.testing import FakeTool
from fiskai_core.tools import ToolSet

_ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "m",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


@contextmanager
def _serving(
    routes: Mapping[str, Any], headers: Mapping[str, str] | None = None, posted: list[dict[str, Any]] | None = None
) -> Generator[str]:
    """GET routes as given; POST /v1/messages records the body in `posted` and answers "ok"."""

    class Handler(BaseHTTPRequestHandler):
        # The handler's own Server header, which a second send_header would not replace.
        server_version = (headers or {}).get("Server", "BaseHTTP/0.6")
        sys_version = ""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            if posted is not None:
                posted.append(json.loads(self.rfile.read(length)))
            payload = json.dumps(_ANSWER).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            body = routes.get(self.path)
            self.send_response(404 if body is None else 200)
            payload = json.dumps(body if body is not None else {"error": "not found"}).encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  # pyright: ignore[reportImplicitOverride]
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_llama_cpp_is_recognised_by_its_props() -> None:
    with _serving({"/props": {"build_info": "b1-abc", "default_generation_settings": {}}}) as url:
        kind = recognise_server(url)
    assert (kind.name, kind.drops_tool_search) == ("llama.cpp", True)
    assert kind.describe().startswith("llama.cpp (GET /props answered with build_info b1-abc): ignores defer_loading")


def test_llama_cpp_is_recognised_by_its_server_header_when_props_is_off() -> None:
    with _serving({}, headers={"Server": "llama.cpp"}) as url:
        kind = recognise_server(url)
    assert kind.name == "llama.cpp" and kind.evidence == "it answers with Server: llama.cpp"


def test_ollama_is_recognised_by_its_version() -> None:
    with _serving({"/api/version": {"version": "0.12.3"}}) as url:
        kind = recognise_server(url)
    assert (kind.name, kind.evidence, kind.drops_tool_search) == ("Ollama", "GET /api/version answered 0.12.3", True)


def test_vllm_is_recognised_by_its_models_and_keeps_the_fallback() -> None:
    with _serving({"/v1/models": {"object": "list", "data": [{"id": "q", "owned_by": "vllm"}]}}) as url:
        kind = recognise_server(url)
    assert (kind.name, kind.drops_tool_search) == ("vLLM", False)
    assert "falls back from tool search on its 400" in kind.describe()


def test_an_unknown_server_and_no_server_are_told_apart() -> None:
    with _serving({"/v1/models": {"data": [{"id": "m", "owned_by": "someone"}]}}) as url:
        assert recognise_server(url).describe() == (
            "not recognised (neither GET /props, /api/version nor /v1/models identified it)"
        )
    assert recognise_server(url, timeout=1).evidence.startswith(f"no answer from {url}")


def _llm(text: str) -> LLMSettings:
    return parse_config(f"system_prompt: p\nllm:\n{text}", Mode.AGENT).llm


_MANY = [FakeTool(name=f"t{i}", description="t" * 2000) for i in range(12)]


@pytest.mark.anyio
async def test_a_claude_model_on_llama_cpp_runs_without_server_tool_search_and_says_why() -> None:
    llm = _llm("  model: claude-sonnet-4-6\n")
    events = RecordingEvents()
    posted: list[dict[str, Any]] = []
    with _serving({"/props": {"build_info": "b1-abc"}}, posted=posted) as url:
        result = await run(
            RunOptions(
                prompt="x",
                llm=llm,
                tools=ToolSet.of(_MANY, "custom"),
                provider=ProviderSettings(model=llm.model, base_url=url),
                events=events,
            )
        )
    assert result.answer == "ok"
    (body,) = posted
    assert [tool["name"] for tool in body["tools"]] == ["find_tools"]
    assert "defer_loading" not in json.dumps(body)
    (reduced,) = [a for a in events.advisories if a.kind == "capabilities_reduced"]
    assert reduced.message == (
        f"the model server at {url} is llama.cpp (GET /props answered with build_info b1-abc): ignores "
        "defer_loading and tool-search tools (every deferred tool would reach the model), so server-side tool "
        "search is off for this run"
    )


@pytest.mark.anyio
async def test_tool_search_forced_on_for_llama_cpp_is_refused_before_any_model_call() -> None:
    llm = _llm("  model: claude-sonnet-4-6\n  capabilities: {tool_search: on}\n")
    posted: list[dict[str, Any]] = []
    with _serving({"/props": {"build_info": "b1-abc"}}, posted=posted) as url:
        with pytest.raises(SetupError) as caught:
            await run(
                RunOptions(
                    prompt="x",
                    llm=llm,
                    tools=ToolSet.of(_MANY, "custom"),
                    provider=ProviderSettings(model=llm.model, base_url=url),
                )
            )
    assert posted == []
    assert str(caught.value).startswith(
        f"llm.capabilities.tool_search is on, but the model server at {url} is llama.cpp"
    )
    assert str(caught.value).endswith(
        "set llm.capabilities.tool_search to auto or off (fiskai then defers large tool sets behind its own find_tools tool)"
    )
