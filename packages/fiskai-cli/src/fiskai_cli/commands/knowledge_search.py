"""`fiskai knowledge search`, `show` and `sources`: read the index (loaded only when they run).

The search path imports no pydantic (without a configuration), rich or httpx.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from fiskai_cli._wiring import remedy_text
from fiskai_cli.commands.knowledge import echo_tier, opened, rag_errors, when, without_stage_option, worded
from fiskai_rag import MAX_TOP_K, SearchResult, Store
from fiskai_rag.errors import IndexNotBuiltError

__all__ = ["not_built_at", "search_command", "show_command", "sources_command"]

_SNIPPET_RUNES = 100


def _dumps(document: object) -> str:
    import json  # only --format json needs it; the plain-text search path skips the import

    return json.dumps(document, ensure_ascii=False, indent=2)


def _body(content: str, heading_path: str) -> str:
    """A chunk's text without the heading breadcrumb folded into it."""
    if heading_path and content.startswith(heading_path):
        return content[len(heading_path) :].lstrip("\n")
    return content


def _snippet(content: str, heading_path: str) -> str:
    flat = " ".join(_body(content, heading_path).split())
    return flat if len(flat) <= _SNIPPET_RUNES else flat[: _SNIPPET_RUNES - 1] + "…"


def _search_json(result: SearchResult) -> str:
    document: dict[str, Any] = {"tier": result.tier, "status": result.status}
    if result.note:
        document["note"] = result.note
    document["results"] = [
        {
            "citation": hit.citation,
            **({"section": hit.heading_path} if hit.heading_path else {}),
            "content": hit.content,
            "score": hit.score,
            "file": hit.file,
            # Near-identical copies of this section elsewhere (a page copied across version trees).
            **({"also": list(hit.also), "also_total": hit.also_total} if hit.also else {}),
        }
        for hit in result.hits
    ]
    return _dumps(document)


def _not_built(store: Store) -> str:
    return worded(IndexNotBuiltError(store.db_path))


def not_built_at(store_dir: Path) -> str:
    """Where an index was looked for and not found."""
    return str(IndexNotBuiltError(store_dir / "knowledge.db"))


def _nothing_found(store: Store, result: SearchResult) -> str | None:
    """Why a search could not run (exit 1), or None when it did."""
    if result.status == "index_not_built":
        return _not_built(store)
    if result.status == "index_empty":
        if not store.stats().chunks:
            return f"the knowledge index at {store.db_path} is empty; {remedy_text('index')}"
        return "the query has no searchable terms: use words of two or more letters or digits"
    return None


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option(
    "-k",
    "--top-k",
    type=click.IntRange(1, MAX_TOP_K),
    default=None,
    help=f"How many sections, 1-{MAX_TOP_K} (default: the configured top_k, else 5).",
)
@click.option("--full", is_flag=True, help="Print each section in full instead of a one-line snippet.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@without_stage_option
@click.pass_context
def search_command(
    ctx: click.Context, query: tuple[str, ...], top_k: int | None, full: bool, fmt: str, without_stages: tuple[str, ...]
) -> None:
    """Search the index; each hit is cited as PATH#ORDINAL (see `knowledge show`).

    Exits 1 when nothing could be searched: no index yet, an empty index, or a query without words.

    \b
    Examples:
      fiskai knowledge search how does backpressure work
      fiskai knowledge search -k 10 --full retention policy
      fiskai knowledge search --format json "upgrade steps"
      fiskai knowledge search --without-stage proximity how does backpressure work
    """
    text = " ".join(query)
    if not text.strip():
        raise click.UsageError("QUERY is empty; say what to search for", ctx)
    with opened(ctx, read_only=True, without_stages=without_stages) as (store, settings), rag_errors():
        echo_tier(store)
        result = store.search(text, top_k=top_k if top_k is not None else settings.top_k)
        problem = _nothing_found(store, result)
    if fmt == "json":
        click.echo(_search_json(result))
        if problem:
            click.echo(f"Error: {problem}", err=True)
            ctx.exit(1)
        return
    if problem:
        raise click.ClickException(problem)
    if result.degraded:
        # The stderr tier line above was the configured one; the reason is what tells how to restore it.
        click.echo(f"note: {result.note} ({result.degraded})", err=True)
    if not result.hits:
        click.echo("no results", err=True)
        return
    lines: list[str] = []
    for hit in result.hits:
        lines += ["", hit.citation] if lines else [hit.citation]
        if hit.heading_path:
            lines.append(f"  Section  {hit.heading_path}")
        if hit.also:
            more = hit.also_total - len(hit.also)
            lines.append(f"  Also at  {', '.join(hit.also)}" + (f" (+{more} more)" if more > 0 else ""))
        if full:
            lines += ["  Chunk", *(f"    {line}" for line in hit.content.splitlines())]
        else:
            lines.append(f"  Chunk    {_snippet(hit.content, hit.heading_path)}")
    click.echo("\n".join(lines))


@click.command("show")
@click.argument("citation")
@click.pass_context
def show_command(ctx: click.Context, citation: str) -> None:
    """Print the section a citation (PATH#ORDINAL) points at.

    PATH is the citation path search prints (docs/design.md), the file's absolute path, or a path
    relative to the current folder.

    \b
    Examples:
      fiskai knowledge show docs/design.md#3
      fiskai knowledge show ./README.md#0
    """
    with opened(ctx, read_only=True) as (store, _), rag_errors():
        hit = store.show(citation, base=os.getcwd())
    body = _body(hit.content, hit.heading_path)
    click.echo(f"# {hit.heading_path}\n\n{body}" if hit.heading_path else body)


@click.command("sources")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def sources_command(ctx: click.Context, fmt: str) -> None:
    """List indexed files: citation path, chunk count and when each was last indexed.

    "-" under Last Indexed marks a file indexed by an older fiskai, which did not record it.

    \b
    Examples:
      fiskai knowledge sources
      fiskai knowledge sources --format json
    """
    with opened(ctx, read_only=True) as (store, _), rag_errors():
        sources = store.sources()
    if fmt == "json":
        rows = [
            {
                "path": s.path,
                "file": s.file,
                "chunks": s.chunks,
                "indexed": when(s.indexed_ns) if s.indexed_ns else None,
                "modified": when(s.mtime_ns),
            }
            for s in sources
        ]
        click.echo(_dumps(rows))
        return
    if not sources:
        click.echo("no indexed files", err=True)
        return
    width = max(len("Path"), *(len(s.path) for s in sources))
    lines = [f"{'Path':<{width}}  {'Chunks':>6}  Last Indexed"]
    lines += [f"{s.path:<{width}}  {s.chunks:>6}  {when(s.indexed_ns)}" for s in sources]
    click.echo("\n".join(lines))
