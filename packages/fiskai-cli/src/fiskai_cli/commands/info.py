"""`fiskai info`: what a model would get from a configuration, without contacting any model."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import click

from fiskai_cli._wiring import (
    Settings,
    knowledge_directory,
    knowledge_paths,
    load_application,
    load_settings,
    load_tool_sources,
    state_home,
)
from fiskai_cli.ui.text import clip, items, table
from fiskai_core.config import Config, Mode
from fiskai_core.fisk import Application
from fiskai_core.tools import (
    TOOL_SEARCH_THRESHOLD,
    DeferralPlan,
    definition_tokens,
    plan_client_deferral,
    plan_deferral,
    requires_confirmation,
)

if TYPE_CHECKING:
    from fiskai_agent.llm import Capabilities
    from fiskai_cli.commands.info_mcp import ImportedTools
    from fiskai_core.remote import RemoteTool
    from fiskai_core.sources import LoadedSource

    RemoteImporter = Callable[[Sequence[str]], tuple[Sequence[RemoteTool], Sequence[str]]]
    """Imports the remote_tools hosts' tools given the names already taken; returns them and warnings."""
    McpImporter = Callable[[Sequence[str]], ImportedTools]
    """Connects the mcp_clients servers (best effort) given the names already taken, and describes them."""

__all__ = ["info"]

_HITL_TOOLS = ("ask_human_confirm", "ask_human_select", "ask_human_input")
_MEMORY_TOOLS = ("memory_list", "memory_read", "memory_write", "memory_delete")
_KNOWLEDGE_TOOLS = ("knowledge_search",)


@click.command("info")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json` prints one object for scripts.",
)
@click.pass_context
def info(ctx: click.Context, output_format: str) -> None:
    """Show the tools, prompt and settings loaded from a configuration.

    Introspects the application (APP --fisk-introspect) and applies ai:deny, include, exclude and
    global_flags exactly as a run would, then lists each tool with its confirmation and deferral
    status. Never contacts a model and needs no API key; with a base URL that is not Anthropic's it asks
    the server's metadata endpoints which kind it is (llama.cpp, Ollama, vLLM), as a run does.

    \b
    Examples:
      fiskai -c agent.yaml info
      fiskai -c agent.yaml info --format json | jq '.tools[].name'
    """
    settings = load_settings(ctx, Mode.MCP, required=True)
    assert settings is not None  # required=True: a missing file is an error above
    application = load_application(settings)
    importer = None
    if settings.config.remote_tools:
        from fiskai_cli.commands.info_remote import remote_tools

        importer = partial(remote_tools, settings.config)
    mcp_importer = None
    if settings.config.mcp_client_entries:
        from fiskai_cli.commands.info_mcp import mcp_clients

        mcp_importer = partial(mcp_clients, settings)
    sources = load_tool_sources(settings)
    report = build_report(settings, application, import_remote=importer, import_mcp=mcp_importer, sources=sources)
    if output_format == "json":
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    for warning in report["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    click.echo(render_text(report))


def build_report(
    settings: Settings,
    application: Application | None,
    *,
    import_remote: RemoteImporter | None = None,
    import_mcp: McpImporter | None = None,
    sources: Sequence[LoadedSource] = (),
) -> dict[str, Any]:
    """Everything `info` shows, as one JSON-ready object.

    `import_remote` lists the remote_tools hosts' tools, `import_mcp` the mcp_clients servers', and
    `sources` are the loaded `tool_sources`.
    """
    config = settings.config
    harness = config.harness
    warnings: list[str] = []
    if application is None and (config.include.tools or config.include.tags or config.exclude.tools):
        warnings.append(
            "include/exclude have no effect without application_path; they filter the wrapped application's tools"
        )
    if application is not None:
        warnings.extend(application.warnings)
    app_tools = list(application.selected) if application is not None else []
    source_tools = [(loaded.label, spec) for loaded in sources for spec in loaded.source.selected]
    for loaded in sources:
        warnings.extend(f"{loaded.label}: {warning}" for warning in loaded.warnings)
    builtins = [
        *(_HITL_TOOLS if harness.human_in_the_loop.enabled else ()),
        *(_MEMORY_TOOLS if harness.memory.enabled else ()),
        *(_KNOWLEDGE_TOOLS if harness.knowledge.enabled else ()),
    ]
    remote, remote_warnings = (
        import_remote([*(tool.name for tool in app_tools), *(spec.name for _, spec in source_tools), *builtins])
        if import_remote
        else ((), ())
    )
    imported = (
        import_mcp(
            [
                *(tool.name for tool in app_tools),
                *(spec.name for _, spec in source_tools),
                *builtins,
                *(t.name for t in remote),
            ]
        )
        if import_mcp
        else None
    )
    mcp_tools = imported.tools if imported is not None else []
    capabilities, server = _capabilities(config, warnings)
    wrapped = [*app_tools, *(spec for _, spec in source_tools)]
    # As a run decides it: application and tool_sources tools, then remote and imported MCP tools (a peer's `ai:no_defer` tag included).
    plan: DeferralPlan
    if capabilities is not None and not capabilities.tool_search and not config.llm.no_tool_search:
        # Without server-side tool search a run defers them behind find_tools when they are too large.
        tokens = definition_tokens(
            [
                *((tool.name, tool.model_description, tool.input_schema) for tool in wrapped),
                *((tool.name, tool.description, tool.input_schema) for tool in [*remote, *mcp_tools]),
            ]
        )
        plan = plan_client_deferral(
            [*wrapped, *remote, *mcp_tools],
            tokens=tokens,
            budget=config.llm.tool_definition_budget,
            builtin_count=len(builtins),
        )
    else:
        plan = plan_deferral(
            [*wrapped, *remote, *mcp_tools],
            builtin_count=len(builtins),
            provider_supports_search=capabilities is not None,
            no_tool_search=config.llm.no_tool_search,
        )
    if plan.advisory:
        warnings.append(plan.advisory)
    tag_counts = dict.fromkeys(harness.confirm_tags, 0)
    tools: list[dict[str, Any]] = []
    for tool in app_tools:
        for tag in tool.tags:
            if tag in tag_counts:
                tag_counts[tag] += 1
        tools.append(
            {
                "name": tool.name,
                "source": "application",
                "command": tool.command,
                "confirm": requires_confirmation(tool.tags, harness.confirm_tags),
                "deferred": plan.deferred.get(tool.name, False),
                "description": tool.description,
                "tags": list(tool.tags),
                "schema": tool.schema_source,
            }
        )
    for label, spec in source_tools:
        for tag in spec.tags:
            if tag in tag_counts:
                tag_counts[tag] += 1
        tools.append(
            {
                "name": spec.name,
                "source": label,
                "command": spec.command,
                "confirm": requires_confirmation(spec.tags, harness.confirm_tags),
                "deferred": plan.deferred.get(spec.name, False),
                "description": spec.description,
                "tags": list(spec.tags),
            }
        )
    tools.extend(
        {"name": name, "source": "built-in", "confirm": False, "deferred": False, "description": "", "tags": []}
        for name in builtins
    )
    tools.extend(
        {
            "name": tool.name,
            "source": f"remote {tool.agent}",
            "confirm": False,
            "deferred": plan.deferred.get(tool.name, False),
            "description": tool.description,
            "tags": list(tool.tags),
        }
        for tool in remote
    )
    warnings.extend(
        f"confirm_tags entry {tag!r} matches no loaded tool; check the tag spelling"
        for tag, count in tag_counts.items()
        if (application is not None or sources) and count == 0
    )
    warnings.extend(remote_warnings)
    tools.extend(
        {
            "name": tool.name,
            "source": f"mcp {tool.alias}",
            "confirm": requires_confirmation(tool.tags),
            "deferred": plan.deferred.get(tool.name, False),
            "description": tool.description,
            "tags": [],
        }
        for tool in mcp_tools
    )
    if imported is not None:
        warnings.extend(imported.warnings)
    return {
        "config": str(settings.path),
        "identity": config.identity,
        "application": _application_report(application),
        "model": _model_report(config, capabilities, plan, len(tools), server),
        "tool_sources": [
            {
                "source": loaded.label,
                **loaded.details,
                "commands": loaded.commands,
                "denied": loaded.denied,
                "offered": len(loaded.source.selected),
            }
            for loaded in sources
        ],
        "tools": tools,
        "global_flags": _global_flags_report(application),
        "prompt": {"text": config.system_prompt, "lines": len(config.system_prompt.splitlines())},
        "sessions": {"backend": harness.sessions.backend, "options": harness.sessions.options},
        "state_home": str(state_home()),
        "memory": {"backend": harness.memory.backend, "index": not harness.memory.no_index}
        if harness.memory.enabled
        else None,
        "knowledge": {
            "directory": str(knowledge_directory(harness.knowledge, identity=config.identity, folder=settings.folder)),
            "paths": [str(path) for path in knowledge_paths(harness.knowledge, folder=settings.folder)],
            "vector": harness.knowledge.embeddings is not None,
        }
        if harness.knowledge.enabled
        else None,
        "mcp": config.expose.agent.mcp is not None,
        "mcp_clients": imported.servers if imported is not None else [],
        "warnings": warnings,
    }


def _application_report(application: Application | None) -> dict[str, Any] | None:
    if application is None:
        return None
    model = application.model
    schemas = {spec.schema_source for spec in application.commands}
    denied = sum(1 for spec in application.commands if "ai:deny" in spec.tags)
    return {
        "name": model.name,
        "version": model.version,
        "help": model.help,
        "path": application.path,
        "commands": len(application.commands),
        "denied": denied,
        "filtered": len(application.commands) - denied - len(application.selected),
        "schemas": "fisk" if schemas <= {"fisk"} else "derived",
    }


def _capabilities(config: Config, warnings: list[str]) -> tuple[Capabilities | None, str | None]:
    """What a run would use (as `fiskai run` decides it, without the SDK), and the recognised server.

    Capabilities are None for an unknown provider; the server is None without a non-Anthropic base URL.
    """
    llm = config.llm
    if not llm.model:
        return None, None
    # Imported here: only a configuration naming a model pays for the agent package.
    from fiskai_agent.errors import SetupError
    from fiskai_agent.llm import (
        anthropic_url,
        capabilities_for_server,
        overrides_from_settings,
        provider_capabilities,
        provider_spec,
        recognise_server,
    )

    try:
        spec = provider_spec(llm.provider)
    except SetupError:
        return None, None
    base_url = llm.base_url or (os.environ.get(spec.base_url_env) if spec.base_url_env else None) or None
    caps = provider_capabilities(llm.provider, llm.model, base_url, overrides_from_settings(llm.capabilities))
    if not base_url or anthropic_url(base_url):
        return caps, None
    # As a run decides it: ask the server what it is (metadata endpoints only, never a model call).
    kind = recognise_server(base_url)
    try:
        return capabilities_for_server(caps, kind, base_url), kind.describe()
    except SetupError as err:
        warnings.append(f"a run would stop: {err}")
        return caps, kind.describe()


def _model_report(
    config: Config, caps: Capabilities | None, plan: DeferralPlan, total: int, server: str | None
) -> dict[str, Any] | None:
    llm = config.llm
    if not llm.model:
        return None
    deferred = plan.deferred_count
    if llm.no_tool_search:
        status = "disabled (no_tool_search)"
    elif caps is None:
        status = f'unknown (provider "{llm.provider}" is not available)'
    elif not caps.tool_search:
        status = (
            f"client-side find_tools (the server has none; used when the tool definitions exceed "
            f"llm.tool_definition_budget, {plan.budget:,} tokens; these take about {plan.tokens or 0:,})"
        )
    else:
        status = f"enabled (used when {TOOL_SEARCH_THRESHOLD} or more tools are available)"
    output = llm.budget.max_output_tokens or (16384 if llm.thinking.enabled else 8192)
    return {
        "model": llm.model,
        "provider": llm.provider,
        "thinking": llm.thinking.enabled,
        "max_tokens": llm.budget.max_tokens,
        "max_output_tokens": output,
        "max_iterations": llm.budget.max_iterations,
        "call_timeout_seconds": llm.budget.call_timeout.total_seconds(),
        "tool_search": status,
        "capabilities": caps.describe() if caps is not None else "",
        "server": server,
        "deferred_tools": deferred,
        "total_tools": total,
        "tool_definition_tokens": plan.tokens,
        "tool_definition_budget": llm.tool_definition_budget,
    }


def _global_flags_report(application: Application | None) -> list[dict[str, Any]]:
    if application is None:
        return []
    exposed = {flag.name for flag in application.exposed_global_flags}
    return [
        {"name": flag.name, "help": flag.help, "exposed": flag.name in exposed, "required": flag.required}
        for flag in application.model.flags
        if not flag.hidden
    ]


def render_text(report: dict[str, Any]) -> str:
    """The human layout of `build_report`'s object."""
    out: list[str] = []
    app = report["application"]
    if app is not None:
        version = f" {app['version']}" if app["version"] else ""
        out.append(f"{app['name']}{version}: {app['help']}")
        kind = "fisk command schemas" if app["schemas"] == "fisk" else "schemas derived from flags (fisk < 0.9)"
        offered = sum(1 for tool in report["tools"] if tool["source"] == "application")
        out += [
            "",
            "Application",
            items(
                [
                    ("Identity", report["identity"]),
                    ("Binary", app["path"]),
                    ("Schemas", kind),
                    (
                        "Commands",
                        f"{app['commands']} runnable, {offered} offered "
                        f"({app['denied']} ai:deny, {app['filtered']} filtered by include/exclude)",
                    ),
                ]
            ),
        ]
    elif not report["tool_sources"]:
        out += ["Application", items([("Identity", report["identity"]), ("Binary", "none (no application_path)")])]
    for source in report["tool_sources"]:
        rows = [
            (key.capitalize(), str(source[key])) for key in ("framework", "version", "python", "path") if key in source
        ]
        rows.append(
            ("Commands", f"{source['commands']} runnable, {source['offered']} offered ({source['denied']} ai:deny)")
        )
        out += ["", f"Tool source {source['source']}", items(rows)]
    model = report["model"]
    if model is not None:
        out += [
            "",
            "Model",
            items(
                [
                    ("Model", model["model"]),
                    ("Provider", model["provider"]),
                    ("Thinking", "enabled" if model["thinking"] else "disabled"),
                    (
                        "Budgets",
                        f"{model['max_tokens']} tokens per run, {model['max_iterations']} iterations, "
                        f"{model['call_timeout_seconds']:g}s per call, {model['max_output_tokens']} output tokens per call",
                    ),
                    ("Capabilities", model["capabilities"] or "unknown"),
                    *([("Server", model["server"])] if model["server"] else []),
                    (
                        "Tool search",
                        f"{model['tool_search']}; {model['deferred_tools']} of {model['total_tools']} deferred",
                    ),
                ]
            ),
            "",
            "Sessions",
            items([("Backend", report["sessions"]["backend"])]),
        ]
    if report["memory"] is not None:
        memory = report["memory"]
        out += ["", "Memory", items([("Backend", memory["backend"]), ("Index", "on" if memory["index"] else "off")])]
    if report["knowledge"] is not None:
        knowledge = report["knowledge"]
        out += [
            "",
            "Knowledge",
            items(
                [
                    ("Directory", knowledge["directory"]),
                    ("Paths", ", ".join(knowledge["paths"]) or "(none; pass paths to 'fiskai knowledge index')"),
                    ("Search", "lexical + vector" if knowledge["vector"] else "lexical"),
                ]
            ),
        ]
    rows = [
        [
            tool["name"],
            "yes" if tool["confirm"] else "no",
            "yes" if tool["deferred"] else "no",
            clip(tool["description"], 50),
            ", ".join(tool["tags"]),
        ]
        for tool in report["tools"]
    ]
    headers = ["tool", "confirm", "deferred", "description", "tags"]
    if any(tool["source"].startswith("mcp ") for tool in report["tools"]):
        # Imported tools name their server's alias, as the Go agent's Source column does.
        headers.insert(1, "source")
        for row, tool in zip(rows, report["tools"], strict=True):
            row.insert(1, tool["source"])
    out += ["", f"Tools ({len(rows)})"]
    out.append(table(headers, rows) if rows else "  none")
    if report.get("mcp_clients"):
        from fiskai_cli.commands.info_mcp import render_mcp_clients

        out += render_mcp_clients(report["mcp_clients"])
    flags = report["global_flags"]
    if flags:
        listed = ", ".join(
            flag["name"] + (" [exposed, required]" if flag["required"] else " [exposed]" if flag["exposed"] else "")
            for flag in flags
        )
        out += ["", "Global flags (add names under global_flags to expose them to the model)", f"  {listed}"]
    prompt = report["prompt"]
    out += ["", "Prompt"]
    if prompt["text"]:
        out.append(f"  {clip(prompt['text'], 100)} ({prompt['lines']} lines, {len(prompt['text'])} characters)")
    else:
        out.append("  No system_prompt defined")
    return "\n".join(out)
