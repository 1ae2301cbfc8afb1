"""`fiskai discover AGENT`: ask an agent on NATS for its card and the tools it serves."""

from __future__ import annotations

import json
import time

import anyio
import click

from fiskai_a2a import DEFAULT_TIMEOUT, A2AClient, NatsContext
from fiskai_a2a.nats_transport import connect
from fiskai_a2a.protocol import DiscoveryReply
from fiskai_cli import _wiring as wiring
from fiskai_cli._wiring import load_settings, reported
from fiskai_cli.commands.a2a import connection_options
from fiskai_cli.ui.text import clip, items, table
from fiskai_core.config import DEFAULT_IDENTITY, Mode

__all__ = ["discover"]


@click.command("discover")
@click.argument("agent")
@connection_options
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds to wait for the agent's answer.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json` prints the agent card as one object for scripts.",
)
@click.pass_context
def discover(
    ctx: click.Context,
    agent: str,
    server_url: str | None,
    context_name: str | None,
    timeout: float,
    output_format: str,
) -> None:
    """Discover a remote agent over NATS and print its card and tools.

    AGENT is the remote identity. The connection is --server, else --context, else nats_context from the
    configuration (whose identity is then the sender; `fiskai` otherwise).

    \b
    Examples:
      fiskai discover fixturectl --server nats://127.0.0.1:4222
      fiskai discover fixturectl --context ops
      fiskai -c agent.yaml discover fixturectl --format json | jq '.tools[].name'
    """
    config = None
    if not (server_url or context_name):
        settings = load_settings(ctx, Mode.MCP, required=False)
        config = settings.config if settings is not None else None
    target = wiring.nats_target(
        wiring.NatsTarget(server_url=server_url, context_name=context_name), config, needed_for="fiskai discover"
    )
    sender = config.identity if config is not None else DEFAULT_IDENTITY
    card, seconds = anyio.run(_discover, target, sender, agent, timeout)
    if output_format == "json":
        body = card.model_dump(mode="json", exclude={"header"}, exclude_none=True)
        body["round_trip_ms"] = round(seconds * 1000, 3)
        click.echo(json.dumps(body, indent=2, ensure_ascii=False))
        return
    click.echo(render_card(agent, card))


async def _discover(target: NatsContext, sender: str, agent: str, reply_seconds: float) -> tuple[DiscoveryReply, float]:
    with reported():
        async with connect(target, name=f"fiskai discover {agent}") as transport:
            started = time.perf_counter()
            card = await A2AClient(transport, identity=sender, timeout=reply_seconds).discover(agent)
            return card, time.perf_counter() - started


def render_card(agent: str, card: DiscoveryReply) -> str:
    """The text layout: the card's items, then a table of its tools."""
    pairs = [("Agent", card.name), ("Version", card.version)]
    if card.description:
        pairs.append(("Description", card.description))
    if card.protocols:
        pairs.append(("Protocols", ", ".join(card.protocols)))
    out = [f"Agent Card for {agent}", "", items(pairs), ""]
    tools = card.tools or []
    if tools:
        rows = [[tool.name, clip(tool.description or "", 60)] for tool in tools]
        out.append(table(["tool", "description"], rows))
    else:
        out.append("The agent exposes no tools.")
    return "\n".join(out)
