"""Built-in tools that every driver can offer beside an application's commands."""

from ._knowledge import KNOWLEDGE_SEARCH, KNOWLEDGE_SYSTEM_NOTE, KnowledgeSearchTool

__all__ = ["KNOWLEDGE_SEARCH", "KNOWLEDGE_SYSTEM_NOTE", "KnowledgeSearchTool"]
