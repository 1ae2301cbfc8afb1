# pyright: basic
"""Reports, in its help text, what the introspection child gave it at import: cwd, HOME, the environment."""

import json
import os
import sys

import click

_SEEN = json.dumps(
    {
        "cwd": os.getcwd(),
        "home": os.environ.get("HOME"),
        "env": sorted(os.environ),
        "isolated": sys.flags.isolated,
        "cwd_entries": os.listdir("."),
    }
)


@click.command(help=_SEEN)
@click.option("--x")
def probe(x):
    """Replaced by the help above."""
