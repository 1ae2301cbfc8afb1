"""The fiskai-cli version, kept as a constant: reading package metadata costs ~70 ms of start-up.

`tests-integration/test_workspace.py` checks it against `packages/fiskai-cli/pyproject.toml`.
"""

VERSION = "0.1.0"
