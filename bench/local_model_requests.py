"""Request sizes of a real run over the NATS CLI against a local Anthropic-compatible server (issue 17).

Run: uv run python bench/local_model_requests.py

Drives `fiskai_agent.run` through the real anthropic SDK against the scripted Messages server in
local-server mode (it refuses `defer_loading` and tool-search tools, caches nothing) and measures the
request bodies the server received, byte for byte:

* `every tool`: `llm.no_tool_search: true`, the original's fallback: all 221 commands on every request.
* `find_tools`: the client-side finder: a multi-step task (search, call, search, call, answer); each
  request carries `find_tools` and the tools found so far.

`tools` is the JSON of the request's `tools` array, `body` the whole request; tokens are estimated at
4 bytes per token (the local-server mode reports that estimate as `input_tokens` too). Needs the shared
fixtures (`../shared`, or `FISKAI_SHARED_DIR`).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import anyio

from fiskai_agent import RunOptions, run
from fiskai_agent.llm import ProviderSettings
from fiskai_agent.testing import MessagesServer, RecordedRequest, Turn, text, tool_use
from fiskai_core.config import LLMSettings
from fiskai_core.exec.running import command_tools
from fiskai_core.fisk import load_application
from fiskai_core.testing import write_fake_app
from fiskai_core.tools import ToolSet

ROOT = Path(__file__).resolve().parent.parent
_SCRIPT = [
    Turn([tool_use("find_tools", {"query": "list the streams"})]),
    Turn([tool_use("stream_ls", {})]),
    Turn([tool_use("find_tools", {"query": "delete a KV bucket"})]),
    Turn([tool_use("find_tools", {"query": "show the consumers of a stream"})]),
    Turn([tool_use("consumer_ls", {"stream": "ORDERS"})]),
    Turn([text("Done.")]),
]


def _fixture() -> Path:
    base = Path(os.environ.get("FISKAI_SHARED_DIR", ROOT.parent / "shared"))
    path = base / "fixtures" / "fisk" / "natscli.introspect.json"
    if not path.is_file():
        sys.exit(f"needs the shared data at {path}: set FISKAI_SHARED_DIR to the folder holding fixtures/")
    return path


def _sizes(request: RecordedRequest) -> tuple[int, int, int]:
    tools = json.dumps(request.body.get("tools", []), separators=(",", ":")).encode()
    return len(request.tools), len(tools), len(request.raw)


async def _requests(settings: LLMSettings, script: list[Turn], folder: Path) -> list[RecordedRequest]:
    tools = command_tools(load_application(str(write_fake_app(folder, _fixture(), name="nats"))))
    with MessagesServer(list(script), local=True) as local:
        result = await run(
            RunOptions(
                prompt="what streams, buckets and consumers exist?",
                llm=settings,
                tools=ToolSet.of(tools),
                provider=ProviderSettings(model=settings.model, base_url=local.base_url),
            )
        )
        if result.reason != "completed":
            sys.exit(f"the run did not complete: {result.reason} {result.error}")
        refused = [r for request in local.requests for r in request.tool_results() if r.get("is_error")]
        if refused:
            sys.exit(f"a scripted call was refused, so the sizes would not be a working run's: {refused}")
        return local.requests


def _row(label: str, tools: int, tools_bytes: int, body: int) -> str:
    return f"{label:<28} {tools:>5} {tools_bytes:>11,} {tools_bytes // 4:>9,} {body:>11,} {body // 4:>9,}"


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        every = await _requests(LLMSettings(model="qwen3:8b", no_tool_search=True), [Turn([text("Done.")])], Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        found = await _requests(LLMSettings(model="qwen3:8b"), _SCRIPT, Path(tmp))
    print(f"{'request':<28} {'tools':>5} {'tools bytes':>11} {'~tokens':>9} {'body bytes':>11} {'~tokens':>9}")
    print(_row("every tool (no_tool_search)", *_sizes(every[0])))
    for index, request in enumerate(found, 1):
        print(_row(f"find_tools, request {index}", *_sizes(request)))
    finder_tools = [_sizes(r)[1] for r in found]
    ratio = _sizes(every[0])[1] / statistics.median(finder_tools)
    print(
        f"\nmedian tools bytes with find_tools: {statistics.median(finder_tools):,.0f} "
        f"(every tool: {_sizes(every[0])[1]:,}; {ratio:.0f}x smaller); "
        f"largest request with find_tools: {max(len(r.tools) for r in found)} tool definitions"
    )


if __name__ == "__main__":
    anyio.run(main)
