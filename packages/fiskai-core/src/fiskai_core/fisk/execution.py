"""Running fisk commands: the async runner and commands bound to their binary as tools.

Separate from `fiskai_core.fisk` so that loading and describing an application (`fiskai info`) never
imports the async process machinery; the drivers that run tools import this module.
"""

from ._exec import DEFAULT_WAIT_DELAY, ExecOutcome, OutputSink, run_argv, run_to_sink
from ._tool import CommandTool, command_tools

__all__ = ["DEFAULT_WAIT_DELAY", "CommandTool", "ExecOutcome", "OutputSink", "command_tools", "run_argv", "run_to_sink"]
