"""The later built-ins in one `fiskai run` (issue 30 item 4): the real CLI, wiring, index and SDK.

read_file (a file, and a refused escape), base64_encode behind `confirm: true` (denied: no terminal), knowledge_enumerate and knowledge_read over a real
fiskai_rag index with a citation rule, read-only memory (memory_write is not even offered, and nothing is written) and
`llm.reasoning_effort` on the wire, through the scripted Messages server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.knowledge import KnowledgeEnumerator
from fiskai_rag import open_store

pytestmark = pytest.mark.anyio

_CONFIG = """\
identity: builtins
system_prompt: You look after the files.
llm:
  model: claude-sonnet-4-6
  reasoning_effort: high
harness:
  tools:
    - {name: read_file, options: {root: files, max_bytes: 4096}}
    - {name: base64_encode, confirm: true}
  memory: {enabled: true, read_only: true, options: {directory: memory}}
  knowledge:
    enabled: true
    paths: [docs]
    directory: kb
    read_tool: true
    citations:
      - {pattern: '^docs/(.*)\\.md$', replace: 'https://docs.example.test/$1#${anchor}'}
"""


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    with MessagesServer() as scripted:
        yield scripted


def _fiskai(folder: Path, *args: str, server: MessagesServer | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    env.update(XDG_STATE_HOME=str(folder / "state"), XDG_CONFIG_HOME=str(folder / "config"), NO_COLOR="1")
    if server is not None:
        env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="test-key")
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(folder / "agent.yaml"), *args],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _agent(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    (folder / "files").mkdir(parents=True)
    (folder / "files" / "notes.txt").write_text("rotate the keys on Friday\n")
    (tmp_path / "agent" / "secret.txt").write_text("TOPSECRET")
    (folder / "docs").mkdir()
    (folder / "docs" / "streams.md").write_text("# Streams\n\n## Retention policy\n\nA stream keeps messages.\n")
    (folder / "docs" / "kv.md").write_text("# Buckets\n\nA bucket is built on a stream.\n")
    (folder / "docs" / "auth.md").write_text("# Auth\n\nAccounts and users.\n")
    (folder / "memory").mkdir()
    (folder / "memory" / "layout.md").write_text("---\ndescription: Where things live\n---\nunder /srv\n")
    (folder / "agent.yaml").write_text(_CONFIG)
    return folder


def test_a_run_calls_the_new_builtins_through_the_harness(tmp_path: Path, server: MessagesServer) -> None:
    folder = _agent(tmp_path)
    indexed = _fiskai(folder, "knowledge", "index")
    assert indexed.returncode == 0, indexed.stderr
    with open_store(folder / "kb", read_only=True) as store:
        seam: KnowledgeEnumerator = store  # checked statically: the real store fits core's seam
        assert isinstance(seam, KnowledgeEnumerator)
    memory_before = sorted((p.name, p.read_bytes()) for p in (folder / "memory").iterdir())

    server.add(
        Turn(
            [
                tool_use("read_file", {"path": "/notes.txt"}),
                tool_use("read_file", {"path": "../secret.txt"}),
                tool_use("base64_encode", {"text": "fisk"}),
                tool_use("knowledge_enumerate", {"query": "stream"}),
                tool_use("memory_read", {"key": "layout"}),
                tool_use("memory_write", {"key": "x", "description": "d", "content": "c"}),
                tool_use("knowledge_read", {"index_ref": "docs/streams.md#0", "after": 1}),
            ]
        ),
        Turn([text("All done.")]),
    )
    ran = _fiskai(folder, "run", "use the tools", server=server)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "All done."

    first, second = server.requests
    names = first.tool_names
    offered = ("read_file", "base64_encode", "knowledge_search", "knowledge_enumerate", "knowledge_read")
    for name in (*offered, "memory_list", "memory_read"):
        assert name in names
    assert "memory_write" not in names and "memory_delete" not in names
    assert first.body["output_config"] == {"effort": "high"}

    results = second.tool_results()
    assert len(results) == 7
    outputs = [
        block["content"] if isinstance(block["content"], str) else block["content"][0]["text"] for block in results
    ]
    read = json.loads(outputs[0])
    assert (read["found"], read["content"], read["encoding"]) == (True, "rotate the keys on Friday\n", "utf-8")
    assert results[1].get("is_error") is True and "leads outside the readable folder" in outputs[1]
    assert "TOPSECRET" not in outputs[1]
    # confirm: true gates it like ai:confirm; with no terminal to ask, the gate denies and nothing runs.
    assert "no interactive terminal is attached" in outputs[2] and "Zmlzaw==" not in outputs[2]
    listed = json.loads(outputs[3])
    assert (listed["status"], listed["matched"], listed["truncated"]) == ("ok", 2, False)
    by_path = {doc["path"]: doc for doc in listed["documents"]}
    assert set(by_path) == {"docs/streams.md", "docs/kv.md"}
    assert by_path["docs/streams.md"]["citation"] == "https://docs.example.test/streams#retention-policy"
    assert json.loads(outputs[4])["content"].strip() == "under /srv"
    assert results[5].get("is_error") is True and "memory_write" in outputs[5]  # not offered: an unknown tool

    assert not results[6].get("is_error"), outputs[6]
    read_back = json.loads(outputs[6])
    assert read_back["citation"] == "https://docs.example.test/streams#retention-policy"
    assert [s["index_ref"] for s in read_back["sections"]] == ["docs/streams.md#0"]  # the page is one section
    assert by_path["docs/streams.md"]["index_ref"] == "docs/streams.md#0"

    assert sorted((p.name, p.read_bytes()) for p in (folder / "memory").iterdir()) == memory_before


async def test_mcp_serves_listed_builtins_narrowed_by_expose_tools(tmp_path: Path) -> None:
    from fiskai_cli import _wiring as wiring
    from fiskai_core.config import Mode, parse_config

    (tmp_path / "files").mkdir()
    text_ = (
        "identity: builtins\nharness:\n  tools:\n    - {name: read_file, confirm: true, options: {root: files}}\n"
        "    - {name: base64_encode}\n"
        "expose:\n  agent:\n    mcp: {}\n    tools: {exclude: {tools: ['^base64_encode$']}}\n"
    )
    settings = wiring.Settings(config=parse_config(text_, Mode.MCP), path=tmp_path / "agent.yaml", folder=tmp_path)
    async with wiring.open_harness(settings, "mcp") as harness:
        assert harness.tools.names() == ["read_file"]
        (entry,) = harness.tools
        assert entry.kind == "builtin" and "ai:confirm" in entry.tool.tags  # gated over MCP like a command
    async with wiring.open_harness(settings, "a2a") as harness:
        assert harness.tools.names() == []  # never served over a2a
