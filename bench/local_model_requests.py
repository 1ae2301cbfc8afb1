"""Request sizes of real runs against a local Anthropic-compatible server (issues 17 and 34).

Run: uv run python bench/local_model_requests.py

Drives `fiskai_agent.run` through the real anthropic SDK against the scripted Messages server in
local-server mode (it refuses `defer_loading` and tool-search tools, caches nothing) and measures the
request bodies the server received, byte for byte, for two applications:

* fixturectl (examples/, 12 commands, about 1,900 tokens of definitions) and
* the NATS CLI (221 commands, about 44,000 tokens; from the shared fixtures).

For each, three rules: `every tool` (`llm.no_tool_search: true`, the original's fallback), `old`
(the client-side finder from 10 tools up, reproduced with `llm.tool_definition_budget: 1`: both sets
have more than 10 tools) and `new` (the finder only when the definitions exceed the default budget,
4,096 tokens). A multi-step task runs under each finder rule (search, call, ..., answer; without the
finder the same calls minus the searches). `tools` is the JSON of a request's `tools` array; tokens are
estimated at 4 bytes each. Needs the shared fixtures (`../shared`, or `FISKAI_SHARED_DIR`).
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
from fiskai_core.exec.running import CommandTool, command_tools
from fiskai_core.fisk import load_application
from fiskai_core.testing import write_fake_app
from fiskai_core.tools import DEFINITION_TOKEN_BUDGET, ToolSet, definition_tokens

ROOT = Path(__file__).resolve().parent.parent
_NATS_FOUND = [
    Turn([tool_use("find_tools", {"query": "list the streams"})]),
    Turn([tool_use("stream_ls", {})]),
    Turn([tool_use("find_tools", {"query": "delete a KV bucket"})]),
    Turn([tool_use("find_tools", {"query": "show the consumers of a stream"})]),
    Turn([tool_use("consumer_ls", {"stream": "ORDERS"})]),
    Turn([text("Done.")]),
]
_FIXTURECTL_FOUND = [
    Turn([tool_use("find_tools", {"query": "list the cluster nodes"})]),
    Turn([tool_use("cluster_node_list", {})]),
    Turn([tool_use("find_tools", {"query": "read a configuration key"})]),
    Turn([tool_use("cluster_config_get", {"key": "replicas"})]),
    Turn([text("Done.")]),
]


def _without_searches(script: list[Turn]) -> list[Turn]:
    """The same task where every tool is already in view: the calls, not the searches."""
    return [turn for turn in script if not any(block.get("name") == "find_tools" for block in turn.content)]


def _shared_fixture() -> Path:
    base = Path(os.environ.get("FISKAI_SHARED_DIR", ROOT.parent / "shared"))
    path = base / "fixtures" / "fisk" / "natscli.introspect.json"
    if not path.is_file():
        sys.exit(f"needs the shared data at {path}: set FISKAI_SHARED_DIR to the folder holding fixtures/")
    return path


def _tools_bytes(request: RecordedRequest) -> int:
    return len(json.dumps(request.body.get("tools", []), separators=(",", ":")).encode())


def _tools(introspect: Path, name: str, folder: Path) -> list[CommandTool]:
    app = write_fake_app(folder, introspect, name=name)
    return [t for t in command_tools(load_application(str(app))) if t.name != "fail"]  # as the example excludes it


async def _requests(
    introspect: Path, name: str, settings: LLMSettings, script: list[Turn], folder: Path
) -> list[RecordedRequest]:
    tools = _tools(introspect, name, folder)
    if (
        settings.no_tool_search
        or definition_tokens((t.name, t.description, t.input_schema) for t in tools) <= settings.tool_definition_budget
    ):
        script = _without_searches(script)  # every tool is in view: the same task without the searches
    with MessagesServer(list(script), local=True) as local:
        result = await run(
            RunOptions(
                prompt="what is there?",
                llm=settings,
                tools=ToolSet.of(tools),
                provider=ProviderSettings(model=settings.model, base_url=local.base_url),
            )
        )
        if result.reason != "completed":
            sys.exit(f"the {name} run did not complete: {result.reason} {result.error}")
        refused = [r for request in local.requests for r in request.tool_results() if r.get("is_error")]
        if refused:
            sys.exit(f"a scripted {name} call was refused, so the sizes would not be a working run's: {refused}")
        return local.requests


_RULES = {
    "every tool": LLMSettings(model="qwen3:8b", no_tool_search=True),
    "old: finder from 10 tools": LLMSettings(model="qwen3:8b", tool_definition_budget=1),
    f"new: over {DEFINITION_TOKEN_BUDGET:,} tokens": LLMSettings(model="qwen3:8b"),
}


async def _measure(app: str, introspect: Path, found: list[Turn]) -> dict[str, list[RecordedRequest]]:
    out: dict[str, list[RecordedRequest]] = {}
    for rule, settings in _RULES.items():
        with tempfile.TemporaryDirectory() as tmp:
            out[rule] = await _requests(introspect, app, settings, found, Path(tmp))
    return out


def _row(app: str, rule: str, requests: list[RecordedRequest], old: list[RecordedRequest]) -> str:
    sizes = [_tools_bytes(r) for r in requests]
    old_sizes = [_tools_bytes(r) for r in old]
    median = statistics.median(sizes)
    return (
        f"{app:<11} {rule:<27} {len(requests):>4} {max(len(r.tools) for r in requests):>5} "
        f"{median:>12,.0f} {max(sizes):>10,} {sum(sizes):>10,} {median // 4:>9,.0f} "
        f"{median / statistics.median(old_sizes):>7.2f} {sum(sizes) / sum(old_sizes):>7.2f}"
    )


async def main() -> None:
    apps = {
        "fixturectl": (ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json", _FIXTURECTL_FOUND),
        "nats": (_shared_fixture(), _NATS_FOUND),
    }
    print(
        f"{'app':<11} {'rule':<27} {'reqs':>4} {'tools':>5} {'median bytes':>12} {'max bytes':>10} "
        f"{'task bytes':>10} {'~tokens':>9} {'median':>7} {'task':>7}"
    )
    for app, (introspect, found) in apps.items():
        measured = await _measure(app, introspect, found)
        old = measured["old: finder from 10 tools"]
        for rule, requests in measured.items():
            print(_row(app, rule, requests, old))
    print(
        "\ntools = most definitions in one request; median/max bytes = the tools array per request; task bytes ="
        " all requests of the task; ~tokens = median bytes / 4; median, task = against the old rule's (ratio)"
    )


if __name__ == "__main__":
    anyio.run(main)
