"""The harness: everything a command needs, built once from the typed settings and the command's face.

`open_harness(settings, face, ...)` gives a `Harness`: the tool set that face offers (the application's
selected commands, peers' tools, the built-ins the configuration enables), the confirm gate (who is
asked, which persisted rules apply), the stores (run journal, memory, knowledge index), the model
connection (credentials and base URL checked once) and one NATS connection from `nats_context`, lent to
every NATS-backed part. Commands are adapters over it: `run` hands the tool set and the gate to the
agent, `mcp` and `a2a` serve the tool set, `tools call` calls through it.

Where a new part plugs in: a tool source is one more group in `_tool_set` (beside the fisk
application); a driver is one more `Face` and a short command module that takes a `Harness`.

Faces and what they get:

| face  | tools                                            | gate                    | stores / NATS            |
| ----- | ------------------------------------------------ | ----------------------- | ------------------------ |
| run   | application, remote, ask_human, memory, knowledge, mcp_clients | operator + saved rules | journal*, memory, index |
| mcp   | application by expose.agent.tools, knowledge*    | the server's own        | index*                   |
| a2a   | application by expose.agent.tools                | none (gated: not served) | NATS                     |
| tools | application, mcp_clients                         | operator + saved rules  |                          |
| serve | as run (channel runs); `served`: as a2a          | per work (else deny)    | journal, memory, NATS (once) |

Import-light: this module is imported by commands that only describe (`info`), so the configuration
loader, the stores and the tool machinery load inside the functions that need them.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import click

from fiskai_cli._application import application_tools, exposed_builtins, exposed_tools, load_application
from fiskai_cli._nats import NatsTarget, nats_target, open_nats
from fiskai_cli._retrieval import knowledge_tool_options, knowledge_tools, open_knowledge_reader
from fiskai_cli._settings import (
    DEFAULT_CONFIG,
    Invocation,
    Settings,
    approvals_file,
    invocation,
    load_settings,
    remedy_text,
    reported,
    resolve_under,
    state_home,
    tool_time_limit,
)
from fiskai_cli._sources import load_tool_sources
from fiskai_cli._stores import (
    journal_backend,
    knowledge_directory,
    knowledge_embedder,
    knowledge_paths,
    manifest_embedder,
    memory_backend,
    open_journal_store,
    open_knowledge_store,
    open_memory_store,
)

if TYPE_CHECKING:
    from fiskai_a2a.nats_transport import NatsTransport
    from fiskai_core.confirm import ConfirmGate
    from fiskai_core.exec.running import CommandTool
    from fiskai_core.prompter import Prompter
    from fiskai_core.tools import Tool, ToolSet
    from fiskai_mcp.client import McpClients
    from fiskai_memory import Store as MemoryStore
    from fiskai_rag import Store as KnowledgeStore
    from fiskai_runstate import Store as JournalStore

__all__ = [
    "DEFAULT_CONFIG",
    "Face",
    "Harness",
    "Invocation",
    "ModelConnection",
    "NatsTarget",
    "Settings",
    "application_tools",
    "approvals_file",
    "invocation",
    "journal_store",
    "knowledge_directory",
    "knowledge_embedder",
    "knowledge_paths",
    "load_application",
    "load_settings",
    "load_tool_sources",
    "manifest_embedder",
    "memory_store",
    "model_connection",
    "nats_target",
    "open_harness",
    "open_journal_store",
    "open_knowledge_store",
    "open_memory_store",
    "open_nats",
    "operator_prompter",
    "remedy_text",
    "reported",
    "resolve_under",
    "state_home",
    "tool_time_limit",
]

Face = Literal["run", "mcp", "a2a", "tools", "serve"]
"""Which command the harness is built for; it decides the tool set, the gate and the stores."""


@dataclass(frozen=True, slots=True)
class ModelConnection:
    """How to reach the model: the API key and the base URL, resolved and checked once."""

    api_key: str | None
    base_url: str | None


@dataclass(slots=True, kw_only=True)
class Harness:
    """What one command runs with; built by `open_harness`, closed with it."""

    settings: Settings
    face: Face
    tools: ToolSet
    gate: ConfirmGate
    journal: JournalStore | None = None
    memory: MemoryStore | None = None
    knowledge: KnowledgeStore | None = None
    knowledge_directory: str = ""
    nats: NatsTransport | None = None
    """The command's NATS connection, once opened (`connected`)."""
    served: ToolSet | None = None
    """serve: what the tool endpoint serves (the a2a face's set), apart from what channel runs reach."""
    start_context: list[str] = field(default_factory=list[str])
    """System blocks describing the world as a run starts (the memory index)."""
    notices: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """`(kind, message)` the operator should see as the run starts."""
    mcp: McpClients | None = None
    """The connected `mcp_clients` servers (run, tools, serve's channel runs), closed with the harness."""
    tool_updates: Any = None
    """The part of `tools` that `watch_tools` servers may change during a run (`fiskai_agent.ToolUpdates`)."""

    _stack: AsyncExitStack | None = None
    _target: NatsTarget | None = None

    @property
    def config(self) -> Any:
        """The typed agent.yaml (`fiskai_core.config.Config`)."""
        return self.settings.config

    async def connected(self, needed_for: str = "") -> NatsTransport:
        """The NATS connection, opened on first use and closed with the harness.

        Raises:
            click.ClickException: nothing names a connection, or the server cannot be reached.
        """
        if self.nats is None:
            assert self._stack is not None, "a harness from open_harness"
            what = needed_for or f"fiskai {self.face}"
            context = nats_target(self._target or NatsTarget(), self.settings.config, needed_for=what)
            self.nats = await self._stack.enter_async_context(
                open_nats(context, name=f"fiskai {self.settings.config.identity}")
            )
        return self.nats


def operator_prompter() -> Prompter:
    """Who approves gated calls: the operator on this terminal, or, with no terminal on stdin, nobody (deny)."""
    if sys.stdin is not None and sys.stdin.isatty():
        from fiskai_cli.ui.prompter import LinePrompter

        return LinePrompter()
    from fiskai_core.prompter import DenyPrompter

    return DenyPrompter()


def model_connection(settings: Settings, flag_url: str | None, *, api_key: str | None = None) -> ModelConnection:
    """The API key and the base URL, checked.

    The key: `api_key` (from `--api-key-file`), else the provider's variable. The URL: `--base-url`, else
    `llm.base_url`, else the provider's variable.

    Raises:
        click.ClickException: neither is set (the message says exactly what to set), or the URL is unusable.
    """
    import os

    from fiskai_agent.llm import provider_spec, validate_base_url
    from fiskai_core.errors import FiskaiError

    config = settings.config
    try:
        spec = provider_spec(config.llm.provider)
    except FiskaiError as err:
        raise click.ClickException(str(err)) from err
    key_env = spec.key_env or "ANTHROPIC_API_KEY"
    url_env = spec.base_url_env or "ANTHROPIC_BASE_URL"
    if flag_url:
        url, label = flag_url, "--base-url"
    elif config.llm.base_url:
        url, label = config.llm.base_url, "llm.base_url"
    else:
        url, label = os.environ.get(url_env, ""), url_env
    api_key = api_key or os.environ.get(key_env) or None
    if not url and api_key is None:
        raise click.ClickException(
            f"no model to talk to: set {key_env} to use Anthropic's API, or point fiskai at an "
            f"Anthropic-compatible server with llm.base_url in agent.yaml, {url_env} or --base-url "
            f"(a local one such as Ollama: {url_env}=http://localhost:11434 and llm.model set to a model it "
            "serves). 'fiskai info' and 'fiskai tools call' work without either"
        )
    if not url:
        return ModelConnection(api_key=api_key, base_url=None)
    try:
        validate_base_url(url, label=label)
    except FiskaiError as err:
        raise click.ClickException(str(err)) from err
    return ModelConnection(api_key=api_key, base_url=url)


def _gate(settings: Settings, prompter: Prompter | None, *, approvals: bool) -> ConfirmGate:
    from fiskai_core.confirm import ConfirmGate
    from fiskai_core.prompter import DenyPrompter

    rules = None
    if approvals:
        from fiskai_core.approvals import Approvals

        identity = settings.config.identity
        with reported():
            rules = Approvals.from_file(approvals_file(identity), identity=identity)
    return ConfirmGate(prompter or DenyPrompter(), confirm_tags=settings.config.harness.confirm_tags, approvals=rules)


def _needs_nats(settings: Settings, face: Face, *, checkpointing: bool) -> str:
    """What of this command needs NATS (for the error when no connection is named), or "" for nothing."""
    config = settings.config
    harness = config.harness
    if face == "a2a":
        return f"fiskai {face}"
    if face == "serve":
        a2a = config.expose.agent.a2a
        if a2a.prompts is not None or a2a.serve_tools:
            return "fiskai serve"
        # A web-only worker needs NATS only for what its runs use (below).
    elif face != "run":
        return ""
    if config.remote_tools:
        return "remote_tools"
    if checkpointing and journal_backend(harness.sessions) == "jetstream":
        return "the jetstream session backend"
    if harness.memory.enabled and memory_backend(harness.memory) == "jetstream":
        return "the jetstream memory backend"
    return ""


@asynccontextmanager
async def open_harness(
    settings: Settings,
    face: Face,
    *,
    prompter: Prompter | None = None,
    checkpointing: bool = False,
    state_dir: Any = None,
    nats: NatsTarget | None = None,
) -> AsyncGenerator[Harness]:
    """Build the harness for `face`; everything it opened is closed when the block ends.

    Args:
        settings: The loaded configuration.
        face: The command it is for.
        prompter: Who approves gated calls (run, tools) and answers ask_human; nobody (deny) when None.
        checkpointing: The run journals (`--checkpoint`/`--resume`): open the journal store.
        state_dir: `--state-dir`, the file journal's directory.
        nats: `--server`/`--context`, winning over `nats_context`.

    Raises:
        click.ClickException: anything an operator can fix, in one line.
    """
    from fiskai_core.tools import ToolEntry, ToolSet

    config = settings.config
    async with AsyncExitStack() as stack:
        application = application_tools(settings)
        harness = Harness(
            settings=settings,
            face=face,
            tools=ToolSet.of(application, has_application=config.has_tool_source),
            gate=_gate(settings, prompter, approvals=face in ("run", "tools")),
            _stack=stack,
            _target=nats,
        )
        needs = _needs_nats(settings, face, checkpointing=checkpointing)
        if needs and face == "run":
            # A run's parts (journal, memory, remote tools) need the connection before it starts; a server
            # connects when it is ready to serve (`connected`), after its tools are known to be servable.
            await harness.connected(needs)
        if face in ("mcp", "a2a"):
            harness.tools = ToolSet.of(exposed_tools(settings, application), has_application=config.has_tool_source)
            if face == "mcp":
                await _mcp_knowledge(harness, stack)
                builtins = [ToolEntry(tool=tool, kind="builtin") for tool in exposed_builtins(settings)]
                harness.tools = harness.tools.with_entries(builtins)  # listed harness.tools, never over a2a
        elif face == "run":
            await _run_parts(harness, stack, application, prompter, checkpointing=checkpointing, state_dir=state_dir)
        elif face == "serve":
            harness.served = ToolSet.of(
                exposed_tools(settings, application), has_application=bool(config.application_path)
            )
            if checkpointing:  # channel runs: their stores (and the connection) before anything listens
                if needs:
                    await harness.connected(needs)
                await _run_parts(harness, stack, application, prompter, checkpointing=True, state_dir=state_dir)
        if config.mcp_client_entries and (face in ("run", "tools") or (face == "serve" and checkpointing)):
            # Never on the served sets (mcp, a2a, serve's tool endpoint): imported tools are not served again.
            from fiskai_cli._mcp_clients import attach_imported_tools

            await attach_imported_tools(harness, stack, prompter)
        yield harness


async def _run_parts(
    harness: Harness,
    stack: AsyncExitStack,
    application: list[CommandTool],
    prompter: Prompter | None,
    *,
    checkpointing: bool,
    state_dir: Any,
) -> None:
    """A run's journal, memory, knowledge, remote tools and built-ins."""
    from fiskai_core.builtins import CitationRewriter, KnowledgeAccess, agent_tool_set, harness_tools

    settings, config = harness.settings, harness.settings.config
    nc = harness.nats.client if harness.nats is not None else None
    if checkpointing:
        harness.journal = await open_journal_store(
            config.harness.sessions, folder=settings.folder, state_dir=state_dir, nats=nc
        )
    memory_access = None
    if config.harness.memory.enabled:
        from fiskai_memory import ToolAccess

        harness.memory, _where = await open_memory_store(
            config.harness.memory, identity=config.identity, folder=settings.folder, nats=nc
        )
        memory_access = ToolAccess(harness.memory)
        await _memory_index(harness, config.harness.memory.no_index)
    knowledge = None
    if config.harness.knowledge.enabled:
        _open_knowledge(harness, stack)
        knowledge = KnowledgeAccess(
            harness.knowledge,
            **knowledge_tool_options(config.harness.knowledge, harness.knowledge),
            citations=CitationRewriter(config.harness.knowledge.citations),
            read_tool=config.harness.knowledge.read_tool,
        )
        if harness.knowledge is None:
            harness.notices.append(
                (
                    "knowledge_index_absent",
                    f'knowledge is enabled but no index exists at "{harness.knowledge_directory}"; build it with '
                    "'fiskai knowledge index' (with a matching --store-dir), or knowledge_search will return nothing",
                )
            )
    remote = await _remote_tools(harness, [tool.name for tool in application])
    with reported():
        harness.tools = agent_tool_set(
            application=application,
            remote=remote,
            ask_human=(prompter or _deny()) if config.harness.human_in_the_loop.enabled else None,
            memory=memory_access,
            memory_read_only=config.harness.memory.read_only,
            knowledge=knowledge,
            harness=harness_tools(config.harness.tools, folder=settings.folder),
            has_application=config.has_tool_source,
        )


def _deny() -> Prompter:
    from fiskai_core.prompter import DenyPrompter

    return DenyPrompter()


async def _memory_index(harness: Harness, no_index: bool) -> None:
    from fiskai_core.telemetry import current
    from fiskai_memory import MemoryStoreError
    from fiskai_memory.index import format_memory_index

    assert harness.memory is not None
    backend = memory_backend(harness.settings.config.harness.memory)
    with current().span("memory_index", {"fisk.memory.backend": backend}) as span:
        if no_index:
            return  # `no_index`: the store is not touched, so there is no count
        try:
            # Listed here rather than through build_memory_index so the span can carry the count (reference 6.3).
            items = await harness.memory.list()
        except MemoryStoreError as err:
            span.error("memory_index")  # fisk.memory.entries stays absent: the listing failed
            harness.notices.append(("memory_index", f"could not list memory for the start-of-run index: {err}"))
            return
        span.set("fisk.memory.entries", len(items))
    harness.start_context.append(format_memory_index(items))


def _open_knowledge(harness: Harness, stack: AsyncExitStack) -> None:
    """The read-only knowledge index, when one is built (None otherwise; the directory is kept for messages)."""
    settings, config = harness.settings, harness.settings.config
    directory = knowledge_directory(config.harness.knowledge, identity=config.identity, folder=settings.folder)
    harness.knowledge_directory = str(directory)
    if (directory / "knowledge.db").exists():
        harness.knowledge = stack.enter_context(open_knowledge_reader(directory, config.harness.knowledge))


async def _mcp_knowledge(harness: Harness, stack: AsyncExitStack) -> None:
    """`knowledge_search` for MCP clients when `expose.agent.mcp.builtins` lists it."""
    from fiskai_core.builtins import KNOWLEDGE_SEARCH
    from fiskai_core.tools import ToolEntry

    config = harness.settings.config
    mcp = config.expose.agent.mcp
    if mcp is None or KNOWLEDGE_SEARCH not in mcp.builtins:
        return
    directory = knowledge_directory(config.harness.knowledge, identity=config.identity, folder=harness.settings.folder)
    harness.knowledge_directory = str(directory)
    try:
        harness.knowledge = stack.enter_context(open_knowledge_reader(directory, config.harness.knowledge))
    except click.ClickException as err:
        raise click.ClickException(f"cannot expose knowledge_search over MCP: {err.message}") from err
    tools = knowledge_tools(harness.knowledge, config.harness.knowledge)  # enumerate and read ride along
    with reported():
        harness.tools = harness.tools.with_entries([ToolEntry(tool=tool, kind="builtin") for tool in tools])


async def _remote_tools(harness: Harness, taken: list[str]) -> list[tuple[Tool, str]]:
    """Import the `remote_tools` hosts' tools over the harness's connection (strict: the prompt may need them)."""
    config = harness.settings.config
    if not config.remote_tools or harness.nats is None:
        return []
    from fiskai_a2a.client import A2AClient
    from fiskai_a2a.invoker import import_remote_tools
    from fiskai_a2a.nats_service import NatsStreams

    client = A2AClient(
        harness.nats,
        identity=config.identity,
        timeout=config.llm.budget.call_timeout.total_seconds(),
        # Peers old and new: a 0.0.5 server's ack and keepalives, or a pre-0.0.5 single reply.
        streams=NatsStreams(harness.nats),
        request_timeout=config.expose.agent.a2a.request_timeout.total_seconds(),
    )
    with reported():
        imported = await import_remote_tools(
            config.remote_tools, client=client, taken=taken, strict=True, context_name=harness.nats.context.name
        )
    for warning in imported.warnings:
        click.echo(f"warning: {warning}", err=True)
    return [(tool, tool.agent) for tool in imported.tools]


@asynccontextmanager
async def journal_store(settings: Settings | None, *, state_dir: Any = None) -> AsyncGenerator[JournalStore]:
    """The run journal store the configuration names (`fiskai session`); jetstream over its own connection."""
    sessions = settings.config.harness.sessions if settings is not None else None
    folder = settings.folder if settings is not None else None
    if settings is None or journal_backend(sessions) != "jetstream":
        yield await open_journal_store(sessions, folder=folder, state_dir=state_dir)
        return
    context = nats_target(NatsTarget(), settings.config, needed_for="the jetstream session backend")
    async with open_nats(context, name="fiskai session") as transport:
        yield await open_journal_store(sessions, folder=folder, state_dir=state_dir, nats=transport.client)


@asynccontextmanager
async def memory_store(
    settings: Settings | None, *, identity: str, nats: NatsTarget | None = None
) -> AsyncGenerator[tuple[MemoryStore, str]]:
    """The memory store the configuration names for `identity` (for `fiskai memory`), and where it is."""
    memory = settings.config.harness.memory if settings is not None else None
    folder = settings.folder if settings is not None else None
    if memory_backend(memory) != "jetstream":
        yield await open_memory_store(memory, identity=identity, folder=folder)
        return
    config = settings.config if settings is not None else None
    context = nats_target(nats or NatsTarget(), config, needed_for="the jetstream memory backend")
    async with open_nats(context, name="fiskai memory") as transport:
        yield await open_memory_store(
            memory, identity=identity, folder=folder, nats=transport.client, where=context.describe()
        )
