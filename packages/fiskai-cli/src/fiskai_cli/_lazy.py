"""A click group whose subcommands are imported only when they are used.

Each entry names the module that defines the command and the extra that provides its dependencies.
When that extra is missing, the group returns a stub whose help and invocation say what to install,
so `fiskai --help` works in a slim install (an MCP-only image, say) and never crashes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ._collector import resume_collection

if TYPE_CHECKING:
    from typing_extensions import override
else:  # typing_extensions costs ~3 ms of every command's start-up; the decorator only matters to pyright

    def override(func: Any) -> Any:
        return func


@dataclass(frozen=True, slots=True, kw_only=True)
class LazyCommand:
    """Where a subcommand lives and what it needs."""

    import_path: str
    """`package.module:attribute` of the click command."""
    summary: str
    """One line for `fiskai --help`, shown without importing the module."""
    extra: str | None = None
    """The fiskai-cli extra that provides the command's dependencies, if any."""


class LazyGroup(click.Group):
    """A click group that resolves its subcommands from a static map of import paths."""

    def __init__(self, *args: object, lazy_commands: dict[str, LazyCommand], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # pyright: ignore[reportArgumentType]
        self._lazy = lazy_commands

    @override
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    @override
    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = self._lazy.get(cmd_name)
        if entry is None:
            return super().get_command(ctx, cmd_name)
        return _load(cmd_name, entry)

    @override
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as err:
            # The one-line error often quotes a journal, a configuration, a peer or a model server: it is
            # sanitized like any other text for the terminal (imported only when there is an error).
            from fiskai_core.sanitize import sanitize_for_display

            message = err.format_message()
            clean = sanitize_for_display(message)
            if clean == message:
                raise
            if isinstance(err, click.UsageError):
                raise click.UsageError(sanitize_for_display(err.message), err.ctx) from err
            raise click.ClickException(clean) from err

    @override
    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Listing uses the static summaries, so `fiskai --help` imports no subcommand module.
        rows = [(name, self._lazy[name].summary) for name in sorted(self._lazy)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _load(cmd_name: str, entry: LazyCommand) -> click.Command:
    module_name, _, attribute = entry.import_path.partition(":")
    # A command is about to run (`--version` and `--help` never get here): before it can start any child, no
    # child may read the harness's secrets from /proc. Here rather than at start-up: ctypes costs a few ms.
    from ._secrets import hide_default_secrets

    hide_default_secrets()
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        missing = err.name or ""
        if entry.extra is None or missing.startswith("fiskai_cli"):
            raise
        return _missing_extra_stub(cmd_name, entry, missing)
    # `_entry.main` turned collection off for start-up; the command's own work gets it back.
    resume_collection()
    command = getattr(module, attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"{entry.import_path} is not a click command")
    return command


def _missing_extra_stub(cmd_name: str, entry: LazyCommand, missing: str) -> click.Command:
    hint = f"`fiskai {cmd_name}` needs the `{entry.extra}` extra: pip install 'fiskai-cli[{entry.extra}]'"

    def _fail() -> None:
        raise click.ClickException(f"{hint} (missing module {missing!r})")

    return click.Command(
        cmd_name,
        callback=_fail,
        # \b keeps click from wrapping the install command across lines, so it can be copied whole.
        help=f"{entry.summary}\n\n\b\nNot installed: {hint}.",
        short_help=entry.summary,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
