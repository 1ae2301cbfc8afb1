"""One-time setup before the loop, in the reference order (6.1); each failure stops before any model call.

The tool table (from the caller's tool set, each tool's gating tag from the caller's gate) and its
advisories, the provider and its capabilities, tool-search deferral, the system blocks, the fingerprint,
then the journal (`fiskai_agent._resume`): a new checkpoint, a resume (load, fold, guard), or nothing.

Deferral takes one of three forms: server-side tool search (deferred tools marked, the search tool
added); the client-side `find_tools` finder when the server has no tool search (`_tool_finder`); or,
when the operator set `llm.no_tool_search`, every tool sent directly as the original does.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import anyio

from fiskai_agent._budget import Budget
from fiskai_agent._journal import RunJournal, new_run_id
from fiskai_agent._options import RunOptions, RunStats
from fiskai_agent._prepared import Setup
from fiskai_agent._resume import open_journal
from fiskai_agent._server_check import checked_capabilities
from fiskai_agent._tool_finder import FinderMode, finder_mode, found_answers
from fiskai_agent._tools import Entry, entry_of, tool_def, tools_hash_input
from fiskai_agent.errors import SetupError
from fiskai_agent.events import Advisory, RunInfo
from fiskai_agent.llm import (
    Capabilities,
    CapabilityOverrides,
    Provider,
    ProviderSettings,
    ToolDef,
    create_provider,
    overrides_from_settings,
    provider_spec,
)
from fiskai_core.approvals import no_terminal_warning
from fiskai_core.builtins import FIND_TOOLS
from fiskai_core.confirm import ConfirmGate
from fiskai_core.tools import plan_deferral
from fiskai_runstate import Fingerprint, sha256_json
from fiskai_runstate.go_hash import GoToolDef, go_system_hash, go_tools_hash

__all__ = ["Setup", "fall_back", "prepare"]


def _entries(options: RunOptions, gate: ConfirmGate) -> tuple[dict[str, Entry], list[Entry], list[Entry]]:
    """The tool table; returns (by name, deferrable in order, built-ins in order)."""
    table: dict[str, Entry] = {}
    deferrable: list[Entry] = []
    builtins: list[Entry] = []
    for item in options.tools:
        entry = entry_of(item, gate.trigger_tag(item.tool.tags))
        table[item.tool.name] = entry
        (deferrable if entry.deferrable else builtins).append(entry)
    return table, deferrable, builtins


def _advise_gate(options: RunOptions, gate: ConfirmGate, entries: dict[str, Entry]) -> None:
    events = options.events
    can_prompt = gate.prompter.can_prompt()
    if not can_prompt and any(e.presentation == "self_rendered" for e in entries.values()):
        events.warn(
            Advisory(
                kind="hitl_no_terminal",
                message="human_in_the_loop is enabled but no interactive terminal is attached; its tools will "
                "decline rather than prompt",
            )
        )
    gated = {name: e.tool.tags for name, e in entries.items() if e.gate_tag is not None}
    if gated and not can_prompt:
        message = no_terminal_warning(gated, gate.approvals)
        events.warn(Advisory(kind="confirm_no_terminal", count=len(gated), message=message))
    app_tags = {tag for e in entries.values() if e.kind == "application" for tag in e.tool.tags}
    for tag in gate.confirm_tags:
        if tag not in app_tags:
            events.warn(
                Advisory(
                    kind="confirm_tag_unmatched",
                    name=tag,
                    message=f'confirm_tags entry "{tag}" matches no loaded tool; check the tag spelling (run '
                    "'fiskai info' to list tags)",
                )
            )


def _provider(options: RunOptions) -> tuple[Provider, bool, str | None]:
    """(the provider, whether the run owns it, the base URL it was built for when the run built it)."""
    given = options.provider
    if given is not None and not isinstance(given, ProviderSettings):
        return given, False, None
    llm = options.llm
    settings = given or ProviderSettings(model=llm.model, call_timeout=llm.budget.call_timeout.total_seconds())
    if settings.overrides is None:
        settings = ProviderSettings(
            model=settings.model,
            api_key=settings.api_key,
            base_url=settings.base_url,
            call_timeout=settings.call_timeout,
            max_retries=settings.max_retries,
            observer=settings.observer,
            overrides=_overrides(options),
            stream=settings.stream,
        )
    provider = create_provider(llm.provider, settings)
    env = provider_spec(llm.provider).base_url_env
    return provider, True, settings.base_url or (os.environ.get(env) if env else None) or None


def _overrides(options: RunOptions) -> CapabilityOverrides | None:
    """The forced capabilities of the provider settings, else `llm.capabilities` from agent.yaml."""
    given = options.provider
    if isinstance(given, ProviderSettings) and given.overrides is not None:
        return given.overrides
    return overrides_from_settings(options.llm.capabilities)


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
    finder = (
        None
        if caps.tool_search or options.llm.no_tool_search
        else finder_mode(deferrable, builtins, budget=options.llm.tool_definition_budget)
    )
    if finder is None:
        tool_defs, tool_search = _tool_defs(options, deferrable, builtins, caps)
        return tool_defs, tool_search, tool_defs, None
    entries[FIND_TOOLS] = finder.entry
    return finder.base, False, finder.hashed, finder


def _system_blocks(options: RunOptions) -> list[str]:
    blocks: list[str] = []
    if options.system_prompt:
        blocks.append(options.system_prompt)
    blocks.extend(options.tools.notes)
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
    session = options.session
    if session is not None and session.resume_id and session.checkpoint:
        raise SetupError("--resume cannot be combined with --checkpoint")
    gate = options.gate
    entries, deferrable, builtins = _entries(options, gate)
    if not entries:
        if not options.tools.has_application:
            raise SetupError(
                "no tools available: this agent wraps no application (application_path unset) and enables no "
                "built-in or remote tools; set application_path, or enable harness.knowledge, harness.memory, "
                f'human_in_the_loop, or remote_tools in "{options.config_file}"'
            )
        raise SetupError(f'no tools available after filtering; check include/exclude in "{options.config_file}"')
    for notice in options.notices:
        options.events.warn(notice)
    _advise_gate(options, gate, entries)

    provider, owns, base_url = _provider(options)
    setup: Setup | None = None
    try:
        # An injected provider reports its own capabilities; the operator's forced settings still apply.
        caps = await checked_capabilities(provider.capabilities.restricted(_overrides(options)), base_url)
        if caps.reason:
            options.events.warn(Advisory(kind="capabilities_reduced", message=caps.reason))
        if llm.reasoning_effort and not caps.thinking:
            options.events.warn(
                Advisory(
                    kind="reasoning_effort_dropped",
                    message=f'llm.reasoning_effort "{llm.reasoning_effort}" is not sent: this model server does not '
                    "take thinking or effort (llm.capabilities.thinking: on forces it)",
                )
            )
        tool_defs, tool_search, hashed, finder = _deferral(options, entries, deferrable, builtins, caps)
        thinking = llm.thinking.enabled and caps.thinking
        budget = Budget.from_settings(llm.budget, thinking=thinking)
        system = _system_blocks(options)
        if finder is not None:
            system.append(finder.tool.system_note)
        # The Go agent's hashes (issue 31), so sessions resume across the two implementations; `legacy`
        # is what fiskai wrote before, still accepted on resume.
        fingerprint = Fingerprint(
            provider=caps.provider,
            model=llm.model,
            system_hash=go_system_hash(system),
            tools_hash=go_tools_hash(
                [GoToolDef(d.name, d.description, d.input_schema, d.defer_loading) for d in hashed]
            ),
            thinking_mode="summarized" if thinking else "off",
            reasoning_effort=llm.reasoning_effort,
            max_tokens=budget.max_tokens,
            max_iterations=budget.max_iterations,
        )
        legacy = dataclasses.replace(
            fingerprint, system_hash=sha256_json(system), tools_hash=sha256_json(tools_hash_input(hashed))
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
        resume_info = await open_journal(setup, fingerprint, legacy=legacy)
        stats = setup.stats
        stats.first_session_id = setup.session_id
        stats.thinking, stats.tool_search = thinking, tool_search
        stats.prompt_cache = caps.prompt_cache and not llm.no_prompt_cache
        if finder is not None:
            finder.deferred.restore(found_answers(setup.messages))
            _advise_finder(options, finder, len(entries) - 1)
        # The state of the world as the run starts; it changes between runs, so it is not fingerprinted.
        setup.system.extend(options.start_context)
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
            confirm_tags=gate.confirm_tags,
            session_id=setup.session_id,
            resumed=resume_info is not None,
            new_session=setup.session_id is not None and resume_info is None,
            no_application=not options.tools.has_application,
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
            message=f"{total} tools are available, their definitions take about {finder.tokens:,} tokens (over "
            f"llm.tool_definition_budget, {finder.budget:,}) and the model server has no tool search, so {hidden} are "
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
            finder = finder_mode(setup.deferrable, setup.builtins, budget=options.llm.tool_definition_budget)
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
