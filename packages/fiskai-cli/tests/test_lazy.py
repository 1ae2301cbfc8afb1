import click
from click.testing import CliRunner

from fiskai_cli._lazy import LazyCommand, LazyGroup


def _group(entry: LazyCommand) -> click.Group:
    @click.group(cls=LazyGroup, lazy_commands={"thing": entry})
    def root() -> None:
        """A root group."""

    return root


def test_a_subcommand_whose_extra_is_missing_becomes_a_stub_that_names_the_install() -> None:
    root = _group(LazyCommand(import_path="fiskai_no_such_extra.cmd:thing", summary="Do a thing.", extra="thing"))
    listed = CliRunner().invoke(root, ["--help"])
    assert listed.exit_code == 0
    assert "Do a thing." in listed.stdout

    helped = CliRunner().invoke(root, ["thing", "--help"])
    assert helped.exit_code == 0
    assert "pip install 'fiskai-cli[thing]'" in helped.stdout

    ran = CliRunner().invoke(root, ["thing", "--anything"])
    assert ran.exit_code == 1
    assert "pip install 'fiskai-cli[thing]'" in ran.stderr
    assert "fiskai_no_such_extra" in ran.stderr


def test_a_broken_import_inside_fiskai_cli_is_not_hidden_as_a_missing_extra() -> None:
    root = _group(LazyCommand(import_path="fiskai_cli.commands.no_such_module:thing", summary="x", extra="thing"))
    result = CliRunner().invoke(root, ["thing"])
    assert result.exit_code == 1
    assert isinstance(result.exception, ModuleNotFoundError)
