"""fiskai core: the tool model, its trust boundary, safe execution, the fisk tool source, and configuration.

A leaf library: imports no fiskai package and no heavy SDK. The top level holds what a library user needs
most: the tool model, the one call path (prepare, decide, run), the confirmation gate and its prompter seam,
fisk tools, and agent.yaml. Each name loads its module on first use, so `import fiskai_core` (which every
`from fiskai_core.X import Y` runs first) costs nothing. Everything else lives in the public subpackages:
`fiskai_core.tools` (what drivers see), `fiskai_core.calls` (the call path), `fiskai_core.exec` (what a tool
source provides and how a command runs), `fiskai_core.fisk` (the fisk tool source), `fiskai_core.config`
(agent.yaml), `fiskai_core.confirm` and `fiskai_core.prompter` (the confirmation gate),
`fiskai_core.approvals`, `fiskai_core.builtins`, `fiskai_core.remote`, `fiskai_core.errors`.

Example:
    ```python
    app = load_application("./fixturectl")
    tool = {tool.name: tool for tool in command_tools(app)}["cluster_node_list"]
    call = prepare_call(tool, '{"limit": 3}')
    result = call.result if isinstance(call, Refusal) else anyio.run(run_call, call)
    ```
"""

# Not `typing.TYPE_CHECKING`: importing typing would cost every `from fiskai_core.X import Y` that needs none
# of it (pyright reads any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .calls import Refusal, ToolCall, prepare_call, run_call
    from .config import Config, Mode, load_config
    from .confirm import ConfirmGate, GateDecision
    from .errors import FiskaiError
    from .exec.running import command_tools
    from .fisk import load_application
    from .prompter import ConfirmChoice, DenyPrompter, GateRequest, Prompter
    from .tools import CallContext, CallPlan, Tool, ToolArguments, ToolEntry, ToolResult, ToolSet, parse_arguments

# Loaded on first use: the subpackages pull in anyio, pydantic and the YAML reader, and a caller that imports
# only `fiskai_core.credentials` (the CLI, before anything else) must not pay for them.
_LAZY = {
    "CallContext": ".tools",
    "CallPlan": ".tools",
    "Tool": ".tools",
    "ToolArguments": ".tools",
    "ToolEntry": ".tools",
    "ToolResult": ".tools",
    "ToolSet": ".tools",
    "parse_arguments": ".tools",
    "Refusal": ".calls",
    "ToolCall": ".calls",
    "prepare_call": ".calls",
    "run_call": ".calls",
    "ConfirmGate": ".confirm",
    "GateDecision": ".confirm",
    "ConfirmChoice": ".prompter",
    "DenyPrompter": ".prompter",
    "GateRequest": ".prompter",
    "Prompter": ".prompter",
    "FiskaiError": ".errors",
    "command_tools": ".exec.running",
    "load_application": ".fisk",
    "Config": ".config",
    "Mode": ".config",
    "load_config": ".config",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "CallContext",
    "CallPlan",
    "Config",
    "ConfirmChoice",
    "ConfirmGate",
    "DenyPrompter",
    "FiskaiError",
    "GateDecision",
    "GateRequest",
    "Mode",
    "Prompter",
    "Refusal",
    "Tool",
    "ToolArguments",
    "ToolCall",
    "ToolEntry",
    "ToolResult",
    "ToolSet",
    "command_tools",
    "load_application",
    "load_config",
    "parse_arguments",
    "prepare_call",
    "run_call",
]
