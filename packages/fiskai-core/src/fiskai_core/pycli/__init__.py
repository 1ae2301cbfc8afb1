"""Python CLIs (click, typer, argparse) as a tool source, behind the same trust boundary as fisk tools.

* `load_python_cli(framework, target, ...)`: locate the app and its interpreter, describe it in a child
  of that interpreter (cached), walk its leaves, apply tags, `deny_params` and include/exclude; returns
  a `PyCliSource`, a `fiskai_core.exec.ToolSource` (bind it with `fiskai_core.exec.running.command_tools`).
* `describe_target` / `PyCliTarget` / `PyCliDocument`: the introspection itself and its document.
* `command_schema` / `build_argv`: parameters to schema, and a call to an argv (the trust boundary).

fiskai never imports click, typer or the app: `child/fiskai_child.py` runs inside the app's interpreter. Blocking.
"""

from ._argv import build_argv, command_schema
from ._introspect import CHILD_SCRIPT, PyCliTarget, cache_dir, describe_target
from ._model import Framework, ParamModel, PyCliDocument, PyCommandModel
from ._source import PyCliSource, PyCommandSpec, TagRule, load_python_cli, script_interpreter

__all__ = [
    "CHILD_SCRIPT",
    "Framework",
    "ParamModel",
    "PyCliDocument",
    "PyCliSource",
    "PyCliTarget",
    "PyCommandModel",
    "PyCommandSpec",
    "TagRule",
    "build_argv",
    "cache_dir",
    "command_schema",
    "describe_target",
    "load_python_cli",
    "script_interpreter",
]
