"""The load pipeline for a fisk application: resolve, introspect, walk, select.

Every face (info, the agent, MCP, A2A) loads its application through `load_application`, so `ai:deny`
stripping, include/exclude and global-flag exposure mean the same everywhere. Loading is blocking and
binds nothing to a process runner: `fiskai info` needs no event loop, and the drivers turn the
selected commands into runnable tools with `fiskai_core.exec.running.command_tools` (an `Application`
is a `fiskai_core.exec.ToolSource`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from typing_extensions import override

from fiskai_core.errors import IntrospectionError
from fiskai_core.exec import tool_env
from fiskai_core.tools import FilterRule, select_tools

from ._globals import resolve_global_flags
from ._introspect import introspect
from ._model import ApplicationModel, FlagModel
from ._walk import CommandSpec, walk_commands

__all__ = ["Application", "load_application", "resolve_application_path"]


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Application:
    """An introspected application and the commands selected from it: the fisk `ToolSource`."""

    path: str
    """The binary that was introspected and that every tool runs."""
    model: ApplicationModel
    commands: Sequence[CommandSpec]
    """Every runnable leaf, before `ai:deny` and the include/exclude rules."""
    selected: Sequence[CommandSpec]
    """What a model may call, in command-tree order."""
    exposed_global_flags: Sequence[FlagModel]
    warnings: Sequence[str] = ()
    """Commands refused while walking the tree (a hostile or broken name), one line each, for `info`."""

    @override
    def __repr__(self) -> str:
        # Short on purpose: the default repr walks every pydantic model of the command tree.
        return f"Application(path={self.path!r}, commands={len(self.commands)}, selected={len(self.selected)})"


def resolve_application_path(application_path: str, *, base_dir: Path | None = None) -> str:
    """Where `application_path` points.

    A path with a separator is relative to `base_dir` (the config's folder; the current directory when
    None) and comes back absolute; a bare name is looked up on PATH, as a shell would.

    Raises:
        IntrospectionError: a bare name is not on PATH.
    """
    expanded = os.path.expanduser(application_path)
    if os.sep in expanded or (os.altsep and os.altsep in expanded):
        path = Path(expanded)
        if not path.is_absolute():
            # Absolute from here on: `Path("./app")` prints as `app`, which a runner would look up on PATH.
            path = (base_dir / path if base_dir is not None else path).absolute()
        return str(path)
    found = shutil.which(expanded)
    if found is None:
        raise IntrospectionError(
            f'introspecting "{application_path}": no such command on PATH; set application_path to the '
            "binary's path (relative paths are resolved against the config file's folder)"
        )
    return found


def load_application(
    application_path: str,
    *,
    base_dir: Path | None = None,
    global_flags: Sequence[str] = (),
    include: FilterRule | None = None,
    exclude: FilterRule | None = None,
    strip_env: Iterable[str] = (),
    pass_env: Iterable[str] = (),
) -> Application:
    """Introspect the application and select the commands a model may call.

    Blocking (it runs the binary once); async callers use a worker thread.

    Args:
        application_path: As written in agent.yaml.
        base_dir: The config file's folder, for relative paths.
        global_flags: The global flags to expose to the model.
        include: Keep only matching commands (when the rule names anything).
        exclude: Then drop matching commands (when the rule names anything).
        strip_env: Extra credential variables to remove from the binary's environment (exact names, or
            prefixes written `PREFIX_*`).
        pass_env: Exact names exempt from the default credential list (`harness.environment.pass`).

    Raises:
        IntrospectionError: the binary cannot be found, run or understood.
        ConfigError: a `global_flags` entry does not name an exposable global flag.
        ToolSelectionError: an include or exclude pattern is invalid.
    """
    path = resolve_application_path(application_path, base_dir=base_dir)
    model = introspect(path, env=tool_env(strip=tuple(strip_env), passthrough=tuple(pass_env)))
    refused: list[str] = []
    commands = walk_commands(model, global_flags=global_flags, refused=refused)
    return Application(
        path=path,
        model=model,
        commands=commands,
        selected=select_tools(commands, include=include, exclude=exclude),
        exposed_global_flags=resolve_global_flags(model, global_flags),
        warnings=tuple(refused),
    )
