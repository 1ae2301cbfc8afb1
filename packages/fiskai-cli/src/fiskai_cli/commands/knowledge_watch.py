"""`fiskai knowledge watch`: keep the index up to date while files change (loaded only when it runs)."""

from __future__ import annotations

import os
import signal
import time
from types import FrameType

import click

from fiskai_cli._wiring import manifest_embedder, open_knowledge_store as open_store_at
from fiskai_cli.commands.knowledge import echo_tier, knowledge_settings, rag_errors, settings_embedder, worded
from fiskai_cli.commands.knowledge_index import result_line
from fiskai_rag import RagError, open_store
from fiskai_rag.errors import IndexLockedError

__all__ = ["watch_command"]


def _stamp() -> str:
    return time.strftime("[%H:%M:%S]")


def _watch_pass(ctx: click.Context, roots: list[str], changed: list[str]) -> bool:
    """Re-index after a change; False when another writer holds the lock (retry later)."""
    if changed:
        click.echo(f"{_stamp()} change detected in {len(changed)} file(s); reindexing:")
        for key in changed[:20]:
            click.echo(f"  {_shown(key)}")
        if len(changed) > 20:
            click.echo(f"  ... and {len(changed) - 20} more")
    settings = knowledge_settings(ctx)
    try:
        # The library's opener, not `_wiring`'s: a busy lock must stay an IndexLockedError to be retried.
        embedder = settings_embedder(settings, download=True) or manifest_embedder(settings.store_dir)
        with open_store(settings.store_dir, read_only=False, embedder=embedder) as store:
            stats = store.index(roots, reconcile=True)
    except IndexLockedError:
        click.echo(f"{_stamp()} another knowledge writer is running; will retry", err=True)
        return False
    except RagError as err:
        click.echo(f"{_stamp()} reindex failed: {worded(err)}", err=True)
        return True
    click.echo(f"{_stamp()} {result_line(stats)}")
    return True


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (a supervisor, `kill`) stops watching as Ctrl-C does, instead of ending it unannounced."""
    raise KeyboardInterrupt


def _shown(key: str) -> str:
    """A document key (absolute) as the operator reads it: relative to the current folder when inside it."""
    here = os.getcwd()
    return os.path.relpath(key, here) if key.startswith(here.rstrip("/") + "/") else key


@click.command("watch")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--debounce",
    type=float,
    default=2.0,
    show_default=True,
    help="Seconds between checks; a change is indexed once files stop changing for this long (min 0.1).",
)
@click.option("--no-initial", is_flag=True, help="Skip the initial full index pass.")
@click.pass_context
def watch_command(ctx: click.Context, paths: tuple[str, ...], debounce: float, no_initial: bool) -> None:
    """Keep the index up to date while files change (polls sizes and mtimes; Ctrl-C stops).

    \b
    Examples:
      fiskai knowledge watch docs
      fiskai knowledge watch --debounce 5 --no-initial ~/notes
    """
    from fiskai_rag import snapshot  # only watch polls the tree

    if debounce < 0.1:
        raise click.ClickException("debounce must be at least 100ms")
    settings = knowledge_settings(ctx)
    with rag_errors(), open_store_at(settings.store_dir, read_only=True, embedder=settings_embedder(settings)) as store:
        echo_tier(store)
    roots: list[str] = []
    for root in list(paths) or settings.paths:
        if os.path.exists(root):
            roots.append(root)
        else:
            click.echo(f'skipping missing path "{root}"', err=True)
    if not roots:
        raise click.ClickException("none of the configured knowledge paths exist")
    exclude = str(settings.store_dir)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        indexed = snapshot(roots, exclude_dir=exclude)
        if not no_initial:
            while not _watch_pass(ctx, roots, []):
                time.sleep(debounce)
        noun = "path" if len(roots) == 1 else "paths"
        click.echo(
            f"watching {len(indexed)} files under {len(roots)} {noun} (debounce {debounce:g}s); press Ctrl-C to stop"
        )
        while True:
            time.sleep(debounce)
            current = snapshot(roots, exclude_dir=exclude)
            if current == indexed:
                continue
            while True:  # debounce: wait until a whole interval passes with no further change
                time.sleep(debounce)
                settled = snapshot(roots, exclude_dir=exclude)
                if settled == current:
                    break
                current = settled
            changed = sorted(k for k in current.keys() | indexed.keys() if current.get(k) != indexed.get(k))
            if _watch_pass(ctx, roots, changed):
                indexed = current
    except KeyboardInterrupt:
        click.echo("stopped watching")
    finally:
        signal.signal(signal.SIGTERM, previous)
