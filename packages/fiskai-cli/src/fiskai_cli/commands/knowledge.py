"""`fiskai knowledge`: build and inspect the local knowledge index searched by `knowledge_search`.

Where the index lives (`fiskai_cli._wiring` decides, as for every command):

- with an agent.yaml (`-c/--config`, or `./agent.yaml` when that file exists): `harness.knowledge.directory`,
  a relative one under the configuration file's folder; unset, `$XDG_STATE_HOME/fiskai/knowledge/<identity>`
  (or `<store-dir>/knowledge/<identity>` with `--store-dir`). `harness.knowledge.paths` resolve under the
  file's folder too. `harness.knowledge.enabled` must be true.
- without one: `$XDG_STATE_HOME/fiskai/knowledge/default` (`<store-dir>/knowledge/default` with
  `--store-dir`). Paths are then passed on the command line.

Nothing is created under the working directory. Documents are keyed by their resolved absolute path, so
one index holds any number of folders; each is cited under its folder's name (`docs/design.md#3`).

Deliberate differences from Fisk AI's `knowledge` command: `index` reconciles deletions by default also for
paths given on the command line, but only under the roots it walked (so a subpath walk never prunes
outside it; `--no-reconcile` turns it off); a relative `--store-dir` is resolved against the current
directory instead of being refused; `watch` polls sizes and mtimes every debounce interval instead of
using inotify; the `tier:` line is a diagnostic on stderr; the `rag` and `k` aliases are not registered.

The search path imports no pydantic, rich or httpx: with a configuration, the file loads through
`_wiring.load_settings` like every other command's the first time, and its knowledge settings are then
remembered until the file changes (`knowledge_settings`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from fiskai_cli._wiring import (
    invocation,
    knowledge_directory,
    knowledge_paths,
    load_settings,
    manifest_embedder,
    open_knowledge_store as open_store_at,
    remedy_text,
    reported,
    state_home,
)
from fiskai_cli.commands.index_progress import index_with_progress
from fiskai_cli.commands.knowledge_settings import (
    EmbeddingsSpec,
    KnowledgeBlock,
    block_from_config,
    cached_block,
    remember_block,
)
from fiskai_rag import (
    MAX_TOP_K,
    Embedder,
    OpenAICompatibleEmbedder,
    RagError,
    SearchResult,
    StaticEmbedder,
    Store,
    hybrid_tier,
)
from fiskai_rag.errors import IndexNotBuiltError, PathsNotFoundError

if TYPE_CHECKING:
    from typing_extensions import override

    from fiskai_rag import IndexStats
else:  # typing_extensions costs import time on the search path; the decorator only matters to pyright

    def override(func: Any) -> Any:
        return func


__all__ = ["knowledge", "open_knowledge_store"]

_LAZY_COMMANDS = {
    "eval": ("fiskai_cli.commands.knowledge_eval", "eval_command"),
    "context": ("fiskai_cli.commands.knowledge_context", "context_command"),
    "model": ("fiskai_cli.commands.knowledge_model", "model_group"),
    "watch": ("fiskai_cli.commands.knowledge_watch", "watch_command"),
}
_SNIPPET_RUNES = 100
_STORE_DIR = "fiskai.knowledge.store_dir"
"""`ctx.meta` key of the group's `--store-dir`."""
_SEMANTIC = "fiskai.knowledge.semantic"
"""`ctx.meta` key of the group's `--semantic`/`--model`: the model name ("" for the default)."""
_DEFAULT_MODEL = "potion-base-8M"
"""`fiskai_rag.models.DEFAULT_MODEL`, repeated so `--help` does not import the model module."""


@dataclass(frozen=True, slots=True)
class _Settings:
    store_dir: Path
    paths: list[str] = field(default_factory=lambda: [])
    top_k: int = 5
    embeddings: EmbeddingsSpec | None = None


class _KnowledgeGroup(click.Group):
    """The knowledge group; `eval` and `context` are imported only when they run.

    `eval` needs YAML and the eval metrics, `context` the pack modules; search needs neither.
    """

    @override
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    @override
    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _LAZY_COMMANDS:
            return super().get_command(ctx, cmd_name)
        import importlib  # deferred: see the class docstring

        module, attribute = _LAZY_COMMANDS[cmd_name]
        try:
            command = getattr(importlib.import_module(module), attribute, None)
        except ImportError as err:
            message = f"`fiskai knowledge {cmd_name}` is unavailable: {err}"

            def unavailable() -> None:
                raise click.ClickException(message)

            return click.Command(cmd_name, callback=unavailable, help=message)
        return command if isinstance(command, click.Command) else None


@click.group(cls=_KnowledgeGroup)
@click.option(
    "--store-dir",
    type=click.Path(file_okay=False),
    envvar="FISKAI_STORE_DIR",
    default=None,
    help="Base directory for fiskai state (env FISKAI_STORE_DIR); the index is <store-dir>/knowledge/<identity> "
    "unless harness.knowledge.directory says otherwise. Default: $XDG_STATE_HOME/fiskai.",
)
@click.option(
    "--semantic",
    is_flag=True,
    envvar="FISKAI_KNOWLEDGE_SEMANTIC",
    help="Add the in-process embedding model (hybrid search, no server; the semantic extra). Needed once, "
    "when indexing: later commands follow the model the index was built with.",
)
@click.option(
    "--model",
    "model_name",
    metavar="NAME|DIR",
    envvar="FISKAI_KNOWLEDGE_MODEL",
    default=None,
    help=f"The in-process model for --semantic (implies it): a known name (knowledge model list) or a "
    "directory holding a Model2Vec model or a sentence-transformers BERT encoder (all-MiniLM-L6-v2: far "
    f"better at reworded questions, 15-20 chunks/s to index on 2 cores). Default: {_DEFAULT_MODEL}.",
)
@click.pass_context
def knowledge(ctx: click.Context, store_dir: str | None, semantic: bool, model_name: str | None) -> None:
    """Build and inspect the local knowledge base for the knowledge_search tool.

    \b
    Examples:
      fiskai knowledge index docs
      fiskai knowledge search how does backpressure work
      fiskai knowledge --semantic index docs     # hybrid from now on: downloads the model once
      fiskai -c agent.yaml knowledge index
    """
    ctx.meta[_STORE_DIR] = store_dir
    if semantic or model_name:
        ctx.meta[_SEMANTIC] = model_name or ""


# -- settings --------------------------------------------------------------------------------------


def _settings(ctx: click.Context) -> _Settings:
    settings = _configured(ctx)
    semantic = cast("str | None", ctx.meta.get(_SEMANTIC))
    if semantic is None:
        return settings
    # --semantic replaces whatever embeddings agent.yaml names with the in-process model.
    local = EmbeddingsSpec(
        base_url="", model=semantic, api_key_env="", timeout_seconds=30.0, query_prefix="", document_prefix=""
    )
    return _Settings(store_dir=settings.store_dir, paths=settings.paths, top_k=settings.top_k, embeddings=local)


def _configured(ctx: click.Context) -> _Settings:
    base_text = cast("str | None", ctx.meta.get(_STORE_DIR))
    home = Path(base_text).absolute() if base_text else state_home()
    given = invocation(ctx)
    if not given.config_explicit and not given.config_path.exists():
        # No configuration: decided without importing the config loader (pydantic), so a plain
        # `knowledge search` stays fast.
        return _Settings(store_dir=home / "knowledge" / "default")
    block = cached_block(given.config_path)
    if block is None:
        block = _validated_block(ctx)
    directory = block.directory
    if base_text and directory == state_home() / "knowledge" / block.identity:
        directory = home / "knowledge" / block.identity
    return _Settings(store_dir=directory, paths=block.paths, top_k=block.top_k, embeddings=block.embeddings)


def _validated_block(ctx: click.Context) -> KnowledgeBlock:
    """The full loader's verdict on agent.yaml (pydantic), remembered when the knowledge block is enabled."""
    from fiskai_core.config import Mode

    settings = load_settings(ctx, Mode.MCP, required=True)
    assert settings is not None  # required=True raises instead
    config = settings.config
    knowledge = config.harness.knowledge
    if not knowledge.enabled:
        raise click.ClickException(
            f"knowledge is not enabled in \"{settings.path}\"; add a harness.knowledge block with 'enabled: true'"
        )
    block = block_from_config(
        config,
        directory=knowledge_directory(knowledge, identity=config.identity, folder=settings.folder),
        paths=[str(p) for p in knowledge_paths(knowledge, folder=settings.folder)],
    )
    remember_block(settings.path, block)
    return block


def _dumps(document: object) -> str:
    import json  # only --format json needs it; the plain-text search path skips the import

    return json.dumps(document, ensure_ascii=False, indent=2)


def _embedder(settings: _Settings, *, download: bool = False) -> Embedder | None:
    spec = settings.embeddings
    if spec is None:
        return None
    if spec.local:
        return StaticEmbedder(spec.model, download=download)
    return OpenAICompatibleEmbedder(
        base_url=spec.base_url,
        model=spec.model,
        api_key_env=spec.api_key_env or None,
        timeout=spec.timeout_seconds,
        query_prefix=spec.query_prefix,
        document_prefix=spec.document_prefix,
    )


def _worded(err: RagError) -> str:
    fix = remedy_text(err.remedy)
    return f"{err}; {fix}" if fix else str(err)


_rag_errors = reported
"""Every knowledge-index error becomes one line naming the fix (the CLI words the library's `remedy`)."""


def _echo_tier(store: Store) -> None:
    # A diagnostic, not a result: stdout stays clean for scripts.
    click.echo(f"tier: {_tier(store)}", err=True)


@contextlib.contextmanager
def _open(ctx: click.Context, *, read_only: bool) -> Generator[tuple[Store, _Settings]]:
    settings = _settings(ctx)
    with _rag_errors():
        embedder = _embedder(settings)
        if isinstance(embedder, StaticEmbedder) and not read_only:
            _fetch(embedder)
    store = open_store_at(settings.store_dir, read_only=read_only, embedder=embedder)
    try:
        yield store, settings
    finally:
        store.close()


def _fetch(embedder: StaticEmbedder) -> None:
    """Download the in-process model before indexing, with a progress bar when stderr is a terminal."""
    from fiskai_cli.commands.knowledge_model import fetch_with_progress

    fetch_with_progress(embedder)


@contextlib.contextmanager
def open_knowledge_store(ctx: click.Context) -> Generator[Store]:
    """The configured store opened read-only for `knowledge context`.

    Packs use vectors only from an in-process static model (configured, --semantic, or the one the index
    was built with), whose vectors are deterministic; an embeddings server's are not, so with a server
    packs stay lexical and its client never loads.
    """
    settings = _settings(ctx)
    embedder = _embedder(settings) if settings.embeddings is not None and settings.embeddings.local else None
    store = open_store_at(settings.store_dir, read_only=True, embedder=embedder)
    try:
        yield store
    finally:
        store.close()


def _tier(store: Store) -> str:
    with contextlib.suppress(RagError):
        return store.tier()
    return "unknown (the index could not be read)"


# -- index -----------------------------------------------------------------------------------------


def _result_line(stats: IndexStats) -> str:
    head = "would index" if stats.dry_run else "indexed"
    tail = f", {stats.embeddings} embeddings" if stats.embeddings else ""
    return (
        f"{head}: added={stats.added} updated={stats.updated} skipped={stats.skipped} removed={stats.removed} "
        f"({stats.files} files, {stats.chunks} chunks{tail})"
    )


@knowledge.command("index")
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
@click.pass_context
def index_command(
    ctx: click.Context, paths: tuple[str, ...], reindex: bool, dry_run: bool, reconcile: bool, progress: bool | None
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
    """
    with _open(ctx, read_only=False) as (store, settings):
        roots = list(paths) or settings.paths
        if not roots:
            raise click.ClickException(
                "no paths given and knowledge.paths is empty - pass a path or set knowledge.paths"
            )
        _echo_tier(store)
        draw = sys.stderr.isatty() if progress is None else progress
        try:
            with _rag_errors():
                if store.embedder is not None and not dry_run and (reindex or not store.stats().documents):
                    estimate = store.index(roots, reindex=reindex, dry_run=True)
                    click.echo(
                        f"first full build: about to embed {estimate.chunks} chunks across {estimate.files} "
                        "files; run with --dry-run to preview",
                        err=True,
                    )
                try:
                    stats = index_with_progress(
                        store, roots, reconcile=reconcile, reindex=reindex, dry_run=dry_run, progress=draw
                    )
                except PathsNotFoundError as err:
                    named = ", ".join(f'"{p}"' for p in err.paths)
                    raise click.ClickException(f"none of the paths to index exist: {named}") from err
        except KeyboardInterrupt:
            click.echo("\nindex canceled; already-indexed files are skipped on re-run", err=True)
            ctx.exit(130)
        for note in stats.notes:
            click.echo(note, err=True)
        click.echo(_result_line(stats))


# -- search / show / sources -----------------------------------------------------------------------


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
    return _worded(IndexNotBuiltError(store.db_path))


def _not_built_at(store_dir: Path) -> str:
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


@knowledge.command("search")
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
@click.pass_context
def search_command(ctx: click.Context, query: tuple[str, ...], top_k: int | None, full: bool, fmt: str) -> None:
    """Search the index; each hit is cited as PATH#ORDINAL (see `knowledge show`).

    Exits 1 when nothing could be searched: no index yet, an empty index, or a query without words.

    \b
    Examples:
      fiskai knowledge search how does backpressure work
      fiskai knowledge search -k 10 --full retention policy
      fiskai knowledge search --format json "upgrade steps"
    """
    text = " ".join(query)
    if not text.strip():
        raise click.UsageError("QUERY is empty; say what to search for", ctx)
    with _open(ctx, read_only=True) as (store, settings), _rag_errors():
        _echo_tier(store)
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


@knowledge.command("show")
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
    with _open(ctx, read_only=True) as (store, _), _rag_errors():
        hit = store.show(citation, base=os.getcwd())
    body = _body(hit.content, hit.heading_path)
    click.echo(f"# {hit.heading_path}\n\n{body}" if hit.heading_path else body)


def _when(ns: int | None) -> str:
    if not ns:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ns / 1e9))


@knowledge.command("sources")
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
    with _open(ctx, read_only=True) as (store, _), _rag_errors():
        sources = store.sources()
    if fmt == "json":
        rows = [
            {
                "path": s.path,
                "file": s.file,
                "chunks": s.chunks,
                "indexed": _when(s.indexed_ns) if s.indexed_ns else None,
                "modified": _when(s.mtime_ns),
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
    lines += [f"{s.path:<{width}}  {s.chunks:>6}  {_when(s.indexed_ns)}" for s in sources]
    click.echo("\n".join(lines))


# -- rm / reset / stats / doctor -------------------------------------------------------------------


@knowledge.command("rm")
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
    settings = _settings(ctx)
    if not (settings.store_dir / "knowledge.db").exists():
        raise click.ClickException(f"nothing to remove: {_not_built_at(settings.store_dir)}")
    with _open(ctx, read_only=False) as (store, _), _rag_errors():
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


@knowledge.command("reset")
@click.option("--force", is_flag=True, help="Really delete the whole index.")
@click.pass_context
def reset_command(ctx: click.Context, force: bool) -> None:
    """Delete every indexed document, chunk and vector (works even when the index is damaged).

    \b
    Examples:
      fiskai knowledge reset            # says what would be deleted
      fiskai knowledge reset --force
    """
    settings = _settings(ctx)
    db_path = settings.store_dir / "knowledge.db"
    if not db_path.exists():
        click.echo("no knowledge index to reset", err=True)
        return
    # No embedder: reset must work whatever the manifest says and whether or not the server is up.
    with _rag_errors(), open_store_at(settings.store_dir, read_only=False) as store:
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


@knowledge.command("stats")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def stats_command(ctx: click.Context, fmt: str) -> None:
    """Show document, chunk and vector counts and the index's size.

    \b
    Examples:
      fiskai knowledge stats
      fiskai knowledge stats --format json
    """
    with _open(ctx, read_only=True) as (store, _), _rag_errors():
        stats = store.stats()
        tier = _tier(store)
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
            "modified": _when(stats.modified_ns) if stats.modified_ns else None,
        }
        click.echo(_dumps(document))
        return
    store_line = str(stats.db_path) + ("" if stats.built else f" (not built; {remedy_text('index')})")
    rows = [("Tier", tier), ("Store", store_line), ("Documents", str(stats.documents))]
    rows += [("Chunks", str(stats.chunks)), ("Vectors", str(stats.vectors))]
    if manifest is not None and manifest.has_vectors:
        rows += [("Model", manifest.model), ("Dimension", str(manifest.dimension))]
        rows.append(("Normalized", "yes" if manifest.normalized else "no"))
    rows += [("DB size", _size(stats.db_bytes)), ("WAL size", _size(stats.wal_bytes))]
    rows.append(("Modified", _when(stats.modified_ns)))
    click.echo("\n".join(f"{name:<10} {value}" for name, value in rows))


@knowledge.command("doctor")
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

    settings = _settings(ctx)
    with _rag_errors():
        # Without configured embeddings, the in-process model the index was built with (as search uses).
        embedder = _embedder(settings) or manifest_embedder(settings.store_dir)
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
