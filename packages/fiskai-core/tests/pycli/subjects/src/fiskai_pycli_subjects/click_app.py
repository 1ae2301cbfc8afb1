# pyright: basic, reportMissingImports=false, reportAttributeAccessIssue=false, reportOptionalMemberAccess=false
"""A click app carrying the hazards: an optional-value option, passthrough, a confirmation option."""

import subprocess
import sys

import click


@click.group()
@click.option("--debug", is_flag=True)
def cli(debug):
    """Subject click app."""


@cli.command()
@click.option("--mode", is_flag=False, flag_value="auto", help="Mode; the value may be left out.")
@click.option("--limit", type=int)
@click.option("--token", envvar="SUBJECT_TOKEN", help="Read from SUBJECT_TOKEN too.")
@click.option("-n", type=int, help="Short-only.")
@click.option("--shout/--no-shout")
@click.option("--upper", "case", flag_value="upper", default=True)
@click.option("--lower", "case", flag_value="lower")
@click.option("-v", "--verbose", count=True)
@click.option("--tag", multiple=True)
@click.option("--point", nargs=2, type=float)
@click.option("--color", type=click.Choice(["red", "green"]))
@click.argument("src", type=click.Path(allow_dash=True))
@click.argument("rest", nargs=-1)
def show(**kwargs):
    """Print what was parsed."""
    click.echo(repr(sorted(kwargs.items())))


show.__fiskai__ = {"tags": ["impact:ro"]}  # the app's own opt-in; config rules add to it


@cli.command("delete-all")
@click.confirmation_option(prompt="Really delete everything?")
@click.argument("table")
def delete_all(table):
    """Delete every row of TABLE."""
    click.echo(f"deleted {table}")


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def forward(args):
    """Hand everything to another program."""
    subprocess.run([sys.executable, "-c", "import sys; print(sys.argv[1:])", *args], check=False)
