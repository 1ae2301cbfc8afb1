"""Python CLI tool sources through the `fiskai` command: info, tools list|schema|call, the gate.

Needs the subject venv (sqlite-utils, fastapi-cli, csvkit and the written subjects) that `.ci/run` builds
and names in FISKAI_PYCLI_SUBJECTS_PYTHON (the fiskai-core pycli tests build the same one in the cache).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fiskai_cli._root import cli

_CACHED = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fiskai/pycli-subjects-1/bin/python"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    python = os.environ.get("FISKAI_PYCLI_SUBJECTS_PYTHON") or str(_CACHED)
    if not Path(python).exists():
        pytest.skip("needs the Python CLI subject venv (.ci/run builds it: FISKAI_PYCLI_SUBJECTS_PYTHON)")
    bin_dir = Path(python).parent
    # fastapi-cli's wheel has no console script (fastapi's has): a two-line one, as an operator would write.
    fastapi = tmp_path / "fastapi"
    fastapi.write_text(f'#!/bin/sh\nexec "{python}" -m fastapi_cli "$@"\n', encoding="utf-8")
    fastapi.chmod(0o755)
    path = tmp_path / "agent.yaml"
    path.write_text(
        f"""
tool_sources:
  - click: {bin_dir / "sqlite-utils"}
    prefix: su_
    rules:
      - {{commands: "drop-table|drop-view", tags: [impact:destructive]}}
    deny_params: [load_extension]
  - argparse: {bin_dir / "subject-argparse"}
    rules:
      - {{commands: rows, deny_params: [delete_all]}}
  - typer: fastapi_cli.cli:app
    python: {python}
    run: {fastapi}
    exclude: {{tools: ["^run$"]}}
  - click: {bin_dir / "subject-click"}
    include: {{tools: ["^delete-all$"]}}
harness:
  confirm_tags: [impact:destructive]
expose:
  agent:
    mcp: {{}}
""",
        encoding="utf-8",
    )
    return path


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_info_lists_each_source_and_its_tools(config: Path) -> None:
    code, out, _ = _invoke("-c", str(config), "info", "--format", "json")
    assert code == 0, out
    report = json.loads(out)
    sources = {
        source["source"].split(":")[0] + ":" + Path(source["path"]).name: source for source in report["tool_sources"]
    }
    assert [source["framework"].split()[0] for source in report["tool_sources"]] == [
        "click",
        "argparse",
        "typer",
        "click",
    ]
    assert sources["click:sqlite-utils"]["version"] == "sqlite-utils 4.2.1"
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert tools["su_drop-table"]["confirm"] is True
    assert "su_install" not in tools  # forwards to pip: ai:deny
    assert "dev" in tools and "run" not in tools  # fastapi-cli, with its own exclude
    assert tools["delete-all"]["tags"] == ["ai:confirm"]
    assert any("install" in warning and "run_module" in warning for warning in report["warnings"])


def test_tools_call_runs_the_app_with_the_built_argv(config: Path) -> None:
    code, out, _ = _invoke("-c", str(config), "tools", "schema", "rows")
    assert code == 0
    schema = json.loads(out)
    assert "delete_all" not in schema["properties"] and "table" in schema["required"]
    code, out, err = _invoke("-c", str(config), "tools", "call", "rows", '{"table": "--del", "extra": ["--lim=5"]}')
    assert code == 0, err
    assert "'delete_all': False" in out and "'table': '--del'" in out and "'extra': ['--lim=5']" in out
    code, out, err = _invoke("-c", str(config), "tools", "call", "rows", '{"table": "t", "delete_all": true}')
    assert code != 0 and '"delete_all": not an accepted parameter' in err


def test_a_confirmation_option_goes_through_the_gate(config: Path) -> None:
    code, out, err = _invoke("-c", str(config), "tools", "call", "delete-all", '{"table": "t"}', "--dry-run")
    assert code == 0, err
    assert out.strip().endswith("delete-all --yes -- t")
    assert "needs approval and no terminal is attached" in err


@pytest.mark.anyio
async def test_mcp_serves_python_cli_tools_unchanged(config: Path, tmp_path: Path) -> None:
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    fiskai = str(Path(sys.executable).parent / "fiskai")
    params = StdioServerParameters(command=fiskai, args=["-c", str(config), "mcp", "--stdio"])
    with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            result = await client.call_tool("rows", {"table": "@/etc/passwd"})
            ran = await client.call_tool("rows", {"table": "t", "tag": ["--delete-all"]})
    assert "su_query" in listed and "dev" in listed and "su_install" not in listed
    assert "delete_all" not in listed["rows"].input_schema["properties"]
    refused = result.content[0]
    assert isinstance(refused, types.TextContent) and "contents of a file" in refused.text
    output = ran.content[0]
    assert isinstance(output, types.TextContent)
    assert "'delete_all': False" in output.text and "'tag': ['--delete-all']" in output.text


def test_a_denied_parameter_is_not_set_from_the_operators_environment(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        config.read_text(encoding="utf-8").split("click: ")[-1].split("\n")[0]
    )  # subject-click, beside the venv's python
    denied = tmp_path / "denied.yaml"
    denied.write_text(f"tool_sources:\n  - click: {script}\n    deny_params: [token]\n", encoding="utf-8")
    monkeypatch.setenv("SUBJECT_TOKEN", "from-the-operators-shell")
    code, out, err = _invoke("-c", str(denied), "tools", "call", "show", '{"src": "x"}')
    assert code == 0, err
    assert "('token', None)" in out and "from-the-operators-shell" not in out
