"""The fisk command-tree tool kind: introspection, commands, and the argv trust boundary.

Running commands (the async process runner, commands bound as tools) lives in
`fiskai_core.fisk.execution`, so describing an application imports no event-loop machinery.
"""

from ._args import args_from_json, decode_arguments
from ._describe import (
    TRACE_LINE_MAX_RUNES,
    command_line,
    human_description,
    model_description,
    trace_line,
    trace_line_short,
)
from ._env import CREDENTIAL_ENV_NAMES, tool_env
from ._globals import (
    FRAMEWORK_GLOBAL_FLAGS,
    applicable_globals,
    build_argv,
    global_flag_schema,
    merge_global_flags,
    resolve_global_flags,
)
from ._gojson import DecodedValue, JsonNumber, go_quote
from ._introspect import introspect
from ._load import Application, load_application, resolve_application_path
from ._model import ApplicationModel, ArgModel, CmdModel, FlagModel
from ._output import MAX_TOOL_OUTPUT_BYTES
from ._schema import derived_command_schema, flag_restricted_schema
from ._validate import (
    missing_required,
    missing_required_message,
    schema_required,
    validate_arguments,
    validate_value,
)
from ._walk import CommandSpec, SchemaSource, walk_commands

__all__ = [
    "CREDENTIAL_ENV_NAMES",
    "FRAMEWORK_GLOBAL_FLAGS",
    "MAX_TOOL_OUTPUT_BYTES",
    "TRACE_LINE_MAX_RUNES",
    "Application",
    "ApplicationModel",
    "ArgModel",
    "CmdModel",
    "CommandSpec",
    "DecodedValue",
    "FlagModel",
    "JsonNumber",
    "SchemaSource",
    "applicable_globals",
    "args_from_json",
    "build_argv",
    "command_line",
    "decode_arguments",
    "derived_command_schema",
    "flag_restricted_schema",
    "global_flag_schema",
    "go_quote",
    "human_description",
    "introspect",
    "load_application",
    "merge_global_flags",
    "missing_required",
    "missing_required_message",
    "model_description",
    "resolve_application_path",
    "resolve_global_flags",
    "schema_required",
    "tool_env",
    "trace_line",
    "trace_line_short",
    "validate_arguments",
    "validate_value",
    "walk_commands",
]
