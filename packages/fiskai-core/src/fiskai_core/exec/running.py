"""Running commands: the async argv runner, and a tool source's commands bound as tools.

Separate from `fiskai_core.exec` so that describing tools never imports the async process machinery.
The harness binds tools with `command_tools`; drivers run calls through `fiskai_core.calls`.
"""

from ._run import DEFAULT_WAIT_DELAY, ExecOutcome, OutputSink, run_argv, run_to_sink
from ._tool import EFFECT_ID_ENV, MAX_COMMAND_CHARS, CommandTool, capped_command_line, command_tools

__all__ = [
    "DEFAULT_WAIT_DELAY",
    "EFFECT_ID_ENV",
    "MAX_COMMAND_CHARS",
    "CommandTool",
    "ExecOutcome",
    "OutputSink",
    "capped_command_line",
    "command_tools",
    "run_argv",
    "run_to_sink",
]
