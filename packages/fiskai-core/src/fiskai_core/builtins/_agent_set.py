"""The tool set of an agent run: the application's commands, the enabled built-ins, peers' tools.

In the reference order (6.1): application tools, then the built-ins (ask_human, memory, knowledge),
then remote tools, then an embedder's custom tools by name; each built-in group brings the
system-prompt note that tells the model how to use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fiskai_core.knowledge import KnowledgeSearcher
from fiskai_core.prompter import Prompter
from fiskai_core.tools import Tool, ToolEntry, ToolSet

from ._ask_human import HITL_SYSTEM_NOTE, ask_human_tools
from ._citations import CitationRewriter
from ._knowledge import KNOWLEDGE_SYSTEM_NOTE, KnowledgeSearchTool
from ._knowledge_enumerate import KNOWLEDGE_ENUMERATE_NOTE, KnowledgeEnumerateTool
from ._knowledge_read import KnowledgeReadTool
from ._memory import MEMORY_READ_ONLY_NOTE, MEMORY_SYSTEM_NOTE, MemoryAccess, memory_tools

__all__ = ["KnowledgeAccess", "agent_tool_set"]


class KnowledgeAccess:
    """`harness.knowledge` for a run: what `knowledge_search` searches and how it answers.

    The searcher (None: no index yet), each pack's token budget, the most excerpts a call returns, the
    result format (`pack` or the Go agent's `json`), the citation rewrite rules and whether `knowledge_read`
    is offered.
    """

    __slots__ = (
        "citations",
        "expand_to_section",
        "indexed_chunks",
        "max_injected_tokens",
        "read_tool",
        "result_format",
        "searcher",
        "top_k",
    )

    def __init__(
        self,
        searcher: KnowledgeSearcher | None,
        *,
        max_injected_tokens: int = 6000,
        top_k: int | None = None,
        result_format: str = "pack",
        citations: CitationRewriter | None = None,
        read_tool: bool = False,
        expand_to_section: bool = False,
        indexed_chunks: Callable[[], int | None] | None = None,
    ) -> None:
        self.searcher = searcher
        self.indexed_chunks = indexed_chunks  # the retrieval span's chunk count (telemetry only)
        self.expand_to_section = expand_to_section
        self.read_tool = read_tool
        self.citations = citations or CitationRewriter()
        self.max_injected_tokens = max_injected_tokens
        self.top_k = top_k
        self.result_format = result_format


def agent_tool_set(
    *,
    application: Sequence[Tool] = (),
    remote: Sequence[tuple[Tool, str]] = (),
    custom: Sequence[Tool] = (),
    ask_human: Prompter | None = None,
    memory: MemoryAccess | None = None,
    memory_read_only: bool = False,
    knowledge: KnowledgeAccess | None = None,
    harness: Sequence[Tool] = (),
    has_application: bool = True,
) -> ToolSet:
    """Assemble a run's tools.

    Args:
        application: The application's selected commands.
        remote: Peers' tools, each with the agent that serves it.
        custom: An embedder's in-process tools.
        ask_human: Enables the ask_human tools (`human_in_the_loop`), asking through this prompter.
        memory: Enables the memory tools over this store.
        memory_read_only: Offer only memory_list and memory_read (`harness.memory.read_only`).
        knowledge: Enables knowledge_search and knowledge_enumerate (and the tools its settings add).
        harness: The `harness.tools` built-ins (read_file, base64_encode), after the knowledge tools.
        has_application: Whether the configuration names an application (shapes the no-tools error).

    Raises:
        ToolSelectionError: two tools have one name (the message says which parts brought them).
    """
    entries = [ToolEntry(tool=tool, kind="application") for tool in application]
    notes: list[str] = []
    if ask_human is not None:
        entries.extend(ToolEntry(tool=tool, kind="builtin") for tool in ask_human_tools(ask_human))
        notes.append(HITL_SYSTEM_NOTE)
    if memory is not None:
        tools = memory_tools(memory, read_only=memory_read_only)
        entries.extend(ToolEntry(tool=tool, kind="builtin") for tool in tools)
        notes.append(MEMORY_READ_ONLY_NOTE if memory_read_only else MEMORY_SYSTEM_NOTE)
    if knowledge is not None:
        tool = KnowledgeSearchTool(
            knowledge.searcher,
            max_injected_tokens=knowledge.max_injected_tokens,
            top_k=knowledge.top_k,
            result_format=knowledge.result_format,
            expand_to_section=knowledge.expand_to_section,
            citations=knowledge.citations,
            indexed_chunks=knowledge.indexed_chunks,
        )
        enumerate_tool = KnowledgeEnumerateTool(knowledge.searcher, citations=knowledge.citations)
        entries.extend(ToolEntry(tool=t, kind="builtin") for t in (tool, enumerate_tool))
        if knowledge.read_tool:
            reader = KnowledgeReadTool(
                knowledge.searcher, max_injected_tokens=knowledge.max_injected_tokens, citations=knowledge.citations
            )
            entries.append(ToolEntry(tool=reader, kind="builtin"))
        notes.append(f"{KNOWLEDGE_SYSTEM_NOTE} {KNOWLEDGE_ENUMERATE_NOTE}")  # one block: the tools are one family
    entries.extend(ToolEntry(tool=tool, kind="builtin") for tool in harness)
    entries.extend(ToolEntry(tool=tool, kind="remote", origin=agent) for tool, agent in remote)
    entries.extend(ToolEntry(tool=tool, kind="custom") for tool in sorted(custom, key=lambda t: t.name))
    return ToolSet(tuple(entries), tuple(notes), has_application)
