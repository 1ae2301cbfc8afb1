"""The client configurations in packages/fiskai-mcp/README.md work as written, with the real mcp client.

Each block marked `<!-- checked: NAME -->` is parsed: a stdio entry is started exactly as its command and
arguments say (with `/path/to/agent.yaml` pointing at the fixturectl example and `fiskai` at this
environment's script), and an HTTP URL is served by `fiskai mcp` and called.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "packages" / "fiskai-mcp" / "README.md"
EXAMPLE = ROOT / "examples" / "fixturectl" / "agent.yaml"
FISKAI = Path(sys.executable).parent / "fiskai"

pytestmark = pytest.mark.anyio


def checked_blocks() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    found = re.findall(r"<!-- checked: ([\w-]+) -->\n```\w*\n(.*?)```", text, flags=re.DOTALL)
    return dict(found)


def localize(argv: list[str]) -> list[str]:
    return [str(FISKAI) if arg == "fiskai" else str(EXAMPLE) if arg == "/path/to/agent.yaml" else arg for arg in argv]


def test_the_readme_has_every_checked_block() -> None:
    assert set(checked_blocks()) == {"claude-stdio", "claude-http", "mcp-json", "desktop-stdio", "desktop-http"}


def stdio_entries() -> list[tuple[str, list[str]]]:
    blocks = checked_blocks()
    entries: list[tuple[str, list[str]]] = []
    claude = shlex.split(blocks["claude-stdio"])
    entries.append(("claude mcp add", claude[claude.index("--") + 1 :]))
    for name in ("mcp-json", "desktop-stdio"):
        for key, server in json.loads(blocks[name])["mcpServers"].items():
            if "command" in server:
                entries.append((f"{name}:{key}", [server["command"], *server["args"]]))
    return entries


def http_urls() -> list[tuple[str, str]]:
    blocks = checked_blocks()
    urls = [("claude mcp add --transport http", shlex.split(blocks["claude-http"])[-1])]
    for key, server in json.loads(blocks["mcp-json"])["mcpServers"].items():
        if server.get("type") == "http":
            urls.append((f"mcp-json:{key}", server["url"]))
    desktop = json.loads(blocks["desktop-http"])["mcpServers"]["fixturectl-http"]
    assert desktop["args"][:2] == ["-y", "mcp-remote"]
    urls.append(("desktop mcp-remote", desktop["args"][2]))
    return urls


@pytest.mark.parametrize(("where", "argv"), stdio_entries())
async def test_a_stdio_configuration_starts_and_serves(tmp_path: Path, where: str, argv: list[str]) -> None:
    command, *args = localize(argv)
    params = StdioServerParameters(command=command, args=args)
    with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("cluster_node_list", {})

    assert "cluster_node_list" in listed, where
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert json.loads(block.text)["exit_code"] == 0


@pytest.fixture(scope="module")
def running_server() -> Iterator[str]:
    """`fiskai mcp` on the example, as the README starts it, on a free port; its URL."""
    process = subprocess.Popen(
        [str(FISKAI), "-c", str(EXAMPLE), "mcp", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("Serving ") and " on http://" in line:
                url.append(line.split(" on ", 1)[1].split(" as ", 1)[0])
                ready.set()
        ready.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert ready.wait(30) and url, "fiskai mcp did not start"
        yield url[0]
    finally:
        process.terminate()
        process.wait(10)
        reader.join(10)
        assert process.stderr is not None
        process.stderr.close()


@pytest.mark.parametrize(("where", "url"), http_urls())
async def test_an_http_configuration_reaches_the_server(running_server: str, where: str, url: str) -> None:
    written = urlsplit(url)
    assert (written.scheme, written.hostname, written.port, written.path) == ("http", "localhost", 8080, ""), where
    # The README's URL, with the port the test server actually got.
    actual = url.replace(":8080", ":" + str(urlsplit(running_server).port))
    async with Client(actual) as client:
        listed = await client.list_tools()
    assert "cluster_config_set" in [tool.name for tool in listed.tools]


def _inspector() -> list[str]:
    """The MCP Inspector CLI that .ci/run installs when node is present, or a skip saying why not."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed; the MCP Inspector CLI needs Node 20 or later")
    # Where .ci/run installs it by default; not under XDG_CACHE_HOME, which the suite points at a temp folder.
    default = Path.home() / ".cache" / "fiskai" / "mcp-inspector-2.12.0" / "node_modules" / ".bin" / "mcp-inspector"
    named = os.environ.get("FISKAI_MCP_INSPECTOR")
    binary = Path(named) if named else default
    if not binary.exists():
        pytest.skip(
            f"FISKAI_MCP_INSPECTOR names {binary}, which does not exist"
            if named
            else f"the MCP Inspector 2.12.0 CLI is not at {binary}: set FISKAI_MCP_INSPECTOR to its mcp-inspector "
            "binary (.ci/run installs it and sets the variable)"
        )
    return [str(binary), "--cli"]


def test_the_inspector_reaches_the_readme_configurations(running_server: str) -> None:
    """An outside client (the MCP Inspector) through the README's stdio command and HTTP URL."""
    inspector = _inspector()
    stdio = localize(stdio_entries()[0][1])
    url = http_urls()[0][1].replace(":8080", ":" + str(urlsplit(running_server).port))

    over_stdio = subprocess.run(
        [*inspector, *stdio, "--method", "tools/list"], capture_output=True, text=True, timeout=120
    )
    over_http = subprocess.run(
        [*inspector, url, "--transport", "http", "--method", "tools/list"], capture_output=True, text=True, timeout=120
    )

    for done in (over_stdio, over_http):
        assert done.returncode == 0, done.stderr[-500:]
        assert "cluster_config_set" in [tool["name"] for tool in json.loads(done.stdout)["tools"]]
