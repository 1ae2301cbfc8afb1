import dataclasses
import json
import sys
from pathlib import Path

import pytest

from fiskai_core.errors import IntrospectionError, ToolSelectionError
from fiskai_core.exec.running import CommandTool, command_tools
from fiskai_core.fisk import load_application, resolve_application_path
from fiskai_core.testing import Rule, call_tool, write_fake_app

pytestmark = pytest.mark.anyio


@pytest.fixture
def model(captured_fixtures: Path) -> Path:
    return captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json"


def _tool(tools: list[CommandTool], name: str) -> CommandTool:
    return next(tool for tool in tools if tool.name == name)


def _calls(app: Path) -> str:
    log = app.with_name(app.name + ".calls")
    return log.read_text(encoding="utf-8") if log.exists() else ""


def test_load_application_selects_runnable_tools_without_denied_or_hidden(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    loaded = load_application(str(app))
    names = [tool.name for tool in command_tools(loaded)]
    assert "cluster_node_drain" in names
    assert "cluster_node_list" in names
    assert "cluster_node_remove" not in names  # ai:deny
    assert not [name for name in names if name.startswith("debug")]  # hidden
    assert "cluster_node_remove" in [spec.name for spec in loaded.commands]


async def test_execute_runs_the_argv_and_reports_the_exit(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    tool = _tool(command_tools(load_application(str(app))), "cluster_node_list")
    result = await call_tool(tool, '{"limit": 3, "state": "up"}')
    assert not result.is_error
    assert result.exit_code == 0
    body = json.loads(result.text)
    assert body["command"] == "cluster node list --limit=3 --state=up"
    assert body["exit_code"] == 0
    assert "[--limit=3]" in body["output"]
    assert "LLMFORMAT=1" in body["output"]


async def test_execute_passes_hostile_values_as_single_tokens(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    tool = _tool(command_tools(load_application(str(app))), "cluster_node_list")
    result = await call_tool(tool, json.dumps({"sort": "; rm -rf / $(id) `id` --state=down"}))
    assert result.exit_code == 0
    assert "[--sort=; rm -rf / $(id) `id` --state=down]" in _calls(app).splitlines()


async def test_execute_reports_schema_violations_and_runs_nothing(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    tool = _tool(command_tools(load_application(str(app))), "cluster_node_list")
    result = await call_tool(tool, '{"limit": "lots", "state": "sideways"}')
    assert result.is_error
    assert "limit" in result.text and "state" in result.text
    assert "Nothing was run" in result.text
    assert _calls(app) == ""


async def test_execute_unknown_property_is_fisks_error_in_band(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    tool = _tool(command_tools(load_application(str(app))), "cluster_node_list")
    result = await call_tool(tool, '{"bogus": 1}')
    assert result.is_error
    assert "bogus" in result.text
    assert _calls(app) == ""


async def test_execute_non_zero_exit_is_a_normal_result(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model, exit_code=3)
    tool = _tool(command_tools(load_application(str(app))), "cluster_node_list")
    result = await call_tool(tool, None)
    assert not result.is_error
    assert result.exit_code == 3
    assert json.loads(result.text)["exit_code"] == 3


async def test_execute_missing_binary_is_an_error_result(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    tool = _tool(command_tools(load_application(str(app))), "cluster_node_list")
    app.unlink()
    result = await call_tool(tool, None)
    assert result.is_error
    assert str(app) in result.text


async def test_exposed_global_flag_is_in_the_schema_and_precedes_command_flags(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    loaded = load_application(str(app), global_flags=["output"])
    assert [flag.name for flag in loaded.exposed_global_flags] == ["output"]
    tool = _tool(command_tools(loaded), "cluster_node_list")
    assert "output" in tool.input_schema["properties"]  # pyright: ignore[reportOperatorIssue]
    result = await call_tool(tool, '{"limit": 2, "output": "json"}')
    assert json.loads(result.text)["command"] == "cluster node list --output=json --limit=2"


def test_include_and_exclude_rules_apply_after_deny(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    loaded = load_application(str(app), include=Rule(tools=["^cluster_"]), exclude=Rule(tags=["ai:confirm"]))
    assert [spec.name for spec in loaded.selected] == ["cluster_node_list", "cluster_config_get"]


def test_invalid_rule_pattern_is_a_selection_error(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    with pytest.raises(ToolSelectionError):
        load_application(str(app), include=Rule(tools=["[unclosed"]))


def test_relative_application_path_resolves_against_the_config_folder(tmp_path: Path) -> None:
    assert resolve_application_path("./bin/app", base_dir=tmp_path) == str(tmp_path / "bin" / "app")
    assert resolve_application_path("/opt/app", base_dir=tmp_path) == "/opt/app"


def test_dot_slash_path_without_a_config_folder_stays_a_path(
    tmp_path: Path, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fake_app(tmp_path, model, name="fixturectl")
    monkeypatch.chdir(tmp_path)
    assert resolve_application_path("./fixturectl") == str(tmp_path / "fixturectl")
    assert [spec.name for spec in load_application("./fixturectl").selected][:1] == ["types"]


def test_bare_application_name_not_on_path_names_the_fix() -> None:
    with pytest.raises(IntrospectionError) as caught:
        resolve_application_path("no-such-fisk-app-anywhere")
    assert "no-such-fisk-app-anywhere" in str(caught.value)
    assert "application_path" in str(caught.value)


# Defects found by attack (issue 9, section 4); each test failed on the code before its fix.


async def test_a_nul_byte_in_a_value_is_an_error_result_not_an_exception(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    tool = _tool(command_tools(load_application(str(app))), "cluster_node_list")
    result = await call_tool(tool, '{"sort": "name\\u0000--state=down"}')
    assert result.is_error
    assert "NUL" in result.text
    assert "cluster node list" in result.text
    assert _calls(app) == ""


async def test_the_command_field_is_capped_so_the_result_stays_bounded(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    tool = _tool(command_tools(load_application(str(app))), "types")
    values = {name: name[0] * 120_000 for name in ("str", "hint", "env-str", "file", "dir")}
    result = await call_tool(tool, json.dumps(values))
    assert result.exit_code == 0
    body = json.loads(result.text)
    assert len(result.text) < 80_000
    assert len(body["command"]) <= 4096
    # Every flag stays visible: the long values are elided in their middle, never a later argument dropped.
    for name in values:
        assert f"--{name}=" in body["command"]


async def test_derived_schema_refuses_a_hidden_flag_the_model_was_not_shown(
    tmp_path: Path, captured_fixtures: Path
) -> None:
    app = write_fake_app(tmp_path, captured_fixtures / "fisk" / "fixturectl.introspect.json")
    tool = _tool(command_tools(load_application(str(app))), "types")
    assert "secret" not in tool.input_schema["properties"]  # pyright: ignore[reportOperatorIssue]
    result = await call_tool(tool, '{"secret": "x"}')
    assert result.is_error
    assert "secret" in result.text
    assert _calls(app) == ""
    # Values are not type-checked against a derived schema: fisk passes a number through as text.
    ran = await call_tool(tool, '{"int": 3}')
    assert ran.exit_code == 0


def test_relative_application_path_with_a_relative_base_is_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    resolved = resolve_application_path("./app", base_dir=Path("."))
    assert resolved == str(tmp_path / "app")


def test_load_application_reports_refused_command_names_as_warnings(tmp_path: Path, model: Path) -> None:
    document = json.loads(model.read_bytes())
    leaf = next(cmd for cmd in document["commands"] if cmd["name"] == "fail")
    document["commands"].append({**leaf, "name": "--help"})
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(document), encoding="utf-8")
    loaded = load_application(str(write_fake_app(tmp_path, hostile)))
    assert "--help" not in [spec.command for spec in loaded.commands]
    assert len(loaded.warnings) == 1
    assert '"--help" was skipped' in loaded.warnings[0]


async def test_tools_run_without_default_credentials_unless_passed(
    tmp_path: Path, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 9.4.11: before, OPENAI_API_KEY, AWS_*, GITHUB_TOKEN and CLAUDE_CODE_OAUTH_TOKEN reached every tool.
    secrets = ["OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "MYCORP_TOKEN"]
    for name in [*secrets, "GH_TOKEN"]:
        monkeypatch.setenv(name, "secret-value")
    printenv = tmp_path / "printenv"
    printenv.write_text(f"#!{sys.executable}\nimport json, os\nprint(json.dumps(dict(os.environ)))\n", encoding="utf-8")
    printenv.chmod(0o755)
    source = load_application(str(write_fake_app(tmp_path, model)))
    tool = _tool(command_tools(source, strip_env=["MYCORP_*"], pass_env=["GH_TOKEN"]), "fail")
    bound = dataclasses.replace(tool, app_path=str(printenv))
    result = await call_tool(bound, '{"code": 0}')
    assert not result.is_error, result.text
    seen = json.loads(json.loads(result.text)["output"])
    assert not set(secrets) & seen.keys()
    assert seen["GH_TOKEN"] == "secret-value"


async def test_arguments_too_long_for_a_command_line_are_an_error_result(tmp_path: Path, model: Path) -> None:
    app = write_fake_app(tmp_path, model)
    tool = _tool(command_tools(load_application(str(app))), "types")
    result = await call_tool(tool, json.dumps({"strs": ["x" * 200_000] * 30}))
    assert result.is_error
    assert "too long for one command line" in result.text
    assert _calls(app) == ""
