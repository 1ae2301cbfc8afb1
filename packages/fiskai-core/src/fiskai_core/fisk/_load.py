"""The load pipeline for a fisk application: resolve, introspect, walk, select.

Every face (info, the agent, MCP, A2A) loads its application tools through `load_application`, so
`ai:deny` stripping, include/exclude and global-flag exposure mean the same everywhere.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fiskai_core.errors import IntrospectionError
from fiskai_core.tools import FilterRule, select_tools

from ._env import tool_env
from ._globals import resolve_global_flags
from ._introspect import introspect
from ._model import ApplicationModel, FlagModel
from ._tool import CommandTool
from ._walk import CommandSpec, walk_commands

__all__ = ["Application", "load_application", "resolve_application_path"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Application:
    """An introspected application and the tools selected from it."""

    path: str
    """The binary that was introspected and that every tool runs."""
    model: ApplicationModel
    commands: Sequence[CommandSpec]
    """Every runnable leaf, before `ai:deny` and the include/exclude rules."""
    tools: Sequence[CommandTool]
    """What a model may call, in command-tree order."""
    exposed_global_flags: Sequence[FlagModel]


def resolve_application_path(application_path: str, *, base_dir: Path | None = None) -> str:
    """Where `application_path` points.

    A path with a separator is relative to `base_dir` (the config's folder); a bare name is looked up
    on PATH, as a shell would.

    Raises:
        IntrospectionError: a bare name is not on PATH.
    """
    expanded = os.path.expanduser(application_path)
    if os.sep in expanded or (os.altsep and os.altsep in expanded):
        path = Path(expanded)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        return str(path)
    found = shutil.which(expanded)
    if found is None:
        raise IntrospectionError(
            f'introspecting "{application_path}": no such command on PATH; set application_path to the '
            "binary's path (relative paths are resolved against the config file's folder)"
        )
    return found


async def load_application(
    application_path: str,
    *,
    base_dir: Path | None = None,
    global_flags: Sequence[str] = (),
    include: FilterRule | None = None,
    exclude: FilterRule | None = None,
    strip_env: Iterable[str] = (),
    work_dir: str | None = None,
    tool_timeout: float | None = None,
) -> Application:
    """Introspect the application and build its selected tools.

    Args:
        application_path: As written in agent.yaml.
        base_dir: The config file's folder, for relative paths.
        global_flags: The global flags to expose to the model.
        include: Keep only matching tools (when the rule names anything).
        exclude: Then drop matching tools (when the rule names anything).
        strip_env: Extra credential variables to remove from every child's environment.
        work_dir: The folder commands run in (introspection always runs in the current folder).
        tool_timeout: Seconds a tool call may run before its process group is killed.

    Raises:
        IntrospectionError: the binary cannot be found, run or understood.
        ConfigError: a `global_flags` entry does not name an exposable global flag.
        ToolSelectionError: an include or exclude pattern is invalid.
    """
    path = resolve_application_path(application_path, base_dir=base_dir)
    strip = tuple(strip_env)
    model = await introspect(path, env=tool_env(strip=strip))
    commands = walk_commands(model, global_flags=global_flags)
    env = tool_env(strip=strip, work_dir=work_dir)
    tools = [
        CommandTool(spec=spec, app_path=path, env=env, work_dir=work_dir, timeout=tool_timeout) for spec in commands
    ]
    return Application(
        path=path,
        model=model,
        commands=commands,
        tools=select_tools(tools, include=include, exclude=exclude),
        exposed_global_flags=resolve_global_flags(model, global_flags),
    )
