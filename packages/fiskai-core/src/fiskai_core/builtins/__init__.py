"""Built-in tools that every driver can offer beside an application's commands."""

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
from ._knowledge import KNOWLEDGE_SEARCH, KNOWLEDGE_SYSTEM_NOTE, KnowledgeSearchTool

__all__ = [
    "ASK_HUMAN_CONFIRM",
    "ASK_HUMAN_INPUT",
    "ASK_HUMAN_SELECT",
    "HITL_SYSTEM_NOTE",
    "KNOWLEDGE_SEARCH",
    "KNOWLEDGE_SYSTEM_NOTE",
    "AskHumanConfirm",
    "AskHumanInput",
    "AskHumanSelect",
    "KnowledgeSearchTool",
    "ask_human_tools",
]
