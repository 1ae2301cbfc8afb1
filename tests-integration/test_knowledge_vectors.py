"""The vector tier reaches the model: `fiskai run`'s and `fiskai mcp`'s knowledge_search over a server-built index.

A real embeddings server (fiskai_rag.testing's, serving the tokenlearn static model where installed),
`fiskai knowledge index` building the index through it, then the real anthropic SDK against the scripted
Messages server, and the real MCP client. "boil pasta" shares no word with any document: only the
vectors can find the cooking page.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_rag import open_store
from fiskai_rag.testing import EmbeddingsServer, static_model_available

pytestmark = pytest.mark.skipif(
    not static_model_available(), reason="tokenlearn-static-model not installed (the embeddings server's real model)"
)

_ROOT = Path(__file__).resolve().parents[1]
_FIXTURECTL = _ROOT / "examples" / "fixturectl"
_QUERY = "boil pasta"
_COOKING = "Simmer the tomato sauce for twenty minutes."


@pytest.fixture(scope="module")
def embeddings() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as running:
        running.warm_up()
        yield running


@pytest.fixture
def messages() -> Iterator[MessagesServer]:
    with MessagesServer() as scripted:
        yield scripted


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"), NO_COLOR="1")
    return base


def _fiskai(
    args: Sequence[str], env: Mapping[str, str], messages: MessagesServer | None = None
) -> subprocess.CompletedProcess[str]:
    full = dict(env)
    if messages is not None:
        full.update(ANTHROPIC_BASE_URL=messages.base_url, ANTHROPIC_API_KEY="test-key")
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args],
        cwd=Path(env["XDG_STATE_HOME"]).parent,
        env=full,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,  # a loaded two-core machine: a run with an index can take a minute
        check=False,
    )


def _docs(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    (docs / "accounts.md").write_text(
        "# Accounts\n\n## Sign up\n\nCreate a new account for a person in the authentication service.\n",
        encoding="utf-8",
    )
    (docs / "streams.md").write_text(
        "# Streams\n\n## Mirrors\n\nA mirror copies messages from one stream to another stream.\n", encoding="utf-8"
    )
    (docs / "cooking.md").write_text(f"# Cooking\n\n{_COOKING}\n", encoding="utf-8")
    return docs


def _config(tmp_path: Path, embeddings: EmbeddingsServer, knowledge: str = "", mcp: bool = False) -> Path:
    """fixturectl with knowledge on, indexed through `embeddings` (and knowledge_search over MCP when asked)."""
    folder = tmp_path / "fixturectl"
    shutil.copytree(_FIXTURECTL, folder)
    config = folder / "agent.yaml"
    block = (
        f"  knowledge:\n    enabled: true\n    directory: {tmp_path / 'store'}\n    paths: [{_docs(tmp_path)}]\n"
        f"    embeddings:\n      base_url: {embeddings.base_url}\n      model: {embeddings.model}\n{knowledge}"
    )
    body = config.read_text(encoding="utf-8").replace(
        "  confirm_tags: [impact:rw]\n", f"  confirm_tags: [impact:rw]\n{block}"
    )
    if mcp:
        body = body.replace("    mcp: {}\n", "    mcp: {builtins: [knowledge_search]}\n")
    config.write_text(body, encoding="utf-8")
    return config


def _indexed(config: Path, env: dict[str, str], tmp_path: Path) -> None:
    built = _fiskai(["-c", str(config), "knowledge", "index"], env)
    assert built.returncode == 0, built.stderr
    with open_store(tmp_path / "store", read_only=True) as lexical:  # no embedder: the words alone
        assert lexical.search(_QUERY).hits == []


def _tool_result(messages: MessagesServer, index: int) -> str:
    (result,) = messages.requests[index].tool_results()
    content: Any = result["content"]
    return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)


def test_a_runs_knowledge_search_returns_what_only_the_vectors_find(
    tmp_path: Path, env: dict[str, str], messages: MessagesServer, embeddings: EmbeddingsServer
) -> None:
    config = _config(tmp_path, embeddings)
    _indexed(config, env, tmp_path)
    messages.add(Turn([tool_use("knowledge_search", {"query": _QUERY}, id="k1")]), Turn([text("done")]))

    done = _fiskai(["-c", str(config), "run", "how long for the sauce?"], env, messages)

    assert done.returncode == 0, done.stderr
    assert _COOKING in _tool_result(messages, 1)


def test_the_go_json_shape_honours_top_k_and_notes_a_missing_server(
    tmp_path: Path, env: dict[str, str], messages: MessagesServer, embeddings: EmbeddingsServer
) -> None:
    config = _config(tmp_path, embeddings, "    top_k: 3\n    result_format: json\n")
    _indexed(config, env, tmp_path)
    messages.add(Turn([tool_use("knowledge_search", {"query": _QUERY, "top_k": 1}, id="k1")]), Turn([text("a")]))
    found = _fiskai(["-c", str(config), "run", "sauce?"], env, messages)
    # The server goes away: the same index degrades to lexical with the Go agent's note, not silently.
    away = config.read_text(encoding="utf-8").replace(embeddings.base_url, "http://127.0.0.1:9/v1")
    config.write_text(away, encoding="utf-8")
    messages.add(Turn([tool_use("knowledge_search", {"query": "tomato sauce"}, id="k2")]), Turn([text("b")]))
    degraded = _fiskai(["-c", str(config), "run", "sauce?"], env, messages)

    assert found.returncode == 0, found.stderr
    body = json.loads(_tool_result(messages, 1))
    assert body["status"] == "ok"
    assert body["tier"].startswith(f"hybrid (FTS5 + vectors, RRF) - model={embeddings.model} dim=")
    assert [r["citation"] for r in body["results"]] == ["docs/cooking.md#0"]  # top_k 1 of the configured 3
    assert body["results"][0]["section"] == "Cooking" and _COOKING in body["results"][0]["content"]
    assert degraded.returncode == 0, degraded.stderr
    later = json.loads(_tool_result(messages, 3))
    assert later["note"] == "the embeddings server was unreachable, so this query used the lexical tier only"
    assert later["tier"].startswith("hybrid -> DEGRADED to lexical (embeddings unreachable: ")
    assert [r["citation"] for r in later["results"]] == ["docs/cooking.md#0"]


@pytest.mark.anyio
async def test_fiskai_mcps_knowledge_search_returns_what_only_the_vectors_find(
    tmp_path: Path, env: dict[str, str], embeddings: EmbeddingsServer
) -> None:
    config = _config(tmp_path, embeddings, mcp=True)
    _indexed(config, env, tmp_path)
    args = ["-m", "fiskai_cli", "-c", str(config), "mcp", "--stdio"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
    errors = tmp_path / "stderr.txt"

    with errors.open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = [entry.name for entry in (await client.list_tools()).tools]
            found = await client.call_tool("knowledge_search", {"query": _QUERY, "top_k": 1})

    assert "knowledge_search" in listed, errors.read_text(encoding="utf-8")
    assert found.is_error is False
    shown = "".join(getattr(block, "text", "") for block in found.content)
    assert "cooking.md#0" in shown and _COOKING in shown
    assert "accounts.md" not in shown  # top_k 1
