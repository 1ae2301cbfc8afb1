"""The `fiskai` command: the composition root that wires every fiskai tier together.

The only package that imports click, rich or prompt-toolkit. Subcommands load lazily, so
`fiskai --help` and `fiskai --version` import nothing heavy. Importing this package imports nothing at
all: the console script's start-up tuning (`_entry`) must run before click loads.
"""

__all__ = ["main"]


def main() -> None:
    """Run the `fiskai` command."""
    from ._entry import main as run

    run()
