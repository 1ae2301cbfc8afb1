"""`fiskai knowledge rm`, `reset`, `stats` and `doctor`: look after the index (loaded only when they run)."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from fiskai_cli._wiring import manifest_embedder, open_knowledge_store as open_store_at, remedy_text
from fiskai_cli.commands.knowledge import (
    knowledge_settings,
    opened,
    rag_errors,
    settings_embedder,
    tier_of,
    when,
)
from fiskai_cli.commands.knowledge_search import not_built_at
from fiskai_rag import RagError, hybrid_tier

__all__ = ["doctor_command", "reset_command", "rm_command", "stats_command"]


@click.command("rm")
@click.argument("sources", nargs=-1, required=True)
@click.pass_context
def rm_command(ctx: click.Context, sources: tuple[str, ...]) -> None:
    """Remove indexed files by the path `knowledge sources` prints (or their path on disk).

    Exits 1 when any of them was not indexed.

    \b
    Examples:
      fiskai knowledge rm docs/old-design.md
      fiskai knowledge rm ./notes/draft.md /srv/docs/retired.md
    """
    settings = knowledge_settings(ctx)
    if not (settings.store_dir / "knowledge.db").exists():
        raise click.ClickException(f"nothing to remove: {not_built_at(settings.store_dir)}")
    with opened(ctx, read_only=False) as (store, _), rag_errors():
        missing: list[str] = []
        for source in sources:
            if store.remove(source, base=os.getcwd()):
                click.echo(f"removed {source}")
            else:
                missing.append(source)
    if missing:
        raise click.ClickException(
            f"not indexed: {', '.join(missing)} (removed {len(sources) - len(missing)} of {len(sources)}); "
            "`fiskai knowledge sources` lists what is"
        )


@click.command("reset")
@click.option("--force", is_flag=True, help="Really delete the whole index.")
@click.pass_context
def reset_command(ctx: click.Context, force: bool) -> None:
    """Delete every indexed document, chunk and vector (works even when the index is damaged).

    \b
    Examples:
      fiskai knowledge reset            # says what would be deleted
      fiskai knowledge reset --force
    """
    settings = knowledge_settings(ctx)
    db_path = settings.store_dir / "knowledge.db"
    if not db_path.exists():
        click.echo("no knowledge index to reset", err=True)
        return
    # No embedder: reset must work whatever the manifest says and whether or not the server is up.
    with rag_errors(), open_store_at(settings.store_dir, read_only=False) as store:
        if not force:
            try:
                stats = store.stats()
            except RagError:
                raise click.ClickException(
                    f"knowledge reset would delete the damaged index at {db_path}; re-run with --force to confirm"
                ) from None
            raise click.ClickException(
                f"knowledge reset would delete {stats.documents} documents and {stats.chunks} chunks from "
                f"{db_path}; re-run with --force to confirm"
            )
        documents, chunks = store.reset()
    click.echo(f"reset: removed {documents} documents and {chunks} chunks from {db_path}")


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover - the loop always returns


@click.command("stats")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def stats_command(ctx: click.Context, fmt: str) -> None:
    """Show document, chunk and vector counts and the index's size.

    \b
    Examples:
      fiskai knowledge stats
      fiskai knowledge stats --format json
    """
    with opened(ctx, read_only=True) as (store, _), rag_errors():
        stats = store.stats()
        tier = tier_of(store)
    manifest = stats.manifest
    if fmt == "json":
        document: dict[str, Any] = {
            "tier": tier,
            "store": str(stats.db_path),
            "built": stats.built,
            "documents": stats.documents,
            "chunks": stats.chunks,
            "vectors": stats.vectors,
            "model": manifest.model if manifest else "",
            "dimension": manifest.dimension if manifest else 0,
            "normalized": manifest.normalized if manifest else False,
            "db_bytes": stats.db_bytes,
            "wal_bytes": stats.wal_bytes,
            "modified": when(stats.modified_ns) if stats.modified_ns else None,
        }
        click.echo(json.dumps(document, ensure_ascii=False, indent=2))
        return
    store_line = str(stats.db_path) + ("" if stats.built else f" (not built; {remedy_text('index')})")
    rows = [("Tier", tier), ("Store", store_line), ("Documents", str(stats.documents))]
    rows += [("Chunks", str(stats.chunks)), ("Vectors", str(stats.vectors))]
    if manifest is not None and manifest.has_vectors:
        rows += [("Model", manifest.model), ("Dimension", str(manifest.dimension))]
        rows.append(("Normalized", "yes" if manifest.normalized else "no"))
    rows += [("DB size", _size(stats.db_bytes)), ("WAL size", _size(stats.wal_bytes))]
    rows.append(("Modified", when(stats.modified_ns)))
    click.echo("\n".join(f"{name:<10} {value}" for name, value in rows))


@click.command("doctor")
@click.pass_context
def doctor_command(ctx: click.Context) -> None:
    """Check the store, the manifest, the embeddings server and the sqlite-vec extension.

    Exits 1 when a check that makes the index unusable fails.

    \b
    Examples:
      fiskai knowledge doctor
      fiskai -c agent.yaml knowledge doctor
    """
    from fiskai_rag.doctor import diagnose  # only doctor needs the checks

    settings = knowledge_settings(ctx)
    with rag_errors():
        # Without configured embeddings, the in-process model the index was built with (as search uses).
        embedder = settings_embedder(settings) or manifest_embedder(settings.store_dir)
        # The tier line comes from the settings: doctor must run even when the index cannot be opened.
        if embedder is None:
            click.echo("tier: lexical (FTS5) - no embeddings configured", err=True)
        else:
            click.echo(f"tier: {hybrid_tier(embedder)}", err=True)
        checks = diagnose(settings.store_dir, embedder=embedder, paths=settings.paths)
    for check in checks:
        fix = "" if check.ok else remedy_text(check.remedy)
        click.echo(f"  [{' ok ' if check.ok else 'FAIL'}] {check.name}: {check.detail}" + (f"; {fix}" if fix else ""))
    if any(check.fatal and not check.ok for check in checks):
        raise click.ClickException("knowledge doctor found problems that must be fixed")
