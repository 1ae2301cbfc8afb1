"""Compatibility entry: fisk commands bound as tools.

`CommandTool` and `command_tools` live in `fiskai_core.exec.running` (they run any tool source's
commands, not only fisk's); this module keeps the earlier import path working.
"""

from fiskai_core.exec.running import CommandTool, command_tools

__all__ = ["CommandTool", "command_tools"]
