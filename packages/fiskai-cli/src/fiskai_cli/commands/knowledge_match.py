"""`fiskai knowledge match` (aliases `enumerate`, `which`): every document a match query selects.

The command form of the `knowledge_enumerate` tool (reference 7.3): the complete set, not the best few.
"""

from __future__ import annotations

import click

from fiskai_cli._wiring import remedy_text
from fiskai_cli.commands.knowledge import opened, rag_errors
from fiskai_cli.commands.knowledge_search import not_built_at

__all__ = ["match_command"]


@click.command("match")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 1000), default=200, show_default=True, help="Most documents listed.")
@click.option(
    "--min-body-matches",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Only documents with at least this many sections whose text (not heading) matches.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def match_command(ctx: click.Context, query: str, limit: int, min_body_matches: int, fmt: str) -> None:
    """List every indexed document QUERY matches: all of them, not a ranked few.

    Words must all appear in a document; "quoted words" must be adjacent within one section; -word
    excludes documents containing it; body:word and heading:word match only section text or headings.
    Matching is stemmed and case-insensitive. Exit 1 when nothing could be matched (no index, an empty
    index, or a query with no word to look for); no match at all is an empty list.

    \b
    Examples:
      fiskai knowledge match 'stream mirror'
      fiskai knowledge match '"rollback plan" -draft' --format json
      fiskai knowledge which heading:retention --limit 20
    """
    with opened(ctx, read_only=True) as (store, settings), rag_errors():
        result = store.enumerate(query, limit=limit, min_body_matches=min_body_matches)
    if result.status == "index_not_built":
        raise click.ClickException(f"{not_built_at(settings.store_dir)}; {remedy_text('index')}")
    if result.status == "corpus_empty":
        raise click.ClickException(f"the knowledge index at {store.db_path} is empty; {remedy_text('index')}")
    if result.status == "query_empty":
        raise click.ClickException(
            'the query has no word to match; give words, a "quoted phrase", or body:/heading: words'
        )
    if fmt == "json":
        import json

        documents = [
            {
                "path": d.path,
                "title": d.title,
                "citation": f"{d.path}#{d.first}",
                "section": d.heading,
                "sections": d.sections,
            }
            for d in result.documents
        ]
        body = {"matched": result.matched, "truncated": result.truncated, "indexed_documents": result.indexed_documents}
        click.echo(json.dumps({**body, "documents": documents}, ensure_ascii=False, indent=2))
        return
    for doc in result.documents:
        click.echo(f"{doc.path}#{doc.first}\t{doc.sections}\t{doc.title}")
    more = f", {result.matched - len(result.documents)} not listed (--limit)" if result.truncated else ""
    click.echo(f"{result.matched} of {result.indexed_documents} documents match{more}", err=True)
