"""The fisk command-tree tool kind: introspection, tools, the argv trust boundary and safe execution."""

from ._env import CREDENTIAL_ENV_NAMES, tool_env
from ._exec import ExecOutcome, run_argv
from ._introspect import introspect
from ._load import Application, load_application, resolve_application_path
from ._model import ApplicationModel, ArgModel, CmdModel, FlagModel
from ._output import MAX_TOOL_OUTPUT_BYTES
from ._tool import CommandTool
from ._walk import CommandSpec, walk_commands

__all__ = [
    "CREDENTIAL_ENV_NAMES",
    "MAX_TOOL_OUTPUT_BYTES",
    "Application",
    "ApplicationModel",
    "ArgModel",
    "CmdModel",
    "CommandSpec",
    "CommandTool",
    "ExecOutcome",
    "FlagModel",
    "introspect",
    "load_application",
    "resolve_application_path",
    "run_argv",
    "tool_env",
    "walk_commands",
]
