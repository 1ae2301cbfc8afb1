"""The fisk tool source: fisk applications (`APP --fisk-introspect`) described as tools.

What a library user needs:

* `load_application(path, ...)`: resolve the binary, introspect it, walk its command tree, apply
  `ai:deny` and include/exclude; returns an `Application`, which is a `fiskai_core.exec.ToolSource`
  (bind it with `fiskai_core.exec.running.command_tools` to get runnable tools). Blocking.
  `resolve_application_path` is its path rule (relative to the config's folder, always absolute).
* `introspect(path)` and `ApplicationModel` (with `CmdModel`, `FlagModel`, `ArgModel`): the
  introspection document itself.
* `walk_commands(model)` and `CommandSpec`: the command tree as tool descriptions (a `CommandSpec` is a
  `fiskai_core.exec.SourceCommand`: name, tags, descriptions, schema, argv of a call).
* `args_from_json(cmd, raw)`: fisk's `ArgsFromJSON` itself, exact to the fisk conformance vectors.
* `trace_line(path, argv)` / `trace_line_short(path, argv)`: a call as a display line (sanitized,
  capped; the short one elides long values), for transcripts.
* `missing_required_message`: kept importable here for the drivers written against it; its home is
  `fiskai_core.tools`.

Nothing here runs a tool or imports an event loop; running is `fiskai_core.exec`.
"""

from fiskai_core.tools import missing_required_message

from ._args import args_from_json
from ._describe import trace_line, trace_line_short
from ._introspect import introspect
from ._load import Application, load_application, resolve_application_path
from ._model import ApplicationModel, ArgModel, CmdModel, FlagModel
from ._walk import MAX_TOOL_NAME_LENGTH, CommandSpec, walk_commands

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "Application",
    "ApplicationModel",
    "ArgModel",
    "CmdModel",
    "CommandSpec",
    "FlagModel",
    "args_from_json",
    "introspect",
    "load_application",
    "missing_required_message",
    "resolve_application_path",
    "trace_line",
    "trace_line_short",
    "walk_commands",
]
