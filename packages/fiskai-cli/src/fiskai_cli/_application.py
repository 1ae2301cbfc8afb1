"""The wrapped programs' commands as tools: the fisk application and the `tool_sources`, selected.

Import-light like `_wiring` (which re-exports these): introspection and the tool machinery load inside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fiskai_cli._settings import Settings, reported
from fiskai_cli._sources import load_tool_sources

if TYPE_CHECKING:
    from fiskai_core.exec.running import CommandTool
    from fiskai_core.fisk import Application
    from fiskai_core.tools import Tool

__all__ = ["application_tools", "exposed_builtins", "exposed_tools", "load_application"]


def load_application(settings: Settings) -> Application | None:
    """Introspect the configured application and select its tools (None without `application_path`).

    Raises:
        click.ClickException: the binary is missing, not executable, or prints no valid command tree.
    """
    config = settings.config
    if not config.application_path:
        return None
    from fiskai_core.fisk import load_application as introspect_and_select

    with reported():
        return introspect_and_select(
            config.application_path,
            base_dir=settings.folder,
            global_flags=config.global_flags,
            include=config.include,
            exclude=config.exclude,
            strip_env=config.credential_env_names(),
            pass_env=config.passed_env_names(),
        )


def application_tools(settings: Settings, application: Application | None = None) -> list[CommandTool]:
    """Every wrapped program's selected commands as runnable tools, with the scrubbed environment.

    `application_path` first, then `tool_sources` in order.
    """
    application = application if application is not None else load_application(settings)
    sources = [(loaded.source, loaded.strip_env) for loaded in load_tool_sources(settings)]
    if application is not None:
        sources.insert(0, (application, ()))
    if not sources:
        return []
    from fiskai_core.exec.running import command_tools

    config = settings.config
    tools: list[CommandTool] = []
    for source, strip in sources:
        strip_env = [*config.credential_env_names(), *strip]
        tools.extend(command_tools(source, strip_env=strip_env, pass_env=config.passed_env_names()))
    return tools


def exposed_tools(settings: Settings, tools: list[CommandTool]) -> list[Tool]:
    """The tools a server face offers: the run's selection narrowed by `expose.agent.tools`."""
    from fiskai_core.tools import select_tools

    exposed = settings.config.expose.agent.tools
    with reported():
        return list(select_tools(tools, include=exposed.include, exclude=exposed.exclude))


def exposed_builtins(settings: Settings) -> list[Tool]:
    """The `harness.tools` built-ins an MCP server offers: those listed, narrowed by `expose.agent.tools`."""
    from fiskai_core.builtins import harness_tools
    from fiskai_core.tools import select_tools

    exposed = settings.config.expose.agent.tools
    with reported():
        tools = harness_tools(settings.config.harness.tools, folder=settings.folder)
        return list(select_tools(tools, include=exposed.include, exclude=exposed.exclude))
