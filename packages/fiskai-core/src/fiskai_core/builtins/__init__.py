"""Built-in tools that every driver can offer beside an application's commands, on one small base."""

from ._agent_set import KnowledgeAccess, agent_tool_set
from ._ask_human import (
    ASK_HUMAN_CONFIRM,
    ASK_HUMAN_INPUT,
    ASK_HUMAN_SELECT,
    HITL_SYSTEM_NOTE,
    AskHumanConfirm,
    AskHumanInput,
    AskHumanSelect,
    ask_human_tools,
)
from ._base import BuiltinTool, json_result, quoted_trace, string_argument
from ._find_tools import FIND_TOOLS, FindToolsAnswer, FindToolsTool, found_tool_names, not_loaded_result
from ._find_tools_loaded import DeferredTools
from ._knowledge import KNOWLEDGE_SEARCH, KNOWLEDGE_SYSTEM_NOTE, KnowledgeSearchTool
from ._memory import (
    MEMORY_SYSTEM_NOTE,
    MEMORY_TOOL_NAMES,
    MemoryAccess,
    MemoryNote,
    MemoryTool,
    WriteOutcome,
    memory_tools,
)

__all__ = [
    "ASK_HUMAN_CONFIRM",
    "ASK_HUMAN_INPUT",
    "ASK_HUMAN_SELECT",
    "FIND_TOOLS",
    "HITL_SYSTEM_NOTE",
    "KNOWLEDGE_SEARCH",
    "KNOWLEDGE_SYSTEM_NOTE",
    "MEMORY_SYSTEM_NOTE",
    "MEMORY_TOOL_NAMES",
    "AskHumanConfirm",
    "AskHumanInput",
    "AskHumanSelect",
    "BuiltinTool",
    "DeferredTools",
    "FindToolsAnswer",
    "FindToolsTool",
    "KnowledgeAccess",
    "KnowledgeSearchTool",
    "MemoryAccess",
    "MemoryNote",
    "MemoryTool",
    "WriteOutcome",
    "agent_tool_set",
    "ask_human_tools",
    "found_tool_names",
    "json_result",
    "memory_tools",
    "not_loaded_result",
    "quoted_trace",
    "string_argument",
]
