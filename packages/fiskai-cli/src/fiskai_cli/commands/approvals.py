"""`fiskai approvals`: list, add, remove and try an agent's persisted approval rules.

Rules live in the state home (`$XDG_STATE_HOME/fiskai/approvals/<identity>.yaml`, 0600 in a 0700
folder). The identity comes from the configuration (`-c`, `./agent.yaml`) or `--identity`. `add` and
`check` introspect the application: a rule is bound to the tool's current tags, so the tool must exist,
be gated (a rule for an ungated tool would approve nothing) and not be tagged `ai:deny`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from fiskai_cli import _wiring as wiring
from fiskai_cli.ui.text import table
from fiskai_core.approvals import ApprovalRule, RuleError, load_rules, parse_rule, save_rules
from fiskai_core.config import Mode
from fiskai_core.tools import TAG_CONFIRM, TAG_DENY

if TYPE_CHECKING:
    from fiskai_core.tools import Tool

__all__ = ["approvals"]


def _options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="`json` prints one object for scripts.",
    )(command)
    return click.option(
        "--identity", default=None, help="The agent whose rules to use (default: the configuration's)."
    )(command)


@click.group("approvals")
def approvals() -> None:
    """Manage an agent's persisted approval rules for gated commands.

    A rule approves a gated tool's calls whose command line has a given shape, without asking. It is
    matched on the exact argv the call would run: flags as --NAME=GLOB (or a bare --NAME), positionals
    as @N=GLOB (N-th after the --) or @*=GLOB (all others), ... to allow arguments the rule does not
    mention. GLOB is literal except * (printable text without /), ** (printable text, / included) and
    ? (one printable character, not /); no wildcard matches a control or bidi character or a ..
    path segment. Without ..., a call carrying anything the rule does not mention is not approved. A
    rule holds only while the tool's tags are unchanged, and no rule can approve a tool tagged ai:deny.

    The rules file is read only if it is a regular file you own, writable only by you, in a folder
    only you can write, and at most 1 MiB; anything else is refused with the fix.

    These examples, then those of each subcommand (add, check, list, rm), run as written in that
    order in examples/fixturectl, starting with no rules.

    \b
    Examples:
      fiskai -c agent.yaml approvals add cluster_node_drain "--reason=*" "@1=n*"
      fiskai -c agent.yaml approvals check cluster_node_drain '{"node": "n3", "reason": "disk"}'
      fiskai -c agent.yaml approvals list --format json
      fiskai -c agent.yaml approvals rm 3e916884f4
    """


def _identity(ctx: click.Context, given: str | None) -> tuple[str, wiring.Settings | None]:
    settings = wiring.load_settings(ctx, Mode.AGENT, required=given is None)
    if given is not None:
        return given, settings
    assert settings is not None  # required=True raises instead
    return settings.config.identity, settings


def _load(path: Path) -> list[ApprovalRule]:
    with wiring.reported():
        return load_rules(path)


def _rule_json(rule: ApprovalRule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "rule": rule.text,
        "tool": rule.tool,
        "patterns": list(rule.patterns),
        "tags": list(rule.tags),
        "added": rule.added,
    }


@approvals.command("list")
@_options
@click.pass_context
def list_rules(ctx: click.Context, identity: str | None, output_format: str) -> None:
    """List the agent's rules (id, rule, the tags it is bound to, when it was added).

    \b
    Examples:
      fiskai -c agent.yaml approvals list
      fiskai approvals list --identity fixturectl --format json
    """
    name, _settings = _identity(ctx, identity)
    path = wiring.approvals_file(name)
    rules = _load(path)
    if output_format == "json":
        body = {"identity": name, "file": str(path), "rules": [_rule_json(r) for r in rules]}
        click.echo(json.dumps(body, indent=2, ensure_ascii=False))
        return
    if not rules:
        click.echo(f'no approval rules for agent "{name}" ({path})', err=True)
        return
    click.echo(table(["id", "rule", "tags", "added"], [[r.id, r.text, ",".join(r.tags), r.added] for r in rules]))


def _tool_tags(settings: wiring.Settings, tool: str) -> Sequence[str]:
    """The tags of `tool` in the agent's loaded tool set; an error saying why when a rule cannot cover it."""
    application = wiring.load_application(settings)
    if settings.config.mcp_client_entries and (
        application is None or all(spec.name != tool for spec in application.commands)
    ):
        return _imported_tool(settings, tool).tags
    if application is None:
        raise click.ClickException(f'"{settings.path}" names no application_path, so it has no tools to approve')
    every = {spec.name: spec for spec in application.commands}
    loaded = {spec.name for spec in application.selected}
    spec = every.get(tool)
    if spec is not None and TAG_DENY in spec.tags:
        raise click.ClickException(
            f'no rule can approve "{tool}": it is tagged {TAG_DENY}, so no agent may ever run it'
        )
    if spec is None or tool not in loaded:
        raise click.ClickException(
            f'"{tool}" is not in this agent\'s tool set (see fiskai -c {settings.path} info); a rule needs a loaded tool'
        )
    gating = {TAG_CONFIRM, *settings.config.harness.confirm_tags}
    if not any(tag in gating for tag in spec.tags):
        raise click.ClickException(
            f'"{tool}" is not gated (no {TAG_CONFIRM} or harness.confirm_tags tag): it runs without approval, so a '
            "rule would change nothing"
        )
    return spec.tags


def _imported_tool(settings: wiring.Settings, tool: str) -> Tool:
    """An `mcp_clients` tool, to read its tags and plan calls (its servers are connected, then closed)."""
    import anyio

    async def imported() -> Tool | None:
        async with wiring.open_harness(settings, "tools") as harness:
            entry = harness.tools.get(tool)
            return None if entry is None or entry.kind != "mcp" else entry.tool

    found = anyio.run(imported)
    if found is None:
        raise click.ClickException(
            f'"{tool}" is not in this agent\'s tool set (see fiskai -c {settings.path} tools list); a rule needs a '
            "loaded tool"
        )
    if TAG_CONFIRM not in found.tags:
        raise click.ClickException(
            f'"{tool}" asks no approval (its server\'s confirm setting and annotations), so a rule would change nothing'
        )
    return found


@approvals.command("add", context_settings={"ignore_unknown_options": True})
@click.argument("tool")
@click.argument("patterns", nargs=-1)
@_options
@click.pass_context
def add(ctx: click.Context, tool: str, patterns: tuple[str, ...], identity: str | None, output_format: str) -> None:
    """Add a rule: TOOL then patterns (quote globs so the shell leaves them alone).

    Everything after a `--` is a pattern, so a flag pattern spelled like one of this command's own
    options (--format, --identity) goes there.

    \b
    Examples:
      fiskai -c agent.yaml approvals add cluster_node_drain "--reason=*" "@1=n*"
      fiskai -c agent.yaml approvals add cluster_node_drain --force "@1=n?" ...
      fiskai -c agent.yaml approvals add cluster_config_set -- --output=json "@1=app.*" "@2=*"
    """
    settings = wiring.load_settings(ctx, Mode.AGENT, required=True)
    assert settings is not None
    name = identity or settings.config.identity
    tags = _tool_tags(settings, tool)
    path = wiring.approvals_file(name)
    with wiring.reported():
        rule = parse_rule(" ".join(_quoted(p) for p in (tool, *patterns)), tags=tags)
        rules = load_rules(path)
        if rule in rules or any(r.text == rule.text for r in rules):
            raise click.ClickException(f"the rule {rule.text!r} is already in {path}")
        save_rules(path, [*rules, rule], identity=name)
    if output_format == "json":
        click.echo(json.dumps({"identity": name, "file": str(path), "added": _rule_json(rule)}, indent=2))
        return
    click.echo(f"added {rule.id}: {rule.text}  (tags {','.join(rule.tags)}; {path})")


def _spelled(text: str, rule: ApprovalRule) -> bool:
    """Whether `text` is `rule` written out (any quoting a shell reads the same way)."""
    try:
        return parse_rule(text, tags=()).same_as(rule)
    except RuleError:
        return False


def _quoted(word: str) -> str:
    import shlex

    return shlex.quote(word)


@approvals.command("rm")
@click.argument("which", nargs=-1, required=True)
@_options
@click.pass_context
def remove(ctx: click.Context, which: tuple[str, ...], identity: str | None, output_format: str) -> None:
    """Remove rules by id (from `list`) or by their text, quoted any way a shell would read the same.

    \b
    Examples:
      fiskai -c agent.yaml approvals rm 3e916884f4
      fiskai -c agent.yaml approvals rm "cluster_node_drain --force @1=n? ..."
    """
    name, _settings = _identity(ctx, identity)
    path = wiring.approvals_file(name)
    rules = _load(path)
    gone: list[ApprovalRule] = []
    unknown: list[str] = []
    for given in dict.fromkeys(which):
        found = [r for r in rules if r.id == given or _spelled(given, r)]
        gone += [r for r in found if r not in gone]
        if not found:
            unknown.append(given)
    if unknown:
        raise click.ClickException(
            f"no rule {', '.join(unknown)} in {path} (see fiskai approvals list); nothing was removed"
        )
    with wiring.reported():
        save_rules(path, [r for r in rules if r not in gone], identity=name)
    if output_format == "json":
        click.echo(
            json.dumps({"identity": name, "file": str(path), "removed": [_rule_json(r) for r in gone]}, indent=2)
        )
        return
    for rule in gone:
        click.echo(f"removed {rule.id}: {rule.text}")


@approvals.command("check")
@click.argument("tool")
@click.argument("arguments", default="{}")
@_options
@click.pass_context
def check(ctx: click.Context, tool: str, arguments: str, identity: str | None, output_format: str) -> None:
    """Show the command line a call would run and which rule, if any, approves it (exit 1 when none).

    ARGUMENTS is the tool's JSON arguments, as a model would send them (`fiskai tools schema TOOL`
    shows what they may hold).

    \b
    Examples:
      fiskai -c agent.yaml approvals check cluster_node_drain '{"node": "n3", "reason": "disk"}'
      fiskai -c agent.yaml approvals check cluster_node_drain '{"node": "n3", "reason": "disk"}' --format json
    """
    settings = wiring.load_settings(ctx, Mode.AGENT, required=True)
    assert settings is not None
    name = identity or settings.config.identity
    tags = _tool_tags(settings, tool)
    application = wiring.load_application(settings)
    bound: dict[str, Tool] = {t.name: t for t in wiring.application_tools(settings, application)}
    from fiskai_core.confirm import render_command_line

    argv = _check_argv(settings, bound[tool] if tool in bound else _imported_tool(settings, tool), arguments)
    path = wiring.approvals_file(name)
    rules = _load(path)
    rule = next((r for r in rules if r.matches(name=tool, tags=tags, argv=argv)), None)
    current = tuple(sorted(set(tags)))
    # Rules for this tool made when it had other tags no longer apply: say so, or the operator is left guessing.
    stale = [r for r in rules if r.tool == tool and r.tags != current]
    if output_format == "json":
        body = {
            "tool": tool,
            "argv": list(argv),
            "approved": rule is not None,
            "rule": _rule_json(rule) if rule else None,
            "stale_rules": [_rule_json(r) for r in stale],
        }
        click.echo(json.dumps(body, indent=2, ensure_ascii=False))
    else:
        click.echo(render_command_line(argv))
        click.echo(
            f"approved by {rule.id}: {rule.text}"
            if rule
            else "no rule approves this call; it would be put to the operator"
        )
    for old in stale:
        click.echo(
            f"note: rule {old.id} ({old.text}) was made when the tool was tagged {','.join(old.tags)}; it is now "
            f"tagged {','.join(current)}, so the rule no longer applies (add it again to approve again)",
            err=True,
        )
    if rule is None:
        ctx.exit(1)


# The trust boundary words its refusals for a model; an operator at `check` gets the same facts without them.
_TO_A_MODEL = re.compile(r"(\. Nothing was run; correct the arguments and call again\.|; remove it and call again)$")


def _check_argv(settings: wiring.Settings, tool: Tool, arguments: str) -> list[str]:
    """The argv `arguments` make for `tool` (through the call path), or what the operator must change in them."""
    from fiskai_core.calls import Refusal, prepare_call

    fix = f"fix ARGUMENTS (fiskai -c {settings.path} tools schema {tool.name} shows what they may hold)"
    try:
        decoded: object = json.loads(arguments)
    except ValueError as err:
        raise click.ClickException(
            f'ARGUMENTS is not JSON ({err}); give one JSON object, e.g. \'{{"node": "n3"}}\''
        ) from None
    if not isinstance(decoded, dict):
        raise click.ClickException('ARGUMENTS must be one JSON object, e.g. \'{"node": "n3"}\'')
    call = prepare_call(tool, arguments)
    if isinstance(call, Refusal):
        if call.kind == "missing":
            detail = "; ".join(f'property "{m}": required but missing' for m in call.missing)
        else:
            detail = _TO_A_MODEL.sub("", call.result.output)
        raise click.ClickException(f'these arguments do not fit "{tool.name}": {detail}; {fix}')
    return list(call.gate_argv)
