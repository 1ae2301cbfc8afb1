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
from ._citations import CitationRewriter, github_anchor, short_ref
from ._files import BASE64_ENCODE, READ_FILE, Base64EncodeTool, FileRefused, ReadFileTool, harness_tools, read_confined
from ._find_tools import FIND_TOOLS, FindToolsAnswer, FindToolsTool, found_tool_names, not_loaded_result
from ._find_tools_loaded import DeferredTools
from ._knowledge import KNOWLEDGE_SEARCH, KNOWLEDGE_SYSTEM_NOTE, KnowledgeSearchTool
from ._knowledge_enumerate import KNOWLEDGE_ENUMERATE, KNOWLEDGE_ENUMERATE_NOTE, KnowledgeEnumerateTool
from ._knowledge_read import KNOWLEDGE_READ, KnowledgeReadTool
from ._memory import (
    MEMORY_READ_ONLY_NOTE,
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
    "BASE64_ENCODE",
    "FIND_TOOLS",
    "HITL_SYSTEM_NOTE",
    "KNOWLEDGE_ENUMERATE",
    "KNOWLEDGE_ENUMERATE_NOTE",
    "KNOWLEDGE_READ",
    "KNOWLEDGE_SEARCH",
    "KNOWLEDGE_SYSTEM_NOTE",
    "MEMORY_READ_ONLY_NOTE",
    "MEMORY_SYSTEM_NOTE",
    "READ_FILE",
    "MEMORY_TOOL_NAMES",
    "AskHumanConfirm",
    "AskHumanInput",
    "AskHumanSelect",
    "Base64EncodeTool",
    "BuiltinTool",
    "CitationRewriter",
    "DeferredTools",
    "FileRefused",
    "FindToolsAnswer",
    "FindToolsTool",
    "KnowledgeAccess",
    "KnowledgeEnumerateTool",
    "KnowledgeReadTool",
    "KnowledgeSearchTool",
    "MemoryAccess",
    "MemoryNote",
    "MemoryTool",
    "ReadFileTool",
    "WriteOutcome",
    "agent_tool_set",
    "ask_human_tools",
    "found_tool_names",
    "github_anchor",
    "harness_tools",
    "json_result",
    "memory_tools",
    "not_loaded_result",
    "quoted_trace",
    "read_confined",
    "short_ref",
    "string_argument",
]
