"""`fiskai memory`: list, show and remove the entries an agent's model has saved.

Which store: `--directory` names a file-backend directory outright. Otherwise the configuration (the
root `-c/--config`, `./agent.yaml` when it exists) gives the identity and `harness.memory` picks the
backend and its options (a relative `options.directory` is under the configuration's folder);
`--identity` overrides the configured identity. With no configuration file, `--identity` is required and
the file backend's directory in the state home is used (`$XDG_STATE_HOME/fiskai/memory/<identity>`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
import click

from fiskai_cli._wiring import NatsTarget, invocation, load_settings, memory_store, reported
from fiskai_cli.ui.text import clip, items, json_text, table
from fiskai_core.config import Mode
from fiskai_core.sanitize import visible_format_controls
from fiskai_memory import Entry, FileMemoryStore, Item, MemoryNotFoundError, Store

__all__ = ["memory"]

_T = TypeVar("_T")
_DESCRIPTION_CLIP = 80
# A memory is shown exactly, for audit: every control but tab and newline as `\xNN` (C1 included), and the
# bidi and invisible format characters as `<U+XXXX>`, so nothing a model stored can act on the terminal.
_VISIBLE = {code: f"\\x{code:02x}" for code in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if code not in (0x09, 0x0A)}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Target:
    """Where the store is, as the operator chose it."""

    identity: str | None
    directory: Path | None
    nats_url: str | None


def _store_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option(
        "--nats-url",
        envvar="NATS_URL",
        default=None,
        help="NATS server for the jetstream backend (env NATS_URL; default nats://127.0.0.1:4222).",
    )(command)
    command = click.option(
        "--directory",
        "directory",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="A file-backend memory directory; overrides the configuration and the identity.",
    )(command)
    return click.option(
        "--identity",
        default=None,
        help="The agent identity whose memory to use (default: the configuration's identity).",
    )(command)


def _format_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="`json` prints one object for scripts.",
    )(command)


@click.group("memory")
def memory() -> None:
    """List, show and remove an agent's stored memories.

    Memories are the small notes a model keeps across runs with memory_write. These commands are for
    the operator: to audit what was saved, read it, and remove what should not be there.

    \b
    Examples:
      fiskai memory list --identity cowsay
      fiskai -c agent.yaml memory show build.notes
      fiskai memory rm stale.key --identity cowsay
      fiskai memory list --directory ./memory --format json
    """


@memory.command("list")
@_store_options
@_format_option
@click.pass_context
def list_command(
    ctx: click.Context, identity: str | None, directory: Path | None, nats_url: str | None, output_format: str
) -> None:
    """List the stored keys with their descriptions, sorted by key.

    \b
    Examples:
      fiskai memory list --identity cowsay
      fiskai -c agent.yaml memory list --format json | jq -r '.memories[].key'
    """
    target = _Target(identity=identity, directory=directory, nats_url=nats_url)
    location, entries = _run(ctx, target, lambda store: store.list())
    if output_format == "json":
        click.echo(json.dumps({"store": location, "memories": [_item_json(e) for e in entries]}, indent=2))
        return
    if not entries:
        click.echo(f"No memories stored in {location}")
        return
    rows = [[e.key, _when(e.updated), clip(e.description, _DESCRIPTION_CLIP)] for e in entries]
    click.echo(f"{len(entries)} {'memory' if len(entries) == 1 else 'memories'} in {location}\n")
    click.echo(table(["key", "updated", "description"], rows))


@memory.command("show")
@click.argument("key")
@_store_options
@_format_option
@click.pass_context
def show_command(
    ctx: click.Context, key: str, identity: str | None, directory: Path | None, nats_url: str | None, output_format: str
) -> None:
    """Show one memory: its description, timestamps and content.

    \b
    Examples:
      fiskai -c agent.yaml memory show build.notes
      fiskai memory show build.notes --identity cowsay --format json
    """
    target = _Target(identity=identity, directory=directory, nats_url=nats_url)
    location, entry = _run(ctx, target, lambda store: store.read(key))
    if output_format == "json":
        click.echo(json_text({**_item_json(entry), "content": entry.content}))
        return
    header = [
        ("key", entry.key),
        ("description", entry.description),
        ("created", _when(entry.created)),
        ("updated", _when(entry.updated)),
        ("store", location),
    ]
    click.echo(items(header, indent=0))
    click.echo("")
    click.echo(visible_format_controls(entry.content.translate(_VISIBLE)), nl=not entry.content.endswith("\n"))


@memory.command("rm")
@click.argument("key")
@_store_options
@_format_option
@click.pass_context
def rm_command(
    ctx: click.Context, key: str, identity: str | None, directory: Path | None, nats_url: str | None, output_format: str
) -> None:
    """Remove one memory; fails when nothing is stored under KEY.

    \b
    Examples:
      fiskai memory rm stale.key --identity cowsay
      fiskai memory rm stale.key --directory ./memory
    """
    target = _Target(identity=identity, directory=directory, nats_url=nats_url)
    location, existed = _run(ctx, target, lambda store: store.delete(key))
    if not existed:
        raise click.ClickException(f'no memory is stored under key "{key}" in {location}')
    if output_format == "json":
        click.echo(json.dumps({"key": key, "deleted": True, "store": location}, indent=2))
        return
    click.echo(f"Removed {key} from {location}")


def _run(ctx: click.Context, target: _Target, action: Callable[[Store], Awaitable[_T]]) -> tuple[str, _T]:
    # Configuration is read before the event loop starts: it is blocking file work.
    settings = load_settings(ctx, Mode.MCP, required=False) if target.directory is None else None

    async def go() -> tuple[str, _T]:
        if target.directory is not None:
            store = FileMemoryStore(target.directory)
            return str(target.directory), await _act(action, store, str(target.directory))
        identity = target.identity or (settings.config.identity if settings is not None else None)
        if not identity:
            raise click.ClickException(
                f"no --identity given and no configuration at {invocation(ctx).config_path} to take it from; pass "
                "--identity (the agent's identity, by default its application binary's name) or --directory"
            )
        nats = NatsTarget(server_url=target.nats_url)
        async with memory_store(settings, identity=identity, nats=nats) as (store, location):
            return location, await _act(action, store, location)

    with reported():
        return anyio.run(go)


async def _act(action: Callable[[Store], Awaitable[_T]], store: Store, location: str) -> _T:
    try:
        return await action(store)
    except MemoryNotFoundError as err:
        raise click.ClickException(f"{err} in {location}") from err


def _item_json(entry: Item | Entry) -> dict[str, str | None]:
    return {
        "key": entry.key,
        "description": entry.description,
        "created": entry.created.isoformat() if entry.created else None,
        "updated": entry.updated.isoformat() if entry.updated else None,
    }


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%SZ") if moment is not None else "-"
