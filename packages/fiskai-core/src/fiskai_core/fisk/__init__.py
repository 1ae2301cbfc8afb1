"""The fisk command-tree tool kind: introspection, tools, the argv trust boundary and safe execution."""

from ._env import CREDENTIAL_ENV_NAMES, tool_env
from ._exec import ExecOutcome, run_argv
from ._introspect import introspect
from ._model import ApplicationModel, ArgModel, CmdModel, FlagModel
from ._output import MAX_TOOL_OUTPUT_BYTES

__all__ = [
    "CREDENTIAL_ENV_NAMES",
    "MAX_TOOL_OUTPUT_BYTES",
    "ApplicationModel",
    "ArgModel",
    "CmdModel",
    "ExecOutcome",
    "FlagModel",
    "introspect",
    "run_argv",
    "tool_env",
]
