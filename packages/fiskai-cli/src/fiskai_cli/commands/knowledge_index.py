"""`fiskai knowledge index`: walk the roots and bring the index up to date (loaded only when it runs)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from fiskai_cli.commands.index_progress import index_with_progress
from fiskai_cli.commands.knowledge import SEMANTIC_KEY, echo_tier, knowledge_settings, opened, rag_errors, tier_of
from fiskai_rag import StaticEmbedder
from fiskai_rag.errors import PathsNotFoundError

if TYPE_CHECKING:
    from fiskai_rag import IndexStats, Store

__all__ = ["index_command", "result_line"]


def result_line(stats: IndexStats) -> str:
    """What an index run did, on one line."""
    head = "would index" if stats.dry_run else "indexed"
    tail = f", {stats.embeddings} embeddings" if stats.embeddings else ""
    return (
        f"{head}: added={stats.added} updated={stats.updated} skipped={stats.skipped} removed={stats.removed} "
        f"({stats.files} files, {stats.chunks} chunks{tail})"
    )


@click.command("index")
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--reindex", is_flag=True, help="Empty the index and rebuild it (also after an embeddings change).")
@click.option("--dry-run", is_flag=True, help="Count what would be indexed and embedded; write nothing.")
@click.option(
    "--reconcile/--no-reconcile",
    default=True,
    show_default=True,
    help="Remove indexed files under the given roots that no longer exist.",
)
@click.option(
    "--progress/--no-progress", default=None, help="Draw a progress bar (default: when stderr is a terminal)."
)
@click.option(
    "--background",
    is_flag=True,
    help="With a contextual model: return once the lexical index is written and embed in a detached process "
    "(its log: vectors.log in the index directory).",
)
@click.pass_context
def index_command(
    ctx: click.Context,
    paths: tuple[str, ...],
    reindex: bool,
    dry_run: bool,
    reconcile: bool,
    progress: bool | None,
    background: bool,
) -> None:
    """Index Markdown and text files incrementally (.md .markdown .txt .text).

    Unchanged files are skipped after a stat; changed files are re-chunked. Without PATHS, the configured
    knowledge.paths are indexed. One index holds any number of folders: documents are keyed by their
    absolute path and cited under their folder's name (indexing ~/notes gives notes/todo.md#0), so
    indexing another folder never replaces this one's documents.

    \b
    Examples:
      fiskai knowledge index docs
      fiskai knowledge index ~/notes ~/projects/app/docs
      fiskai knowledge index --dry-run docs
      fiskai knowledge index --reindex
      fiskai knowledge index --background docs   # searchable now, vectors computed in the background
    """
    note = None if dry_run else _choose_default_model(ctx, reindex)
    waiting = 0
    with opened(ctx, read_only=False) as (store, settings):
        roots = list(paths) or settings.paths
        if not roots:
            raise click.ClickException(
                "no paths given and knowledge.paths is empty - pass a path or set knowledge.paths"
            )
        echo_tier(store)
        if note:
            click.echo(note, err=True)
        draw = sys.stderr.isatty() if progress is None else progress
        try:
            with rag_errors():
                if store.embedder is not None and not dry_run and (reindex or not store.stats().documents):
                    estimate = store.index(roots, reindex=reindex, dry_run=True)
                    click.echo(
                        f"first full build: about to embed {estimate.chunks} chunks across {estimate.files} "
                        "files; run with --dry-run to preview",
                        err=True,
                    )
                # A contextual model indexes lexically first, then embeds (knowledge_vectors).
                later = isinstance(store.embedder, StaticEmbedder) and store.embedder.contextual and not dry_run
                try:
                    stats = index_with_progress(
                        store,
                        roots,
                        reconcile=reconcile,
                        reindex=reindex,
                        dry_run=dry_run,
                        progress=draw,
                        defer_vectors=later,
                    )
                except PathsNotFoundError as err:
                    named = ", ".join(f'"{p}"' for p in err.paths)
                    raise click.ClickException(f"none of the paths to index exist: {named}") from err
        except KeyboardInterrupt:
            click.echo("\nindex canceled; already-indexed files are skipped on re-run", err=True)
            ctx.exit(130)
        for line in stats.notes:
            click.echo(line, err=True)
        click.echo(result_line(stats))
        if later and not background:
            _vector_pass(ctx, store, draw)
        waiting = store.vectors_waiting() if later and background else 0
    if waiting:
        # Spawned after the writer lock is released: the detached pass takes it.
        from fiskai_cli.commands.knowledge_vectors import start_background_pass

        pid, log = start_background_pass(settings.store_dir)
        click.echo(
            f"lexical index ready; embedding {waiting} chunks in the background (pid {pid}; searches are lexical "
            f"until it ends; log: {log})",
            err=True,
        )


def _choose_default_model(ctx: click.Context, reindex: bool) -> str | None:
    """With nothing naming a model, index with a cached one (semantic on by default); else the note why not."""
    settings = knowledge_settings(ctx)
    if settings.semantic is not None or settings.embeddings is not None:
        return None
    from fiskai_cli.commands.knowledge_vectors import default_model

    name, note = default_model(settings.store_dir, reindex=reindex)
    if name is not None:
        ctx.meta[SEMANTIC_KEY] = name  # as if --model NAME was given
    return note


def _vector_pass(ctx: click.Context, store: Store, draw: bool) -> None:
    from fiskai_cli.commands.knowledge_vectors import run_vector_pass

    try:
        with rag_errors():
            embedded = run_vector_pass(store, draw=draw)
    except KeyboardInterrupt:
        click.echo(
            f"\nvector pass stopped ({store.vectors_waiting()} chunks still without vectors); searches stay lexical "
            "until 'fiskai knowledge index' finishes it",
            err=True,
        )
        ctx.exit(130)
    if embedded:
        click.echo(f"vectors: {embedded} chunks embedded; search is hybrid (tier: {tier_of(store)})")
