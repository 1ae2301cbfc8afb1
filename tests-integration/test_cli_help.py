import json
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from fiskai_cli._root import COMMANDS, cli


def _all_command_paths() -> list[list[str]]:
    paths: list[list[str]] = []
    with click.Context(cli) as ctx:
        for name in COMMANDS:
            command = cli.get_command(ctx, name)
            assert command is not None, name
            paths.append([name])
            if isinstance(command, click.Group):
                paths.extend([name, sub] for sub in command.list_commands(ctx))
    return paths


def test_root_help_lists_every_subcommand() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.stdout


def test_every_subcommand_has_help_that_teaches() -> None:
    for path in _all_command_paths():
        result = CliRunner().invoke(cli, [*path, "--help"], prog_name="fiskai")
        assert result.exit_code == 0, (path, result.output)
        assert "Usage: fiskai" in result.stdout, path
        assert len(result.stdout.splitlines()) >= 4, path


def test_version_and_help_import_no_subcommand_or_heavy_sdk() -> None:
    probe = (
        "import sys\n"
        "from fiskai_cli._root import cli\n"
        "for args in (['--version'], ['--help']):\n"
        "    try:\n"
        "        cli.main(args, prog_name='fiskai')\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('anthropic', 'mcp', 'nats', 'apsw', 'pydantic', 'rich', 'yaml', 'anyio', 'fiskai_cli.commands.info')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_console_entry_runs_info_end_to_end_in_a_fresh_process() -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "fixturectl" / "agent.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(example), "info", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "cluster_node_drain" in [tool["name"] for tool in json.loads(done.stdout)["tools"]]


def test_a_cli_error_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(tmp_path / "missing.yaml"), "info"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("Error: ")
