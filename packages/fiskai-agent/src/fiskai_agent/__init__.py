"""The fiskai agent loop.

`run(RunOptions(...))` drives one agent run: it calls the model, runs the tools it asks for behind the
confirm gate, journals each step when checkpointing, and reports through the `Events` seam
(`fiskai_agent.events`). The caller composes everything (configuration, the tool set, the gate, stores, UI);
the provider SDK is imported only when a run starts (`fiskai_agent.llm`).

Example:
    ```python
    result = await run(RunOptions(prompt="report on ORDERS", llm=config.llm, tools=ToolSet.of(tools), events=ui))
    print(result.answer)
    ```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .errors import AgentError, ProviderError, ResumeRefusedError, SetupError

if TYPE_CHECKING:
    from ._options import (
        FollowUp,
        NextPrompt,
        RunControl,
        RunOptions,
        RunResult,
        RunStats,
        SessionOptions,
        StopReason,
    )
    from ._run import run, run_sync
    from ._tool_updates import ToolUpdates

# The loop pulls in the stores and the built-ins; loaded on first use, so a caller that needs only
# `fiskai_agent.llm` (`fiskai info` deciding capabilities) does not pay for them.
_LAZY = {
    "FollowUp": "._options",
    "NextPrompt": "._options",
    "RunControl": "._options",
    "RunOptions": "._options",
    "RunResult": "._options",
    "RunStats": "._options",
    "SessionOptions": "._options",
    "StopReason": "._options",
    "ToolUpdates": "._tool_updates",
    "run": "._run",
    "run_sync": "._run",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "AgentError",
    "FollowUp",
    "NextPrompt",
    "ProviderError",
    "ResumeRefusedError",
    "RunControl",
    "RunOptions",
    "RunResult",
    "RunStats",
    "SessionOptions",
    "SetupError",
    "StopReason",
    "ToolUpdates",
    "run",
    "run_sync",
]
