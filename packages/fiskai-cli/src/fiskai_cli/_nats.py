"""One NATS connection per command, from `nats_context` (or `--server`/`--context`), lent to every part.

The A2A server and client, the remote tools, the JetStream run journal and the KV memory all use the
same connection: one place reads the context (credentials, TLS), one connection is opened and closed,
and one error says how to reach the server. The connection comes from the A2A binding (`fiskai_a2a`,
the project's NATS transport), so NATS-backed features need the `a2a` extra.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import click

from fiskai_cli._settings import needs_extra, reported

if TYPE_CHECKING:
    from fiskai_a2a import NatsContext
    from fiskai_a2a.nats_transport import NatsTransport
    from fiskai_core.config import Config

__all__ = ["NatsTarget", "nats_target", "open_nats"]


class NatsTarget:
    """Where to connect: a URL (`--server`), a context name (`--context`), or the configuration's context."""

    __slots__ = ("context_name", "server_url")

    def __init__(self, *, server_url: str | None = None, context_name: str | None = None) -> None:
        if server_url and context_name:
            raise click.ClickException("pass --server or --context, not both")
        self.server_url = server_url
        self.context_name = context_name

    @property
    def given(self) -> bool:
        """Whether the command line named a connection."""
        return bool(self.server_url or self.context_name)


def nats_target(target: NatsTarget, config: Config | None, *, needed_for: str) -> NatsContext:
    """The connection settings: `--server`, else `--context`, else the configuration's `nats_context`.

    Raises:
        click.ClickException: nothing names a connection (the message says what `needed_for` needs), or the
            context cannot be read.
    """
    try:
        from fiskai_a2a import NatsContext, load_context
    except ImportError as err:
        raise needs_extra("a2a", needed_for, err) from err
    if target.server_url:
        return NatsContext.from_url(target.server_url)
    name = target.context_name or (config.nats_context if config is not None else "")
    if not name:
        raise click.ClickException(
            f"{needed_for} needs a NATS connection: set nats_context in agent.yaml (a context of the nats CLI), "
            "or pass --context NAME or --server URL"
        )
    with reported():
        return load_context(name)


@asynccontextmanager
async def open_nats(context: NatsContext, *, name: str) -> AsyncGenerator[NatsTransport]:
    """Connect once; the connection closes when the block ends.

    Raises:
        click.ClickException: the server cannot be reached, or the context's credentials cannot be used.
    """
    from fiskai_a2a.nats_transport import connect

    with reported():
        async with connect(context, name=name) as transport:
            yield transport
