"""How any command tool runs, whatever its source, and what it needs from a source.

The tool-source seam: a source (`fiskai_core.fisk`; Python CLIs are next) provides a `ToolSource`
(its binary and selected commands) whose commands are `SourceCommand`s (described for a model, and
`build_argv` from a decoded `fiskai_core.tools.ToolArguments`).

This module is light (loading agent.yaml imports it): the credential-stripping environment `tool_env`
and its lists, the output cap, and how a command call is shown (`trace_line`).
`fiskai_core.exec.blocking` is `run_blocking`, the start-up runner used for discovery
(`--fisk-introspect`), so describing tools (`fiskai info`) never imports anyio.

`fiskai_core.exec.running` is the async half: `command_tools(source)` binds a tool source's commands
to its binary as `CommandTool`s, and `run_argv` runs an argv: no shell, stdin from `/dev/null`, stdout
and stderr on one pipe, its own process group (SIGKILLed on timeout, on cancellation, and when the
command exits, so nothing it started lingers), output capped at `MAX_TOOL_OUTPUT_BYTES` (head and tail
kept). Drivers never import it: the harness binds the tools, and drivers reach them through
`fiskai_core.calls`.
"""

from ._display import TRACE_LINE_MAX_RUNES, command_line, trace_line, trace_line_short
from ._env import (
    DEFAULT_STRIPPED_ENV,
    DEFAULT_STRIPPED_PREFIXES,
    ENV_NAME_PATTERN,
    HARNESS_CREDENTIAL_PREFIXES,
    is_harness_credential,
    tool_env,
)
from ._output import MAX_TOOL_OUTPUT_BYTES, HeadTailCapture
from ._process import format_seconds
from ._source import SourceCommand, ToolSource

__all__ = [
    "DEFAULT_STRIPPED_ENV",
    "DEFAULT_STRIPPED_PREFIXES",
    "ENV_NAME_PATTERN",
    "HARNESS_CREDENTIAL_PREFIXES",
    "MAX_TOOL_OUTPUT_BYTES",
    "HeadTailCapture",
    "TRACE_LINE_MAX_RUNES",
    "SourceCommand",
    "ToolSource",
    "command_line",
    "format_seconds",
    "is_harness_credential",
    "tool_env",
    "trace_line",
    "trace_line_short",
]
