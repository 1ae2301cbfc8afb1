"""Every tool source an agent.yaml names, loaded: `application_path` first, then `tool_sources` in order.

Each source is a `fiskai_core.exec.ToolSource` (a fisk `Application` or a Python CLI's `PyCliSource`),
with its own selection already applied and its tool names prefixed; `command_tools` binds each to its
program. Names must still be unique across sources: the tool set refuses a clash, and `prefix:` is the
fix. Blocking (sources are described at start-up); nothing here runs a tool.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fiskai_core.config import Config, ToolSourceSettings
from fiskai_core.exec import ToolSource

__all__ = ["LoadedSource", "load_tool_sources"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedSource:
    """One configured source, loaded."""

    label: str
    """How it is named to people (`click: sqlite-utils`)."""
    source: ToolSource
    commands: int
    """Runnable commands before `ai:deny` and include/exclude."""
    denied: int
    warnings: Sequence[str] = ()
    details: dict[str, str] = dataclasses.field(default_factory=dict[str, str])
    """Framework, versions and interpreter, for `fiskai info`."""
    strip_env: Sequence[str] = ()
    """Further variables to remove from this source's command environment (see `PyCliSource.strip_env`)."""


def load_tool_sources(config: Config, *, base_dir: Path | None = None, use_cache: bool = True) -> list[LoadedSource]:
    """The `tool_sources` entries loaded (not `application_path`, which callers load as before).

    Raises:
        IntrospectionError: a program cannot be found, run or described.
        ConfigError: a rule pattern is invalid.
        ToolSelectionError: an include or exclude pattern is invalid.
    """
    return [_load(entry, config, base_dir, use_cache=use_cache) for entry in config.tool_sources]


def _load(entry: ToolSourceSettings, config: Config, base_dir: Path | None, *, use_cache: bool) -> LoadedSource:
    if entry.kind == "fisk":
        from fiskai_core.fisk import load_application

        app = load_application(
            entry.fisk,
            base_dir=base_dir,
            include=None,
            exclude=None,
            strip_env=config.credential_env_names(),
            pass_env=config.passed_env_names(),
        )
        from fiskai_core.tools import select_tools

        commands = [dataclasses.replace(spec, name=entry.prefix + spec.name) for spec in app.commands]
        selected = select_tools(commands, include=entry.include, exclude=entry.exclude)
        source = dataclasses.replace(app, commands=commands, selected=selected)
        return LoadedSource(
            label=entry.label,
            source=source,
            commands=len(commands),
            denied=sum(1 for spec in commands if "ai:deny" in spec.tags),
            warnings=tuple(app.warnings),
            details={"framework": "fisk", "version": app.model.version or "", "path": app.path},
        )
    from fiskai_core.pycli import TagRule, load_python_cli

    python = load_python_cli(
        entry.kind,
        entry.target,
        python=entry.python,
        run=entry.run,
        parser=entry.parser,
        base_dir=base_dir,
        prefix=entry.prefix,
        rules=[TagRule(commands=r.commands, tags=tuple(r.tags), deny_params=tuple(r.deny_params)) for r in entry.rules],
        deny_params=entry.deny_params,
        allow_passthrough=entry.allow_passthrough,
        include=entry.include,
        exclude=entry.exclude,
        timeout=entry.timeout.total_seconds(),
        use_cache=use_cache,
    )
    doc = python.document
    return LoadedSource(
        label=entry.label,
        source=python,
        commands=len(python.commands),
        denied=sum(1 for spec in python.commands if "ai:deny" in spec.tags),
        warnings=tuple(python.warnings),
        strip_env=tuple(python.strip_env),
        details={
            "framework": f"{doc.framework} {doc.framework_version}".strip(),
            "version": f"{doc.dist} {doc.dist_version}".strip(),
            "python": f"{doc.python} ({doc.python_version})",
            "path": python.path,
        },
    )
