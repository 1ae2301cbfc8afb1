"""`fiskai approvals`: every example its `--help` shows runs as written, and `check` talks to an operator."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from fiskai_cli._root import cli

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "examples" / "fixturectl"


@pytest.fixture
def example_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of examples/fixturectl as the working directory, with an empty state home of its own."""
    folder = tmp_path / "fixturectl"
    shutil.copytree(EXAMPLE, folder)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return folder


def _invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args, prog_name="fiskai")


def _examples(path: list[str]) -> list[str]:
    shown = _invoke([*path, "--help"])
    assert shown.exit_code == 0, shown.output
    block = shown.stdout.split("Examples:", 1)[1].split("\n\n", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_every_help_example_runs_as_written_in_the_order_shown(example_dir: Path) -> None:
    with click.Context(cli) as ctx:
        group = cli.get_command(ctx, "approvals")
        assert isinstance(group, click.Group)
        subcommands = group.list_commands(ctx)
    assert subcommands == ["add", "check", "list", "rm"], "the group's help names this order"
    examples = [line for path in (["approvals"], *(["approvals", s] for s in subcommands)) for line in _examples(path)]
    assert len(examples) >= 10
    for line in examples:
        words = shlex.split(line)
        assert words[0] == "fiskai", line
        result = _invoke(words[1:])
        assert result.exit_code == 0, f"{line}\n{result.output}"
    # The sequence ends with every rule it added removed again, except the config_set one.
    left = _invoke(["-c", "agent.yaml", "approvals", "list"])
    assert [row.split()[1] for row in left.stdout.splitlines()[1:]] == ["cluster_config_set"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"node": "n3"}', 'these arguments do not fit "cluster_node_drain": property "reason": required but missing'),
        ('{"node": "n3", "reason": 7}', 'these arguments do not fit "cluster_node_drain"'),
        ('{"node": "n\\u0000", "reason": "x"}', "a value contains a NUL byte"),
        ("node=n3", "ARGUMENTS is not JSON"),
        ('["n3"]', "ARGUMENTS must be one JSON object"),
    ],
)
def test_check_says_what_to_fix_to_an_operator(example_dir: Path, arguments: str, expected: str) -> None:
    result = _invoke(["-c", "agent.yaml", "approvals", "check", "cluster_node_drain", arguments])
    assert result.exit_code == 1
    assert expected in result.stderr
    assert "call again" not in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
