"""The root `fiskai` group: global options, version, and the lazy subcommand map."""

from __future__ import annotations

import sys

import click
from click.core import ParameterSource

from ._ctrl_c import restore_ctrl_c
from ._lazy import LazyCommand, LazyGroup
from ._version import VERSION
from ._wiring import DEFAULT_CONFIG, Invocation

# Every subcommand, by name. Modules load only when their command runs.
COMMANDS: dict[str, LazyCommand] = {
    "a2a": LazyCommand(
        import_path="fiskai_cli.commands.a2a:a2a",
        summary="Serve the tools to other agents over NATS (an alias of `serve` with the tool endpoint only).",
        extra="a2a",
    ),
    "ask": LazyCommand(
        import_path="fiskai_cli.commands.ask:ask",
        summary='Send a prompt to an agent served over NATS and stream its answer (ask AGENT "prompt").',
        extra="a2a",
    ),
    "approvals": LazyCommand(
        import_path="fiskai_cli.commands.approvals:approvals",
        summary="List, add and remove an agent's persisted approval rules for gated commands.",
    ),
    "discover": LazyCommand(
        import_path="fiskai_cli.commands.discover:discover",
        summary="Discover a remote agent over NATS and print its card and tools.",
        extra="a2a",
    ),
    "eval": LazyCommand(
        import_path="fiskai_cli.commands.eval_agent:eval_group",
        summary="Evaluate an agent's safety against scripted scenarios (eval agent SUITE.yaml).",
        extra="agent",
    ),
    "info": LazyCommand(
        import_path="fiskai_cli.commands.info:info",
        summary="Show the tools, prompt and settings loaded from a configuration.",
    ),
    "jobs": LazyCommand(
        import_path="fiskai_cli.commands.jobs:jobs",
        summary="Submit prompts to an agent's job queue and read the answers (asyncjobs, like ajc).",
        extra="a2a",
    ),
    "knowledge": LazyCommand(
        import_path="fiskai_cli.commands.knowledge:knowledge",
        summary="Build and search the local knowledge index for the knowledge_search tool.",
        extra="knowledge",
    ),
    "mcp": LazyCommand(
        import_path="fiskai_cli.commands.mcp:mcp",
        summary="Serve the tools over the Model Context Protocol (streamable HTTP or stdio).",
        extra="mcp",
    ),
    "memory": LazyCommand(
        import_path="fiskai_cli.commands.memory:memory",
        summary="List, show and remove the memories an agent's model has saved.",
        extra="memory",
    ),
    "run": LazyCommand(
        import_path="fiskai_cli.commands.run:run",
        summary="Run the agent: a model that may call only the configured commands.",
        extra="agent",
    ),
    "serve": LazyCommand(
        import_path="fiskai_cli.commands.serve:serve",
        summary="Host the agent: answer prompts and serve tools over NATS until interrupted.",
        extra="a2a",
    ),
    "session": LazyCommand(
        # session_inspect adds stats/query/search to the group defined in session.py.
        import_path="fiskai_cli.commands.session_inspect:session",
        summary="Manage checkpointed agent runs: list, show, stats, query, search, rm, export.",
        extra="session",
    ),
    "tools": LazyCommand(
        import_path="fiskai_cli.commands.tools:tools",
        summary="List the tools a model gets, show one's schema, and call one exactly as a model would.",
    ),
}


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"fiskai {VERSION}")
    ctx.exit()


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=DEFAULT_CONFIG,
    show_default=True,
    envvar="FISKAI_CONFIG",
    help="The agent.yaml to load (env FISKAI_CONFIG); ./agent.yaml is used when it exists.",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the fiskai version and exit.",
)
@click.pass_context
def cli(ctx: click.Context, config_path: str) -> None:
    """Turn a fisk command-line application into a safe LLM agent.

    fiskai reads a fisk application's command tree (`APP --fisk-introspect`), turns its commands
    into tools, and lets a model call only those, as an argv with no shell and no credentials.

    \b
    Start here:
      fiskai -c agent.yaml info                        show the tools a model would get
      fiskai -c agent.yaml tools call NAME '{...}'     run one exactly as a model would
    """
    explicit = ctx.get_parameter_source("config_path") in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
    ctx.obj = Invocation(config_path=config_path, config_explicit=explicit)


def main() -> None:
    """Run the `fiskai` command."""
    restore_ctrl_c()
    try:
        cli.main(prog_name="fiskai")
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
