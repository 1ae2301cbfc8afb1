"""The fisk command-tree tool kind: introspection, tools, the argv trust boundary and safe execution."""

from ._model import ApplicationModel, ArgModel, CmdModel, FlagModel

__all__ = ["ApplicationModel", "ArgModel", "CmdModel", "FlagModel"]
