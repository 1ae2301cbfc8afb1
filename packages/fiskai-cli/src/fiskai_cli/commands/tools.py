"""`fiskai tools`: list the tools a model gets, show one's input schema, and call one as a model would.

`call` takes exactly a model's path: the arguments are checked against the tool's schema and its
required parameters, turned into the argv (the trust boundary), put to the confirm gate (a terminal
prompt for a gated tool; denied when no terminal is attached), run with no shell and the scrubbed
environment, and capped like any tool output. `--dry-run` stops before the gate and the run: it prints
the argv and what the gate would do. The agent's persisted approval rules (`fiskai approvals`) apply,
exactly as in a run.
"""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import anyio
import click

from fiskai_cli import _wiring as wiring
from fiskai_cli._hooks import command_hooks
from fiskai_cli._wiring import Settings, application_tools, load_settings
from fiskai_cli.ui.text import clip, table
from fiskai_core.calls import Refusal, ToolCall, hooked_output, hooked_prepare, run_call
from fiskai_core.confirm import render_command_line
from fiskai_core.exec.running import CommandTool
from fiskai_core.hooks import Decisions, decision_line
from fiskai_core.tools import Tool, ToolEntry, ToolResult, trigger_tag

__all__ = ["tools"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_T = TypeVar("_T", bound=_Named)

_DESCRIPTION_CLIP = 60


_FORMAT = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json` prints one object for scripts.",
)


@click.group("tools")
def tools() -> None:
    """List, inspect and call the tools a model would get from a configuration.

    \b
    Examples:
      fiskai -c agent.yaml tools list
      fiskai -c agent.yaml tools schema cluster_node_list
      fiskai -c agent.yaml tools call cluster_node_list '{"state": "up"}'
      fiskai -c agent.yaml tools call cluster_node_drain '{"node": "n1", "reason": "x"}' --dry-run
    """


@tools.command("list")
@_FORMAT
@click.pass_context
def list_command(ctx: click.Context, output_format: str) -> None:
    """List the application's tools, and those imported from mcp_clients servers, with whether each needs approval.

    \b
    Examples:
      fiskai -c agent.yaml tools list
      fiskai -c agent.yaml tools list --format json | jq -r '.tools[] | select(.confirm) | .name'
    """
    settings, available = _tools(ctx)
    confirm_tags = settings.config.harness.confirm_tags
    if output_format == "json":
        rows = [
            {
                "name": tool.name,
                "confirm": trigger_tag(tool.tags, confirm_tags) is not None,
                "trigger_tag": trigger_tag(tool.tags, confirm_tags),
                "tags": list(tool.tags),
                "description": _summary(tool),
            }
            for tool in available
        ]
        click.echo(json.dumps({"config": str(settings.path), "tools": rows}, indent=2, ensure_ascii=False))
        return
    if not available:
        raise click.ClickException(f"{settings.path} offers no tools (check include, exclude and ai:deny)")
    cells = [
        [
            tool.name,
            trigger_tag(tool.tags, confirm_tags) or "no",
            clip(_summary(tool), _DESCRIPTION_CLIP),
            ", ".join(tool.tags),
        ]
        for tool in available
    ]
    click.echo(table(["tool", "confirm", "description", "tags"], cells, indent=0))


@tools.command("schema")
@click.argument("name")
@click.pass_context
def schema_command(ctx: click.Context, name: str) -> None:
    """Print the input schema (JSON Schema) a model is given for tool NAME.

    \b
    Examples:
      fiskai -c agent.yaml tools schema cluster_config_set
      fiskai -c agent.yaml tools schema cluster_node_list | jq '.properties | keys'
    """
    _, available = _tools(ctx)
    tool = _find(available, name)
    click.echo(json.dumps(dict(tool.input_schema), indent=2, ensure_ascii=False))


@tools.command("call")
@click.argument("name")
@click.argument("arguments", default="{}")
@click.option("--dry-run", is_flag=True, help="Print the argv and whether the gate would ask; run nothing.")
@_FORMAT
@click.pass_context
def call_command(ctx: click.Context, name: str, arguments: str, dry_run: bool, output_format: str) -> None:
    """Call tool NAME with ARGUMENTS (a JSON object, default {}; - reads it from stdin) exactly as a model would.

    The call is validated, turned into an argv, put to the confirm gate (a gated tool asks on the
    terminal; with no terminal attached it is denied), run, and its output capped. The exit status is
    the command's own; 1 when nothing ran (invalid arguments, denied).

    \b
    Examples:
      fiskai -c agent.yaml tools call cluster_node_list '{"state": "up"}'
      fiskai -c agent.yaml tools call cluster_config_set '{"key": "a", "value": "b"}' --dry-run
      fiskai -c agent.yaml tools call types '{}' --format json | jq -r .text
      jq -n '{key: "a"}' | fiskai -c agent.yaml tools call cluster_config_get -
    """
    if arguments == "-":
        # stdin then holds the arguments, not an operator: a gated tool is denied, as with any pipe.
        arguments = sys.stdin.read()
    settings = _settings(ctx)
    outcome = anyio.run(_call, settings, name, arguments, dry_run)
    if isinstance(outcome, _DryRun):
        _dry_run(outcome, output_format)
        return
    result, verdict = outcome
    ran = verdict is not None and bool(verdict["allowed"])
    _emit(result, verdict, output_format, ran=ran)
    if not ran or result.is_error:
        sys.exit(1)
    if result.exit_code:
        sys.exit(result.exit_code if 0 < result.exit_code < 256 else 1)


@dataclass(frozen=True, slots=True)
class _DryRun:
    call: ToolCall
    rule: str | None
    can_prompt: bool


async def _call(
    settings: Settings, name: str, arguments: str, dry_run: bool
) -> tuple[ToolResult, dict[str, Any] | None] | _DryRun:
    """Prepare, decide and run, as a model's call would: the gate (the terminal, the saved rules), then the command."""
    async with wiring.open_harness(settings, "tools", prompter=wiring.operator_prompter()) as harness:
        tool = _find(harness.tools.tools(), name)
        hooks, decisions = command_hooks(settings), Decisions()
        # `harness.hooks` judge a call made by hand as they judge the model's (a dry run asks them too).
        hooked = await hooked_prepare(
            hooks,
            tool,
            arguments,
            lookup=lambda n: _tool_of(harness.tools.get(n)),
            decisions=decisions,
            confirm_tags=harness.gate.confirm_tags,
        )
        for record in decisions.records:
            click.echo(decision_line(record, tool.name), err=True)
        call = hooked.call
        if isinstance(call, Refusal):
            return call.result, None
        gate = harness.gate
        if dry_run:
            rule = gate.approvals.match(name=tool.name, tags=tool.tags, argv=call.gate_argv) if gate.approvals else None
            return _DryRun(call, rule.text if rule else None, gate.prompter.can_prompt())
        decision = await gate.decide(call)
        verdict: dict[str, Any] = {"allowed": decision.allowed, "channel": decision.channel, "tag": decision.tag}
        if decision.reason:
            verdict["reason"] = decision.reason
        if decision.rule:
            verdict["rule"] = decision.rule
        if not decision.allowed:
            return decision.denial_result(), verdict
        # Inside the harness: an imported MCP tool needs its server's session, closed with the harness.
        result = await run_call(call, time_limit=wiring.tool_time_limit(settings.config))
        decisions = Decisions()
        result = await hooked_output(hooks, hooked, result, decisions=decisions)
        for record in decisions.records:
            click.echo(decision_line(record, hooked.tool), err=True)
        return result, verdict


def _settings(ctx: click.Context) -> Settings:
    settings = load_settings(ctx, "mcp", required=True)
    assert settings is not None  # required=True: a missing file is an error above
    if not settings.config.has_tool_source and not settings.config.mcp_client_entries:
        raise click.ClickException(
            f"{settings.path} names no application_path and no mcp_clients; `fiskai tools` lists and calls an "
            "application's commands and the tools of mcp_clients servers"
        )
    return settings


def _tools(ctx: click.Context) -> tuple[Settings, list[Tool]]:
    settings = _settings(ctx)
    if not settings.config.mcp_client_entries:
        return settings, list(application_tools(settings))
    return settings, anyio.run(_harness_tools, settings)


async def _harness_tools(settings: Settings) -> list[Tool]:
    """The tools face's set: the application's commands and the imported MCP tools (their servers then closed)."""
    async with wiring.open_harness(settings, "tools") as harness:
        return harness.tools.tools()


def _summary(tool: Tool) -> str:
    if isinstance(tool, CommandTool):
        return tool.summary
    lines = tool.description.strip().splitlines()
    return lines[0] if lines else ""


def _tool_of(entry: ToolEntry | None) -> Tool | None:
    return entry.tool if entry is not None else None


def _find(available: Sequence[_T], name: str) -> _T:
    for tool in available:
        if tool.name == name:
            return tool
    names = [tool.name for tool in available]
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; `fiskai tools list` shows the {len(names)} tools"
    raise click.ClickException(f'unknown tool "{name}"{hint}')


def _dry_run(dry: _DryRun, output_format: str) -> None:
    call, rule, can_prompt = dry.call, dry.rule, dry.can_prompt
    name, argv, tag = call.name, list(call.gate_argv), call.gate_tag
    if tag is None:
        gate, would = "ungated", "run without asking"
    elif rule is not None:
        gate, would = "rule", f"run without asking: the persisted rule {rule!r} approves it"
    elif can_prompt:
        gate, would = "prompt", f"ask the operator first (tag {tag})"
    else:
        gate, would = "no_terminal", f"be denied: tag {tag} needs approval and no terminal is attached"
    if output_format == "json":
        document = {
            "tool": name,
            "argv": argv,
            "display": render_command_line(argv),
            "gate": gate,
            "tag": tag,
            "rule": rule,
        }
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    click.echo(render_command_line(argv))
    click.echo(f"dry run: nothing ran; the call would {would}", err=True)


def _emit(result: ToolResult, verdict: dict[str, Any] | None, output_format: str, *, ran: bool) -> None:
    if output_format == "json":
        document: dict[str, Any] = {"text": result.text, "is_error": result.is_error, "exit_code": result.exit_code}
        if verdict is not None:
            document["gate"] = verdict
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    if not ran:
        reason = verdict.get("reason") if verdict is not None else None
        raise click.ClickException(f"not run: {reason if isinstance(reason, str) else result.text}")
    if result.command is None:
        click.echo(result.text, err=result.is_error)
        return
    # The result's fields, not its model-facing JSON: the output is printed as the command wrote it.
    output = result.output
    click.echo(output, nl=not output.endswith("\n"))
    note = " (output truncated)" if result.truncated else ""
    click.echo(f"exit code {result.exit_code}{note}", err=True)
