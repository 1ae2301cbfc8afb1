"""An index run with a progress bar on a terminal: `knowledge index` and `knowledge eval` draw the same one.

Rich is imported only when the bar is drawn; a run without a terminal reports nothing until it ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fiskai_rag import IndexStats, Store

__all__ = ["index_with_progress"]


def index_with_progress(
    store: Store,
    roots: list[str],
    *,
    progress: bool,
    reconcile: bool = False,
    reindex: bool = False,
    dry_run: bool = False,
    defer_vectors: bool = False,
) -> IndexStats:
    """`store.index(roots, ...)`, drawing files done, elapsed and remaining time on stderr when `progress`."""
    if not progress:
        return store.index(roots, reconcile=reconcile, reindex=reindex, dry_run=dry_run, defer_vectors=defer_vectors)
    import time

    from rich.console import Console  # only the interactive index path draws
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("index", total=None)
        drawn = [0.0]

        def report(done: int, total: int, _key: str) -> None:
            # Ten updates a second at most: a lexical run reports thousands of files a second, a run
            # with a contextual model one batch every few seconds, and both should move the bar.
            now = time.monotonic()
            if done == total or now - drawn[0] >= 0.1:
                drawn[0] = now
                bar.update(task, completed=done, total=total)

        return store.index(
            roots, reconcile=reconcile, reindex=reindex, dry_run=dry_run, progress=report, defer_vectors=defer_vectors
        )
