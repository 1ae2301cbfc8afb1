"""The `tool_sources` of a configuration, loaded for the harness and `fiskai info`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fiskai_cli._settings import Settings, reported

if TYPE_CHECKING:
    from fiskai_core.sources import LoadedSource

__all__ = ["load_tool_sources"]


def load_tool_sources(settings: Settings) -> list[LoadedSource]:
    """The `tool_sources` entries described and selected (empty without any).

    Raises:
        click.ClickException: a program is missing, cannot be described, or a pattern is invalid.
    """
    if not settings.config.tool_sources:
        return []
    from fiskai_core.sources import load_tool_sources as load_sources

    with reported():
        return load_sources(settings.config, base_dir=settings.folder)
