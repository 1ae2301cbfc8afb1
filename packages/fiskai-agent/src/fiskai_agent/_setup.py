"""One-time setup before the loop, in the reference order (6.1); each failure stops before any model call.

Tools and built-ins (name clashes are errors), the confirm gate and its advisories, the provider and its
capabilities, tool-search deferral, the system blocks, the fingerprint, then the journal: a new
checkpoint, a resume (load, fold, guard), or nothing.

Deferral takes one of three forms: server-side tool search (deferred tools marked, the search tool
added); the client-side `find_tools` finder when the server has no tool search (`_tool_finder`); or,
when the operator set `llm.no_tool_search`, every tool sent directly as the original does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import cast

import anyio

from fiskai_agent._budget import Budget
from fiskai_agent._journal import RunJournal, delivered_citations, new_run_id
from fiskai_agent._memory_tools import memory_tools
from fiskai_agent._options import RunOptions, RunStats
from fiskai_agent._tool_finder import FinderMode, finder_mode, found_answers
from fiskai_agent._tools import Entry, tool_def, tools_hash_input
from fiskai_agent.errors import ResumeRefusedError, SetupError
from fiskai_agent.events import Advisory, Presentation, ResumeInfo, RunInfo, ToolKind
from fiskai_agent.llm import (
    Capabilities,
    CapabilityOverrides,
    Message,
    Provider,
    ProviderSettings,
    TextBlock,
    ToolDef,
    create_provider,
    message_from_json,
    overrides_from_settings,
    provider_spec,
    validate_base_url,
)
from fiskai_core.approvals import no_terminal_warning
from fiskai_core.builtins import (
    HITL_SYSTEM_NOTE,
    KNOWLEDGE_SEARCH,
    KNOWLEDGE_SYSTEM_NOTE,
    KnowledgeSearchTool,
    ask_human_tools,
)
from fiskai_core.confirm import ConfirmGate
from fiskai_core.tools import FIND_TOOLS, Tool, plan_deferral
from fiskai_memory import MEMORY_SYSTEM_NOTE, MemoryStoreError, build_memory_index
from fiskai_runstate import (
    Fingerprint,
    JournalNotFoundError,
    JsonObject,
    MetaRecord,
    PendingBatch,
    ResumeError,
    RunState,
    ToolIntentRecord,
    check_resume,
    fold,
    sha256_json,
)

__all__ = ["RESUME_REMINDER", "Setup", "fall_back", "prepare"]

DEFAULT_PROMPT = "assist the user"
RESUME_REMINDER = (
    "This session was suspended and has now resumed. Tool results earlier in the conversation may be stale; "
    "re-verify current state before taking any state-changing action."
)


@dataclass(slots=True, kw_only=True)
class Setup:
    """Everything the loop needs, built once."""

    options: RunOptions
    entries: dict[str, Entry]
    tool_defs: tuple[ToolDef, ...]
    tool_search: bool
    gate: ConfirmGate
    provider: Provider
    owns_provider: bool
    capabilities: Capabilities
    budget: Budget
    thinking: bool
    system: list[str]
    journal: RunJournal
    messages: list[Message]
    stats: RunStats
    start_iteration: int = 0
    pending: PendingBatch | None = None
    intents: dict[str, ToolIntentRecord] = field(default_factory=dict[str, ToolIntentRecord])
    """Intents of the pending batch with no result: calls that may have had their effect before a crash."""
    session_id: str | None = None
    last_stop_reason: str = ""
    """The stop reason of the last journaled model turn (resume only)."""
    finder: FinderMode | None = None
    """The client-side tool finder, when deferred tools are reached through `find_tools`."""
    deferrable: list[Entry] = field(default_factory=list[Entry])
    builtins: list[Entry] = field(default_factory=list[Entry])
    fell_back: bool = False
    """A server refused a capability and the run dropped them (at most once per run)."""

    def request_tools(self) -> tuple[ToolDef, ...]:
        """The tool list of the next request."""
        return self.finder.tools() if self.finder is not None else self.tool_defs


def _entries(options: RunOptions, gate: ConfirmGate) -> tuple[dict[str, Entry], list[Entry], list[Entry]]:
    """Build the tool table; returns (by name, deferrable in order, built-ins in order)."""
    table: dict[str, Entry] = {}
    deferrable: list[Entry] = []
    builtins: list[Entry] = []

    def add(tool: Tool, kind: ToolKind, presentation: Presentation, clash: str, *, agent: str = "") -> Entry:
        if not tool.name:
            raise SetupError(f"{clash} adds a tool with an empty name")
        if tool.name in table:
            raise SetupError(
                f'{clash} adds a tool "{tool.name}" but another tool already has that name; exclude or rename it'
            )
        entry = Entry(
            tool=tool,
            kind=kind,
            presentation=presentation,
            deferrable=kind != "builtin",
            gate_tag=gate.trigger_tag(tool.tags) if kind != "remote" else None,
            agent=agent,
        )
        table[tool.name] = entry
        (deferrable if entry.deferrable else builtins).append(entry)
        return entry

    for tool in options.app_tools:
        add(tool, "application", "command", "the application")
    for tool in _builtin_tools(options):
        presentation: Presentation = "self_rendered" if tool.name.startswith("ask_human_") else "traced"
        if tool.name in table:
            raise SetupError(
                f'{_builtin_owner(tool.name)} adds a built-in tool "{tool.name}" but the application already exposes '
                "a tool with that name; exclude or rename it"
            )
        add(tool, "builtin", presentation, _builtin_owner(tool.name))
    for tool in options.remote_tools:
        add(tool, "remote", "remote", "remote_tools", agent=str(getattr(tool, "agent", "")))
    for tool in sorted(options.custom_tools, key=lambda t: t.name):
        traced = callable(getattr(tool, "trace_line", None))
        add(tool, "custom", "traced" if traced else "self_rendered", "a custom tool")
    return table, deferrable, builtins


def _builtin_owner(name: str) -> str:
    if name.startswith("ask_human_"):
        return "human_in_the_loop"
    if name.startswith("memory_"):
        return "memory"
    return "knowledge"


def _builtin_tools(options: RunOptions) -> list[Tool]:
    tools: list[Tool] = []
    if options.human_in_the_loop:
        tools.extend(ask_human_tools(options.prompter))
    if options.memory is not None:
        tools.extend(memory_tools(options.memory.store))
    if options.knowledge is not None:
        tools.append(
            KnowledgeSearchTool(options.knowledge.searcher, max_injected_tokens=options.knowledge.max_injected_tokens)
        )
    return tools


def _advise_gate(options: RunOptions, entries: dict[str, Entry]) -> None:
    events = options.events
    can_prompt = options.prompter.can_prompt()
    if options.human_in_the_loop and not can_prompt:
        events.warn(
            Advisory(
                kind="hitl_no_terminal",
                message="human_in_the_loop is enabled but no interactive terminal is attached; its tools will "
                "decline rather than prompt",
            )
        )
    gated = {name: e.tool.tags for name, e in entries.items() if e.gate_tag is not None}
    if gated and not can_prompt:
        message = no_terminal_warning(gated, options.approvals)
        events.warn(Advisory(kind="confirm_no_terminal", count=len(gated), message=message))
    app_tags = {tag for e in entries.values() if e.kind == "application" for tag in e.tool.tags}
    for tag in dict.fromkeys(options.confirm_tags):
        if tag not in app_tags:
            events.warn(
                Advisory(
                    kind="confirm_tag_unmatched",
                    name=tag,
                    message=f'confirm_tags entry "{tag}" matches no loaded tool; check the tag spelling (run '
                    "'fiskai info' to list tags)",
                )
            )


def _provider(options: RunOptions) -> tuple[Provider, bool]:
    if options.provider is not None:
        return options.provider, False
    llm = options.llm
    spec = provider_spec(llm.provider)
    base_url = options.base_url
    if base_url is None and spec.base_url_env:
        # Read here, not left to the SDK, so an environment base URL is validated like a flag.
        base_url = os.environ.get(spec.base_url_env) or None
    if base_url is not None:
        validate_base_url(base_url)
    settings = ProviderSettings(
        model=llm.model,
        api_key=options.api_key,
        base_url=base_url,
        call_timeout=llm.budget.call_timeout.total_seconds(),
        observer=options.http_observer,
        overrides=_overrides(options),
    )
    return create_provider(llm.provider, settings), True


def _overrides(options: RunOptions) -> CapabilityOverrides | None:
    """`RunOptions.capabilities`, else `llm.capabilities` from agent.yaml."""
    return options.capabilities or overrides_from_settings(options.llm.capabilities)


def _tool_defs(
    options: RunOptions, deferrable: Sequence[Entry], builtins: Sequence[Entry], caps: Capabilities
) -> tuple[tuple[ToolDef, ...], bool]:
    plan = plan_deferral(
        [e.tool for e in deferrable],
        builtin_count=len(builtins),
        provider_supports_search=caps.tool_search,
        no_tool_search=options.llm.no_tool_search,
    )
    if plan.advisory is not None:
        kind = "tool_search_disabled" if options.llm.no_tool_search else "tool_search_unsupported"
        options.events.warn(Advisory(kind=kind, count=plan.total, message=plan.advisory))
    defs = [tool_def(e, defer=plan.deferred.get(e.tool.name, False)) for e in deferrable]
    defs.extend(tool_def(e, defer=False) for e in builtins)
    return tuple(defs), plan.add_search_tool


def _deferral(
    options: RunOptions,
    entries: dict[str, Entry],
    deferrable: Sequence[Entry],
    builtins: Sequence[Entry],
    caps: Capabilities,
) -> tuple[tuple[ToolDef, ...], bool, tuple[ToolDef, ...], FinderMode | None]:
    """(base tool list, server tool search, what the fingerprint hashes, the client-side finder or None)."""
    finder = None if caps.tool_search or options.llm.no_tool_search else finder_mode(deferrable, builtins)
    if finder is None:
        tool_defs, tool_search = _tool_defs(options, deferrable, builtins, caps)
        return tool_defs, tool_search, tool_defs, None
    entries[FIND_TOOLS] = finder.entry
    return finder.base, False, finder.hashed, finder


def _system_blocks(options: RunOptions) -> list[str]:
    blocks: list[str] = []
    if options.system_prompt:
        blocks.append(options.system_prompt)
    if options.human_in_the_loop:
        blocks.append(HITL_SYSTEM_NOTE)
    if options.memory is not None:
        blocks.append(MEMORY_SYSTEM_NOTE)
    if options.knowledge is not None:
        blocks.append(KNOWLEDGE_SYSTEM_NOTE)
    return blocks


# Setup is one ordered recipe (reference 6.1); splitting it further would scatter that order.
async def prepare(options: RunOptions) -> Setup:
    """Run setup; on failure nothing needs closing except what the exception path closes itself.

    Raises:
        SetupError: The run cannot start.
        ResumeRefusedError: The session cannot be resumed.
        JournalError: The session store failed.
    """
    llm = options.llm
    if not llm.model:
        raise SetupError(f'llm.model is required: name the model in "{options.config_file}"')
    if options.base_url is not None:
        validate_base_url(options.base_url)
    session = options.session
    if session is not None and session.resume_id and session.checkpoint:
        raise SetupError("--resume cannot be combined with --checkpoint")
    gate = ConfirmGate(options.prompter, confirm_tags=options.confirm_tags, approvals=options.approvals)
    entries, deferrable, builtins = _entries(options, gate)
    if not entries:
        if not options.has_application:
            raise SetupError(
                "no tools available: this agent wraps no application (application_path unset) and enables no "
                "built-in or remote tools; set application_path, or enable harness.knowledge, harness.memory, "
                f'human_in_the_loop, or remote_tools in "{options.config_file}"'
            )
        raise SetupError(f'no tools available after filtering; check include/exclude in "{options.config_file}"')
    _advise_gate(options, entries)
    if options.knowledge is not None and options.knowledge.searcher is None:
        where = options.knowledge.index_path or "the configured knowledge directory"
        options.events.warn(
            Advisory(
                kind="knowledge_index_absent",
                message=f'knowledge is enabled but no index exists at "{where}"; build it with \'fiskai knowledge '
                "index' (with a matching --store-dir), or knowledge_search will return nothing",
            )
        )

    provider, owns = _provider(options)
    setup: Setup | None = None
    try:
        # An injected provider reports its own capabilities; the operator's forced settings still apply.
        caps = provider.capabilities.restricted(_overrides(options))
        if caps.reason:
            options.events.warn(Advisory(kind="capabilities_reduced", message=caps.reason))
        tool_defs, tool_search, hashed, finder = _deferral(options, entries, deferrable, builtins, caps)
        thinking = llm.thinking.enabled and caps.thinking
        budget = Budget.from_settings(llm.budget, thinking=thinking)
        system = _system_blocks(options)
        if finder is not None:
            system.append(finder.tool.system_note)
        fingerprint = Fingerprint(
            provider=caps.provider,
            model=llm.model,
            system_hash=sha256_json(system),
            tools_hash=sha256_json(tools_hash_input(hashed)),
            thinking_mode="summarized" if thinking else "off",
            max_tokens=budget.max_tokens,
            max_iterations=budget.max_iterations,
        )
        setup = Setup(
            options=options,
            entries=entries,
            tool_defs=tool_defs,
            tool_search=tool_search,
            gate=gate,
            provider=provider,
            owns_provider=owns,
            capabilities=caps,
            budget=budget,
            thinking=thinking,
            system=system,
            journal=RunJournal(None, run_id=f"ephemeral-{new_run_id()}", last_seq=0),
            messages=[],
            stats=RunStats(model=llm.model),
            finder=finder,
            deferrable=deferrable,
            builtins=builtins,
        )
        resume_info = await _journal(setup, fingerprint)
        if finder is not None:
            finder.deferred.restore(found_answers(setup.messages))
            _advise_finder(options, finder, len(entries) - 1)
        await _memory_index(setup)
    except BaseException:
        with anyio.CancelScope(shield=True):
            if setup is not None:
                await setup.journal.aclose()
            if owns:
                await provider.aclose()
        raise

    options.events.starting(
        RunInfo(
            model=llm.model,
            provider=caps.provider,
            app_tools=sum(1 for e in entries.values() if e.kind == "application"),
            total_tools=len(entries) - (finder is not None),
            deferred_tools=len(finder.deferred_defs)
            if finder is not None
            else sum(1 for d in tool_defs if d.defer_loading),
            thinking=thinking,
            tool_search=tool_search,
            prompt_cache=caps.prompt_cache and not llm.no_prompt_cache,
            capabilities_note=caps.reason,
            tool_finder=finder is not None,
            capabilities=caps.why(),
            confirm_tools=sum(1 for e in entries.values() if e.gate_tag is not None),
            confirm_tags=tuple(dict.fromkeys(options.confirm_tags)),
            session_id=setup.session_id,
            resumed=resume_info is not None,
            new_session=setup.session_id is not None and resume_info is None,
            no_application=not options.has_application,
        )
    )
    if resume_info is not None:
        options.events.resumed(resume_info)
        if setup.pending is None and setup.last_stop_reason == "pause_turn":
            options.events.warn(
                Advisory(
                    kind="resume_paused_turn",
                    message="this session was suspended at a paused turn; if its server-side tool state has expired "
                    "the resume may error",
                )
            )
    return setup


def _advise_finder(options: RunOptions, finder: FinderMode, total: int) -> None:
    hidden = len(finder.deferred_defs)
    options.events.warn(
        Advisory(
            kind="tool_finder",
            count=hidden,
            message=f"{total} tools are available and the model server has no tool search, so {hidden} are "
            f"deferred behind the client-side find_tools tool: each request carries {_count(len(finder.base), 'tool')} "
            "plus those the model has found",
        )
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def fall_back(setup: Setup, capability: str, detail: str) -> None:
    """Drop server-side tool search, caching and thinking for the rest of the run (a server refused one).

    Deferred tools move behind `find_tools` (the loaded set rebuilt from the conversation so far); when
    a tool already has that name, or the operator set `llm.no_tool_search`, every tool is sent directly.
    """
    options = setup.options
    setup.fell_back = True
    shown = {"tool_search": "server-side tool search", "prompt_cache": "prompt caching", "thinking": "thinking"}
    why = f"the model server refused {shown.get(capability, capability)} ({detail})"
    had_search = setup.capabilities.tool_search
    setup.capabilities = setup.capabilities.without_server_features(why)
    setup.thinking = False
    note = "continuing without server-side tool search, prompt caching and thinking"
    if had_search and setup.finder is None:
        finder = None
        if not options.llm.no_tool_search and FIND_TOOLS not in setup.entries:
            finder = finder_mode(setup.deferrable, setup.builtins)
        if finder is not None:
            setup.finder = finder
            setup.entries[FIND_TOOLS] = finder.entry
            setup.system.append(finder.tool.system_note)
            finder.deferred.restore(found_answers(setup.messages))
            note += f"; {len(finder.deferred_defs)} deferred tools are reached through the client-side find_tools tool"
        else:
            setup.tool_defs = tuple(tool_def(e, defer=False) for e in (*setup.deferrable, *setup.builtins))
            note += "; every tool is sent directly"
        setup.tool_search = False
    options.events.warn(Advisory(kind="capabilities_fallback", name=capability, message=f"{why}; {note}"))


async def _journal(setup: Setup, fingerprint: Fingerprint) -> ResumeInfo | None:
    options = setup.options
    session = options.session
    prompt = options.prompt.strip() or DEFAULT_PROMPT
    if session is None or not (session.checkpoint or session.resume_id):
        setup.messages = [Message(role="user", content=(_text(prompt),))]
        return None
    if session.resume_id:
        return await _resume(setup, fingerprint, session.resume_id)
    run_id = session.name or new_run_id()
    meta = MetaRecord(
        run_id=run_id,
        created=datetime.now(UTC).isoformat(),
        fingerprint=fingerprint,
        prompt=prompt,
        interactive=options.interactive,
    )
    journal = await session.store.create(meta)
    setup.journal = RunJournal(journal, run_id=run_id, last_seq=journal.last_seq)
    setup.session_id = run_id
    setup.stats.session_id = run_id
    setup.messages = [Message(role="user", content=(_text(prompt),))]
    return None


def _text(text: str) -> TextBlock:
    return TextBlock(text=text)


async def _resume(setup: Setup, fingerprint: Fingerprint, run_id: str) -> ResumeInfo:
    options = setup.options
    session = options.session
    assert session is not None
    try:
        state = fold(await session.store.load(run_id))
    except JournalNotFoundError:
        raise ResumeRefusedError(f'run not found: "{run_id}"; list sessions with: fiskai session ls') from None
    if state.completed:
        raise ResumeRefusedError(f'session "{run_id}" has already completed and cannot be resumed')
    if state.interactive and not options.interactive:
        raise ResumeRefusedError(f'session "{run_id}" is an interactive chat session; resume it with the chat UI')
    if options.interactive and not state.interactive:
        raise ResumeRefusedError(f'session "{run_id}" was not started as a chat session and cannot be resumed as one')
    try:
        changes = check_resume(state.fingerprint, fingerprint, run_id=run_id, force=session.force)
    except ResumeError as err:
        raise ResumeRefusedError(str(err)) from None
    journal = await session.store.open(run_id)
    try:
        messages = [message_from_json(m) for m in state.messages]
    except ValueError as err:
        await journal.aclose()
        raise ResumeRefusedError(f'session "{run_id}" holds a message this version cannot read: {err}') from None
    setup.journal = RunJournal(journal, run_id=run_id, last_seq=journal.last_seq)
    setup.session_id = run_id
    setup.messages = messages
    setup.start_iteration = state.next_iteration
    setup.pending = state.pending
    setup.intents = {intent.tool_use_id: intent for intent in state.intents_without_results}
    setup.system.append(RESUME_REMINDER)
    _seed_knowledge(setup, state)
    _seed_stats(setup.stats, state, run_id)
    setup.last_stop_reason = state.last_stop_reason
    pending_calls = len(state.pending.unanswered) if state.pending is not None else 0
    return ResumeInfo(
        run_id=run_id,
        messages=tuple(messages),
        next_iteration=state.next_iteration,
        pending_calls=pending_calls,
        forced_changes=tuple(change.describe() for change in changes),
    )


def _seed_knowledge(setup: Setup, state: RunState) -> None:
    """Give knowledge_search the citations this session already delivered, so it does not repeat them."""
    knowledge = setup.options.knowledge
    entry = setup.entries.get(KNOWLEDGE_SEARCH)
    if knowledge is None or entry is None:
        return
    results = [result for message in state.messages for result in _tool_results(message)]
    if state.pending is not None:
        results.extend(record.result for record in state.pending.results)
    delivered = delivered_citations(results)
    if delivered:
        tool = KnowledgeSearchTool(
            knowledge.searcher, max_injected_tokens=knowledge.max_injected_tokens, delivered=delivered
        )
        setup.entries[KNOWLEDGE_SEARCH] = replace(entry, tool=tool)


def _tool_results(message: JsonObject) -> list[JsonObject]:
    content = message.get("content")
    blocks = cast("list[object]", content) if isinstance(content, list) else []
    found: list[JsonObject] = []
    for block in blocks:
        inner = cast("JsonObject", block).get("tool_result") if isinstance(block, dict) else None
        if isinstance(inner, dict):
            found.append(inner)
    return found


def _seed_stats(stats: RunStats, state: RunState, run_id: str) -> None:
    counters = state.counters
    stats.session_id = run_id
    stats.llm_calls = counters.llm_calls
    stats.tool_calls = counters.tool_calls
    stats.remote_tool_calls = counters.remote_tool_calls
    stats.input_tokens = counters.in_tokens
    stats.output_tokens = counters.out_tokens
    stats.cache_read_tokens = counters.cache_read_tokens
    stats.cache_create_tokens = counters.cache_create_tokens


async def _memory_index(setup: Setup) -> None:
    memory = setup.options.memory
    if memory is None:
        return
    try:
        index = await build_memory_index(memory.store, no_index=memory.no_index)
    except MemoryStoreError as err:
        setup.options.events.warn(
            Advisory(kind="memory_index", message=f"could not list memory for the start-of-run index: {err}")
        )
        return
    if index is not None:
        setup.system.append(index)
