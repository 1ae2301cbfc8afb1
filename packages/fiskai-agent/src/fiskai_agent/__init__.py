"""The fiskai agent loop.

`run(RunOptions(...))` drives one agent run: it calls the model, runs the tools it asks for behind the
confirm gate, journals each step when checkpointing, and reports through the `Events` seam
(`fiskai_agent.events`). The caller composes everything (configuration, tools, stores, prompter, UI);
the provider SDK is imported only when a run starts (`fiskai_agent.llm`).

Example:
    ```python
    result = await run(RunOptions(prompt="report on ORDERS", llm=config.llm, app_tools=tools, events=ui))
    print(result.answer)
    ```
"""

from ._options import (
    KnowledgeOptions,
    MemoryOptions,
    RunControl,
    RunOptions,
    RunResult,
    RunStats,
    SessionOptions,
    StopReason,
)
from ._run import run, run_sync
from .errors import AgentError, ProviderError, ResumeRefusedError, SetupError

__all__ = [
    "AgentError",
    "KnowledgeOptions",
    "MemoryOptions",
    "ProviderError",
    "ResumeRefusedError",
    "RunControl",
    "RunOptions",
    "RunResult",
    "RunStats",
    "SessionOptions",
    "SetupError",
    "StopReason",
    "run",
    "run_sync",
]
