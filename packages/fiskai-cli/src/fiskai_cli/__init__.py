"""The `fiskai` command: the composition root that wires every fiskai tier together.

The only package that imports click, rich or prompt-toolkit. Subcommands load lazily, so
`fiskai --help` and `fiskai --version` import nothing heavy.
"""

from ._root import main

__all__ = ["main"]
