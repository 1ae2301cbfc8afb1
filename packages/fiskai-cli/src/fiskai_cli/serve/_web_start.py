"""Composing the web channel from the harness: the listener bound before the banner, the card."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from fiskai_cli import _wiring as wiring
    from fiskai_core.config import WebSettings

    from .web.channel import WebChannel

__all__ = ["web_channel"]


def web_channel(harness: wiring.Harness, settings: WebSettings, token: str | None) -> WebChannel:
    """The channel, its socket already listening.

    Raises:
        click.ClickException: the listen address cannot be bound (a port in use fails before the banner).
    """
    try:
        from .web._card import build_card
        from .web.channel import WebChannel
    except ImportError as err:
        raise click.ClickException(
            f"expose.agent.web needs the web extra ({err.name} is missing): pip install 'fiskai-cli[web]'"
        ) from None
    from .web._listen import bind

    journal = harness.journal
    assert journal is not None, "serve opens the journal store for a channel"
    try:
        sock = bind(settings.listen)
    except (OSError, ValueError) as err:
        reason = getattr(err, "strerror", None) or err
        raise click.ClickException(
            f"expose.agent.web.listen {settings.listen}: cannot listen: {reason}; pick another port (0 picks a free one)"
        ) from None
    config = harness.config
    tools = harness.tools

    def card() -> dict[str, object]:
        return build_card(config, tools, settings.base_path)

    return WebChannel(settings, identity=config.identity, store=journal, sock=sock, card=card, token=token)
