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
from typing import Any, cast

import anyio
import click

from fiskai_cli._wiring import Settings, command_tools, confirm_gate, load_application, load_settings, operator_prompter
from fiskai_cli.ui.text import clip, table
from fiskai_core.config import Mode
from fiskai_core.confirm import render_command_line
from fiskai_core.errors import ArgumentsError
from fiskai_core.fisk import missing_required_message
from fiskai_core.fisk.execution import CommandTool
from fiskai_core.tools import ToolResult

__all__ = ["tools"]

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
    """List the application's tools with whether each needs an operator's approval.

    \b
    Examples:
      fiskai -c agent.yaml tools list
      fiskai -c agent.yaml tools list --format json | jq -r '.tools[] | select(.confirm) | .name'
    """
    settings, available = _tools(ctx)
    gate = confirm_gate(settings)
    if output_format == "json":
        rows = [
            {
                "name": tool.name,
                "confirm": gate.trigger_tag(tool.tags) is not None,
                "trigger_tag": gate.trigger_tag(tool.tags),
                "tags": list(tool.tags),
                "description": tool.spec.description,
            }
            for tool in available
        ]
        click.echo(json.dumps({"config": str(settings.path), "tools": rows}, indent=2, ensure_ascii=False))
        return
    if not available:
        raise click.ClickException(f"{settings.path} offers no application tools (check include, exclude and ai:deny)")
    cells = [
        [
            tool.name,
            gate.trigger_tag(tool.tags) or "no",
            clip(tool.spec.description, _DESCRIPTION_CLIP),
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
    settings, available = _tools(ctx)
    tool = _find(available, name)
    refusal = _refusal(tool, arguments)
    argv: list[str] = []
    if refusal is None:
        try:
            argv = list(tool.command_argv(arguments))
        except ArgumentsError as err:
            refusal = str(err)
    if refusal is not None:
        _emit(ToolResult(text=refusal, is_error=True), None, output_format, ran=False)
        sys.exit(1)
    gate = confirm_gate(settings, operator_prompter(), approvals=True)
    tag = gate.trigger_tag(tool.tags)
    if dry_run:
        rule = gate.approvals.match(name=tool.name, tags=tool.tags, argv=argv) if gate.approvals else None
        _dry_run(tool.name, argv, tag, rule.text if rule else None, gate.prompter.can_prompt(), output_format)
        return

    async def go() -> tuple[ToolResult, dict[str, Any]]:
        decision = await gate.check(name=tool.name, tags=tool.tags, argv=argv)
        verdict: dict[str, Any] = {"allowed": decision.allowed, "channel": decision.channel, "tag": decision.tag}
        if decision.reason:
            verdict["reason"] = decision.reason
        if decision.rule:
            verdict["rule"] = decision.rule
        if not decision.allowed:
            return decision.denial_result(), verdict
        return await tool.execute(arguments), verdict

    result, verdict = anyio.run(go)
    ran = bool(verdict["allowed"])
    _emit(result, verdict, output_format, ran=ran)
    if not ran or result.is_error:
        sys.exit(1)
    if result.exit_code:
        sys.exit(result.exit_code if 0 < result.exit_code < 256 else 1)


def _tools(ctx: click.Context) -> tuple[Settings, list[CommandTool]]:
    settings = load_settings(ctx, Mode.MCP, required=True)
    assert settings is not None  # required=True: a missing file is an error above
    application = load_application(settings)
    if application is None:
        raise click.ClickException(
            f"{settings.path} names no application_path; `fiskai tools` lists and calls an application's commands"
        )
    return settings, command_tools(settings, application)


def _find(available: Sequence[CommandTool], name: str) -> CommandTool:
    for tool in available:
        if tool.name == name:
            return tool
    names = [tool.name for tool in available]
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; `fiskai tools list` shows the {len(names)} tools"
    raise click.ClickException(f'unknown tool "{name}"{hint}')


def _refusal(tool: CommandTool, arguments: str) -> str | None:
    """Why the call is refused before the gate (a model gets the same text), or None when it may proceed."""
    problems = tool.schema_problems(arguments)
    if problems:
        return (
            f"arguments for tool {tool.name!r} do not match its schema: {'; '.join(problems)}. "
            "Nothing was run; correct the arguments and call again."
        )
    missing = tool.missing_required(arguments)
    if missing:
        return missing_required_message(tool.name, tool.input_schema, missing)
    return None


def _dry_run(
    name: str, argv: list[str], tag: str | None, rule: str | None, can_prompt: bool, output_format: str
) -> None:
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
        reason = _json_object(result.text).get("reason") if verdict is not None else None
        raise click.ClickException(f"not run: {reason if isinstance(reason, str) else result.text}")
    body = _json_object(result.text)
    output = body.get("output")
    if not isinstance(output, str):
        click.echo(result.text, err=result.is_error)
        return
    click.echo(output, nl=not output.endswith("\n"))
    note = " (output truncated)" if body.get("truncated") else ""
    click.echo(f"exit code {body.get('exit_code')}{note}", err=True)


def _json_object(text: str) -> dict[str, object]:
    """`text` parsed as a JSON object; empty when it is not one."""
    try:
        parsed: object = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(parsed, dict):
        return {}
    return {str(key): value for key, value in cast("dict[object, object]", parsed).items()}
