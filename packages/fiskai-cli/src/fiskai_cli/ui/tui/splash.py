"""The start-up card: what runs, with which model, where; it covers the view until the first reply."""

from __future__ import annotations

from fiskai_cli._version import VERSION
from fiskai_core.sanitize import sanitize_for_terminal

__all__ = ["splash_card"]


def splash_card(*, model: str, directory: str, chat: bool) -> str:
    """The card's text (the Go agent's header, ` o(((c fisk-ai <version> [chat]`, with fiskai's name)."""
    header = f" o(((c fiskai {VERSION}" + (" [chat]" if chat else "")
    return "\n".join(
        [
            header,
            "",
            f" model      {sanitize_for_terminal(model) or 'starting...'}",
            f" directory  {sanitize_for_terminal(directory)}",
            "",
            " waiting for the first reply; any key hides this, q leaves",
        ]
    )
