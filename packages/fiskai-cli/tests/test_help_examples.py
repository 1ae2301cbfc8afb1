"""Every subcommand's `--help` teaches by example (the README promises it)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from fiskai_cli._root import COMMANDS, cli


def _paths(names: tuple[str, ...]) -> list[list[str]]:
    paths: list[list[str]] = []
    with click.Context(cli) as ctx:
        for name in names:
            command = cli.get_command(ctx, name)
            assert command is not None, name
            paths.append([name])
            if isinstance(command, click.Group):
                paths.extend([name, sub] for sub in command.list_commands(ctx))
    return paths


@pytest.mark.parametrize("path", _paths(tuple(COMMANDS)), ids=" ".join)
def test_help_shows_runnable_examples_unwrapped(path: list[str]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="fiskai")
    assert result.exit_code == 0, result.output
    assert "Examples:" in result.stdout
    examples = result.stdout.split("Examples:", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert examples, path
    # Most lines run fiskai; a few show the other side (e.g. `claude mcp add ...` for the MCP server).
    assert sum("fiskai " in line for line in examples) >= max(1, len(examples) - 1), examples


def test_run_examples_show_the_chat_session_presentation_and_credential_flags() -> None:
    result = CliRunner().invoke(cli, ["run", "--help"], prog_name="fiskai")
    examples = result.stdout.split("Examples:", 1)[1]
    for flag in ("--chat --checkpoint", "--tool-output", "--no-color", "--api-key-file", "NO_TUI=1", "TOOL_OUTPUT="):
        assert flag in examples, flag
    for variable in ("VERBOSE=1", "HTTP_DEBUG=1"):
        assert variable in examples, variable
