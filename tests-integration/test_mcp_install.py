"""The MCP-only install: `fiskai-cli[mcp]` brings neither the provider SDK nor NATS nor SQLite extensions.

Two views of the same promise: uv's own resolution of the lock for that install, and a real install of
it into a fresh environment (from uv's cache, offline) that then serves the example over stdio.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fixturectl" / "agent.yaml"
FORBIDDEN = {"anthropic", "nats-py", "apsw", "sqlite-vec", "fiskai-agent", "fiskai-a2a", "fiskai-rag"}


def _uv() -> str:
    found = shutil.which("uv")
    if found is None:
        pytest.skip("uv is not on PATH; the MCP-only install is checked with uv")
    return found


def test_the_mcp_extra_resolves_without_the_provider_sdk_nats_or_sqlite_extensions() -> None:
    done = subprocess.run(
        [_uv(), "export", "--frozen", "--package", "fiskai-cli", "--extra", "mcp", "--no-dev", "--no-hashes"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    names = {
        match.group(1).lower()
        for line in done.stdout.splitlines()
        if (match := re.match(r"^(?:-e \./packages/)?([A-Za-z0-9_.-]+)", line.strip())) and not line.startswith("#")
    }

    assert {"fiskai-cli", "fiskai-core", "fiskai-mcp", "mcp", "click"} <= names
    assert names.isdisjoint(FORBIDDEN), sorted(names & FORBIDDEN)


@pytest.fixture(scope="module")
def slim_fiskai(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`fiskai-cli[mcp]` alone, installed into a new venv from uv's cache (offline); its `fiskai` script."""
    venv = tmp_path_factory.mktemp("slim") / "venv"
    done = subprocess.run(
        [
            _uv(),
            "sync",
            "--frozen",
            "--offline",
            "--no-dev",
            "--no-editable",
            "--package",
            "fiskai-cli",
            "--extra",
            "mcp",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv)},
    )
    if done.returncode != 0 and "offline" in done.stderr.lower():
        pytest.skip(f"the MCP-only install needs packages missing from uv's cache: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    return venv / "bin" / "fiskai"


def test_an_mcp_only_environment_has_the_server_and_nothing_heavy(slim_fiskai: Path) -> None:
    installed = {
        path.name.split("-")[0].lower().replace("_", "-")
        for path in slim_fiskai.parents[1].glob("lib/python*/site-packages/*.dist-info")
    }
    helped = subprocess.run([slim_fiskai, "mcp", "--help"], capture_output=True, text=True, timeout=60)
    stub = subprocess.run([slim_fiskai, "knowledge", "stats"], capture_output=True, text=True, timeout=60)

    assert {"fiskai-cli", "fiskai-mcp", "mcp"} <= installed
    assert installed.isdisjoint(FORBIDDEN), sorted(installed & FORBIDDEN)
    assert helped.returncode == 0 and "--stdio" in helped.stdout
    assert stub.returncode == 1 and "pip install 'fiskai-cli[knowledge]'" in stub.stderr


@pytest.mark.anyio
async def test_an_mcp_only_environment_serves_the_example(slim_fiskai: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(command=str(slim_fiskai), args=["-c", str(EXAMPLE), "mcp", "--stdio"])
    with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("cluster_config_get", {"key": "replicas"})

    assert "cluster_config_get" in listed
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert "[replicas]" in block.text
