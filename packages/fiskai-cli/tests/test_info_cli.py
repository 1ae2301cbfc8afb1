import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fiskai_cli._root import cli
from fiskai_core.testing import write_fake_app

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "fixturectl" / "agent.yaml"


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_info_on_the_example_lists_selected_tools_with_confirm_and_defer() -> None:
    code, out, _ = _invoke("-c", str(EXAMPLE), "info", "--format", "json")
    assert code == 0
    report = json.loads(out)
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert "cluster_node_remove" not in tools  # ai:deny
    assert "fail" not in tools  # excluded by the example's rule
    assert tools["cluster_node_drain"]["confirm"] is True  # ai:confirm
    assert tools["cluster_config_get"]["confirm"] is False
    assert tools["cluster_node_list"]["deferred"] is False  # ai:no_defer
    assert tools["args_basic"]["deferred"] is True  # 11 tools >= threshold
    assert report["application"]["schemas"] == "fisk"
    assert [flag["name"] for flag in report["global_flags"] if flag["exposed"]] == ["output"]
    assert report["model"]["model"] == "claude-sonnet-4-6"


def test_info_text_shows_sections_and_the_tool_table() -> None:
    code, out, _ = _invoke("-c", str(EXAMPLE), "info")
    assert code == 0
    for heading in ("Application", "Model", "Tools (11)", "Global flags", "Prompt"):
        assert heading in out
    assert "cluster_node_drain  yes" in out


def test_info_on_a_v08_model_derives_schemas_and_says_so(tmp_path: Path, captured_fixtures: Path) -> None:
    app = write_fake_app(tmp_path, captured_fixtures / "fisk" / "fixturectl.introspect.json")
    config = tmp_path / "agent.yaml"
    config.write_text(f"application_path: {app}\n", encoding="utf-8")
    code, out, _ = _invoke("-c", str(config), "info", "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert report["application"]["schemas"] == "derived"
    assert report["model"] is None
    assert report["identity"] == "fakeapp"


def test_info_without_an_application_lists_enabled_builtins(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "harness:\n  human_in_the_loop: {enabled: true}\n  knowledge: {enabled: true}\ninclude: {tools: [x]}\n",
        encoding="utf-8",
    )
    code, out, err = _invoke("-c", str(config), "info")
    assert code == 0
    assert "ask_human_confirm" in out and "knowledge_search" in out
    assert "include/exclude have no effect without application_path" in err


def test_info_warns_about_a_confirm_tag_no_tool_carries(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    text = text.replace("application_path: ./fixturectl", f"application_path: {EXAMPLE.parent / 'fixturectl'}")
    config = tmp_path / "agent.yaml"
    config.write_text(text.replace("[impact:rw]", "[impact:rw, imapct:ro]"), encoding="utf-8")
    code, _, err = _invoke("-c", str(config), "info")
    assert code == 0
    assert "'imapct:ro' matches no loaded tool" in err


def test_info_missing_config_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = _invoke("-c", "/nonexistent/agent.yaml", "info")
    assert code == 1
    assert 'reading config "/nonexistent/agent.yaml": the file does not exist' in err
    assert "Traceback" not in err
    monkeypatch.chdir(tmp_path)  # no ./agent.yaml here: the implicit file is missing, so say where -c goes
    code, _, err = _invoke("info")
    assert code == 1
    assert 'no configuration at "agent.yaml"' in err
    assert "fiskai -c path/to/agent.yaml info" in err


def test_info_invalid_config_names_file_line_and_key(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("llm:\n  model: x\n  budgt: {}\n", encoding="utf-8")
    code, _, err = _invoke("-c", str(config), "info")
    assert code == 1
    assert f"{config}:3: llm.budgt: unknown key" in err
    assert 'did you mean "budget"' in err


def test_info_application_that_is_not_executable_names_the_fix(tmp_path: Path) -> None:
    binary = tmp_path / "app"
    binary.write_text("not a program", encoding="utf-8")
    config = tmp_path / "agent.yaml"
    config.write_text("application_path: ./app\n", encoding="utf-8")
    code, _, err = _invoke("-c", str(config), "info")
    assert code == 1
    assert str(binary) in err
    assert "chmod +x" in err
