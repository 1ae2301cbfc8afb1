"""`fiskai info` shows the commands a hostile or broken introspection document had refused (issue 9.4.7)."""

import json
from pathlib import Path

from click.testing import CliRunner

from fiskai_cli._root import cli
from fiskai_core.testing import write_fake_app


def test_info_warns_about_each_refused_command_name(tmp_path: Path, captured_fixtures: Path) -> None:
    document = json.loads((captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json").read_bytes())
    leaf = next(cmd for cmd in document["commands"] if cmd["name"] == "fail")
    document["commands"].extend({**leaf, "name": name} for name in ("../../etc", "--help", "fail"))
    hostile = tmp_path / "hostile.introspect.json"
    hostile.write_text(json.dumps(document), encoding="utf-8")
    config = tmp_path / "agent.yaml"
    config.write_text(f"application_path: {write_fake_app(tmp_path, hostile)}\n", encoding="utf-8")

    result = CliRunner().invoke(cli, ["-c", str(config), "info", "--format", "json"])
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    refused = [line for line in report["warnings"] if "was skipped" in line]
    assert len(refused) == 3
    assert [tool["name"] for tool in report["tools"]].count("fail") == 1

    text = CliRunner().invoke(cli, ["-c", str(config), "info"])
    assert text.exit_code == 0
    assert text.stderr.count("was skipped") == 3
