"""`fiskai mcp`: serve a configuration's tools to MCP clients over streamable HTTP or stdio.

Every message goes to stderr: under `--stdio`, stdout is the protocol. Needs no API key and never
imports the agent or the provider SDK, so an MCP-only install (`fiskai-cli[mcp]`) is enough.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import click

from fiskai_cli import _wiring as wiring
from fiskai_cli._secrets import take_secret
from fiskai_cli._serving import mcp_server
from fiskai_cli.ui.prompter import LinePrompter
from fiskai_mcp import (
    DEFAULT_ADDRESS,
    DEFAULT_PORT,
    ConfirmMode,
    ServerOptions,
    is_loopback,
    serve_async,
    trigger_tag,
)

__all__ = ["mcp"]

_MODE_SUMMARY = {
    ConfirmMode.AUTO: "clients that support elicitation are asked to approve each run, clients that do not run "
    "them ungated with nobody asked (confirm_over_mcp=auto, the Go agent's default)",
    ConfirmMode.ALWAYS: "clients that support elicitation are asked to approve each run, clients that do not are "
    "refused (confirm_over_mcp=always)",
    ConfirmMode.NEVER: "they run ungated with approval delegated to the client (confirm_over_mcp=never)",
}


def _say(line: str) -> None:
    click.echo(line, err=True)


@click.command("mcp")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    envvar="FISKAI_MCP_PORT",
    default=None,
    help="TCP port (env FISKAI_MCP_PORT); else expose.agent.mcp.port, else 8080. 0 picks a free port.",
)
@click.option(
    "--address",
    envvar="FISKAI_MCP_ADDRESS",
    default=None,
    help="Address to bind (env FISKAI_MCP_ADDRESS); else expose.agent.mcp.address, else 127.0.0.1.",
)
@click.option("--stdio", is_flag=True, help="Speak MCP on stdin/stdout, for clients that start the server.")
@click.option(
    "--token-env",
    metavar="NAME",
    default=None,
    help="Require `Authorization: Bearer <token>`, the token read from environment variable NAME "
    "(required for a non-loopback address; never pass the token itself).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    metavar="HOST",
    multiple=True,
    help="Another host name clients use to reach the server (Host and Origin checks); repeatable.",
)
@click.option(
    "--approve-on-tty",
    is_flag=True,
    help="Approve confirm-gated calls on this terminal instead of asking the client.",
)
@click.pass_context
def mcp(
    ctx: click.Context,
    port: int | None,
    address: str | None,
    stdio: bool,
    token_env: str | None,
    allow_hosts: tuple[str, ...],
    approve_on_tty: bool,
) -> None:
    """Serve the configuration's tools over the Model Context Protocol.

    Offers the loaded commands (after ai:deny, include/exclude and expose.agent.tools) to MCP clients
    such as Claude Desktop and Claude Code, with the same no-shell, no-credentials execution as a run.
    Commands tagged ai:confirm or a confirm_tags tag need approval (expose.agent.mcp.confirm_over_mcp).
    Needs an expose.agent.mcp block; needs no API key. Messages go to stderr.

    \b
    Examples:
      fiskai -c agent.yaml mcp                      # http://127.0.0.1:8080
      fiskai -c agent.yaml mcp --port 9000
      fiskai -c agent.yaml mcp --stdio              # for clients that spawn servers
      MCP_TOKEN=... fiskai -c agent.yaml mcp --address 0.0.0.0 --token-env MCP_TOKEN
      claude mcp add --transport http fixturectl http://localhost:8080
    """
    loaded = _load_settings(ctx)
    config, settings = loaded.config, _mcp_block(loaded)
    bind = address or settings.address or DEFAULT_ADDRESS
    token = _token(token_env, bind, stdio)
    listen = _Listen(
        stdio=stdio,
        address=bind,
        port=port if port is not None else (settings.port or DEFAULT_PORT),
        token=token,
        token_env=token_env if token else None,
        allow_hosts=allow_hosts,
    )
    _notes(config)
    with _approver(approve_on_tty) as approver:
        anyio.run(_serve, loaded, listen, approver)
    _say("MCP server stopped")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Listen:
    """Where and how the server listens."""

    stdio: bool
    address: str
    port: int
    token: str | None
    token_env: str | None
    allow_hosts: tuple[str, ...]


async def _serve(loaded: wiring.Settings, listen: _Listen, approver: LinePrompter | None) -> None:
    config = loaded.config
    async with wiring.open_harness(loaded, "mcp") as harness:
        if harness.knowledge is not None:
            _knowledge_notes(harness)
        elif config.harness.knowledge.enabled:
            _say(
                "note: knowledge is enabled but not exposed over MCP; add knowledge_search to "
                "expose.agent.mcp.builtins to let MCP clients search your knowledge base"
            )
        serving = mcp_server(harness, approver=approver, log=_say)
        ready = _banner(
            serving.options,
            serving.served,
            stdio=listen.stdio,
            approve_on_tty=approver is not None,
            token_env=listen.token_env,
        )
        try:
            await serve_async(
                serving.server,
                stdio=listen.stdio,
                address=listen.address,
                port=listen.port,
                token=listen.token,
                allow_hosts=listen.allow_hosts,
                on_ready=ready,
            )
        except OSError as err:
            raise click.ClickException(
                f"cannot serve on {listen.address}:{listen.port}: {err.strerror or err}; pick another --port or "
                "--address"
            ) from err


def _load_settings(ctx: click.Context) -> wiring.Settings:
    loaded = wiring.load_settings(ctx, "mcp", required=True)
    assert loaded is not None, "required=True either loads or raises"
    return loaded


def _mcp_block(loaded: wiring.Settings) -> Any:
    settings = loaded.config.expose.agent.mcp
    if settings is None:
        raise click.ClickException(
            f'fiskai mcp requires an expose.agent.mcp block in "{loaded.path}"; add expose.agent.mcp '
            "(optionally with a port) to serve tools over MCP"
        )
    return settings


def _token(token_env: str | None, bind: str, stdio: bool) -> str | None:
    if stdio:
        return None
    if token_env is None:
        if not is_loopback(bind):
            raise click.ClickException(
                f"serving on non-loopback address {bind!r} needs a bearer token: put one in an environment "
                "variable and pass its name with --token-env NAME (anyone who can reach the port could otherwise "
                "run the served commands)"
            )
        return None
    # Taken out of the environment once read: every command's environment is built from this process's,
    # so no served command (and nothing it starts) can see the token.
    token = take_secret(token_env).strip()
    if not token:
        raise click.ClickException(
            f"--token-env {token_env}: the environment variable {token_env} is unset or empty; export the "
            "bearer token in it (the name goes on the command line, never the token)"
        )
    return token


@contextlib.contextmanager
def _approver(approve_on_tty: bool) -> Generator[LinePrompter | None]:
    """The line prompter on this process's controlling terminal, when `--approve-on-tty` asks for it.

    The terminal is opened by name, not through stdin and stderr: under `--stdio` those carry the protocol
    and the client's log, and neither reaches the operator.
    """
    if not approve_on_tty:
        yield None
        return
    try:
        terminal_in = open("/dev/tty", encoding="utf-8")
    except OSError as err:
        raise click.ClickException(
            f"--approve-on-tty needs a terminal to ask on, and /dev/tty cannot be opened ({err.strerror or err}); "
            "start fiskai mcp from a terminal, or drop --approve-on-tty to let clients approve"
        ) from err
    with terminal_in, open("/dev/tty", "w", encoding="utf-8") as terminal_out:
        yield LinePrompter(stdin=terminal_in, stderr=terminal_out, interactive=True)


def _notes(config: Any) -> None:
    harness = config.harness
    if not config.has_tool_source:
        _say("note: no wrapped application configured (application_path unset); serving built-in tools only")
    if harness.human_in_the_loop.enabled:
        _say(
            "warning: human_in_the_loop has no effect over MCP; built-in human-in-the-loop tools are never exposed "
            "to MCP clients"
        )
    if harness.memory.enabled:
        _say("warning: memory has no effect over MCP; the built-in memory tools are only available in an agent run")


def _knowledge_notes(harness: wiring.Harness) -> None:
    store = harness.knowledge
    assert store is not None
    try:
        with wiring.reported():
            tier = store.tier()
    except click.ClickException as err:
        raise click.ClickException(f"cannot expose knowledge_search over MCP: {err.message}") from err
    _say(f"knowledge {tier}")
    if not store.db_path.exists():
        _say(
            "note: the knowledge index is not built yet; knowledge_search will return index_not_built until you "
            "run: fiskai knowledge index"
        )


def _banner(
    options: ServerOptions,
    served: Sequence[Any],
    *,
    stdio: bool,
    approve_on_tty: bool,
    token_env: str | None,
) -> Callable[[str], None]:
    names = [tool.name for tool in served]

    def ready(where: str) -> None:
        _say(f"Serving {len(names)} tools over MCP on {where} as {options.name}/{options.version}")
        for name in names:
            _say(f"  {name}")
        if not stdio:
            url = where.replace("://0.0.0.0:", "://localhost:").replace("://[::]:", "://localhost:")
            # The variable's name, never its value: the token is not printed anywhere.
            header = f' --header "Authorization: Bearer ${token_env}"' if token_env else ""
            _say(f"\nAdd to Claude Code with:\n  claude mcp add --transport http {options.name} {url}{header}")
        gated = sum(1 for tool in served if trigger_tag(tool.tags, options.confirm_tags) is not None)
        if gated:
            summary = (
                "each run is approved on this terminal (--approve-on-tty)"
                if approve_on_tty
                else _MODE_SUMMARY[options.confirm_mode]
            )
            _say(f"note: {gated} exposed tool(s) require approval (ai:confirm or confirm_tags): {summary}")

    return ready
