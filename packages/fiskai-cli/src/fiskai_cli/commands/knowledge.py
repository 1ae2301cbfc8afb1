"""`fiskai knowledge`: build and inspect the local knowledge index searched by `knowledge_search`.

The group and what its subcommands share: the settings (where the index is, what to index, `top_k`,
the embedder) and the store opener. Each subcommand lives in the module of its concern and loads only
when it runs (`_lazy.LazyGroup`, as the root group does): `knowledge_index` (index), `knowledge_search`
(search, show, sources), `knowledge_admin` (rm, reset, stats, doctor), `knowledge_context`,
`knowledge_eval`, `knowledge_model`, `knowledge_watch`.

Where the index lives (`fiskai_cli._wiring` decides, as for every command):

- with an agent.yaml (`-c/--config`, or `./agent.yaml` when that file exists): `harness.knowledge.directory`,
  a relative one under the configuration file's folder; unset, `$XDG_STATE_HOME/fiskai/knowledge/<identity>`
  (or `<store-dir>/knowledge/<identity>` with `--store-dir`). `harness.knowledge.paths` resolve under the
  file's folder too. `harness.knowledge.enabled` must be true. The file loads through
  `_wiring.load_settings`, like every other command's.
- without one: `$XDG_STATE_HOME/fiskai/knowledge/default` (`<store-dir>/knowledge/default` with
  `--store-dir`). Paths are then passed on the command line, and the configuration loader (pydantic) is
  never imported.

Nothing is created under the working directory. Documents are keyed by their resolved absolute path, so
one index holds any number of folders; each is cited under its folder's name (`docs/design.md#3`).

Deliberate differences from Fisk AI's `knowledge` command: `index` reconciles deletions by default also for
paths given on the command line, but only under the roots it walked (so a subpath walk never prunes
outside it; `--no-reconcile` turns it off); a relative `--store-dir` is resolved against the current
directory instead of being refused; `watch` polls sizes and mtimes every debounce interval instead of
using inotify; the `tier:` line is a diagnostic on stderr; the `rag` and `k` aliases are not registered.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from fiskai_cli._lazy import LazyCommand, LazyGroup
from fiskai_cli._wiring import (
    invocation,
    knowledge_directory,
    knowledge_embedder,
    knowledge_paths,
    load_settings,
    open_knowledge_store as open_store_at,
    remedy_text,
    reported,
    state_home,
)
from fiskai_rag import SEARCH_STAGES, Embedder, RagError, StaticEmbedder, Store

if TYPE_CHECKING:
    from fiskai_core.config import EmbeddingsSettings

__all__ = [
    "SEMANTIC_KEY",
    "KnowledgeSettings",
    "without_stage_option",
    "echo_tier",
    "knowledge",
    "knowledge_settings",
    "open_knowledge_store",
    "opened",
    "rag_errors",
    "settings_embedder",
    "tier_of",
    "when",
    "worded",
]

_EXTRA = "knowledge"
_COMMANDS = {
    "index": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_index:index_command",
        summary="Index Markdown and text files incrementally (.md .markdown .txt .text).",
        extra=_EXTRA,
    ),
    "search": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_search:search_command",
        summary="Search the index; each hit is cited as PATH#ORDINAL (see `knowledge show`).",
        extra=_EXTRA,
    ),
    "match": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_match:match_command",
        summary='List every document a match query selects (words, "phrases", -word, body:, heading:).',
        extra=_EXTRA,
    ),
    "enumerate": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_match:match_command", summary="Alias of match.", extra=_EXTRA
    ),
    "which": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_match:match_command", summary="Alias of match.", extra=_EXTRA
    ),
    "show": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_search:show_command",
        summary="Print the section a citation (PATH#ORDINAL) points at.",
        extra=_EXTRA,
    ),
    "sources": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_search:sources_command",
        summary="List indexed files: citation path, chunk count and when each was last indexed.",
        extra=_EXTRA,
    ),
    "context": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_context:context_command",
        summary="Select the best few indexed sections for QUERY within --budget tokens, with a receipt.",
        extra=_EXTRA,
    ),
    "rm": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_admin:rm_command",
        summary="Remove indexed files by the path `knowledge sources` prints (or their path on disk).",
        extra=_EXTRA,
    ),
    "reset": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_admin:reset_command",
        summary="Delete every indexed document, chunk and vector (works even when the index is damaged).",
        extra=_EXTRA,
    ),
    "stats": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_admin:stats_command",
        summary="Show document, chunk and vector counts and the index's size.",
        extra=_EXTRA,
    ),
    "doctor": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_admin:doctor_command",
        summary="Check the store, the manifest, the embeddings server and the sqlite-vec extension.",
        extra=_EXTRA,
    ),
    "eval": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_eval:eval_command",
        summary="Score the knowledge index against a suite of judged queries.",
        extra=_EXTRA,
    ),
    "model": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_model:model_group",
        summary="List and download the in-process embedding models (the semantic extra).",
        extra=_EXTRA,
    ),
    "watch": LazyCommand(
        import_path="fiskai_cli.commands.knowledge_watch:watch_command",
        summary="Keep the index up to date while files change (polls sizes and mtimes; Ctrl-C stops).",
        extra=_EXTRA,
    ),
}
_STORE_DIR = "fiskai.knowledge.store_dir"
"""`ctx.meta` key of the group's `--store-dir`."""
_SEMANTIC = "fiskai.knowledge.semantic"
"""`ctx.meta` key of the group's `--semantic`/`--model`: the model name ("" for the default)."""
SEMANTIC_KEY = _SEMANTIC
"""The same key for `knowledge index`, which sets it to the cached default model (`knowledge_vectors`)."""
_DEFAULT_MODEL = "potion-base-8M"
"""`fiskai_rag.models.DEFAULT_MODEL`, repeated so `--help` does not import the model module."""


@click.group(cls=LazyGroup, lazy_commands=_COMMANDS)
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
    "directory holding a Model2Vec model or a sentence-transformers BERT encoder (all-MiniLM-L6-v2-int8: far "
    "better at reworded questions, about 100 chunks/s to index on 2 cores; what a plain `knowledge index` uses "
    f"when it is cached). Default with --semantic: {_DEFAULT_MODEL}.",
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


@dataclass(frozen=True, slots=True)
class KnowledgeSettings:
    """What the knowledge commands were configured with (agent.yaml and the group's options)."""

    store_dir: Path
    paths: list[str] = field(default_factory=lambda: list[str]())
    top_k: int = 5
    embeddings: EmbeddingsSettings | None = None
    """`harness.knowledge.embeddings`; None without a configuration or without the block."""
    semantic: str | None = None
    """`--semantic`/`--model`: the in-process model to use instead ("" for the default); None without."""

    @property
    def in_process(self) -> bool:
        """Whether the configured embedder is an in-process model (deterministic vectors), not a server."""
        return self.semantic is not None or (self.embeddings is not None and not self.embeddings.base_url.strip())


def knowledge_settings(ctx: click.Context) -> KnowledgeSettings:
    """The knowledge commands' settings: agent.yaml's knowledge block, read by `load_settings`, and the options."""
    base_text = cast("str | None", ctx.meta.get(_STORE_DIR))
    home = Path(base_text).absolute() if base_text else state_home()
    semantic = cast("str | None", ctx.meta.get(_SEMANTIC))
    given = invocation(ctx)
    if not given.config_explicit and not given.config_path.exists():
        # No configuration: decided before the loader (pydantic) is imported, so a plain search stays fast.
        return KnowledgeSettings(home / "knowledge" / "default", semantic=semantic)
    from fiskai_core.config import Mode

    loaded = load_settings(ctx, Mode.MCP, required=True)
    assert loaded is not None  # required=True raises instead
    config = loaded.config
    block = config.harness.knowledge
    if not block.enabled:
        raise click.ClickException(
            f"knowledge is not enabled in \"{loaded.path}\"; add a harness.knowledge block with 'enabled: true'"
        )
    directory = knowledge_directory(block, identity=config.identity, folder=loaded.folder)
    if base_text and directory == state_home() / "knowledge" / config.identity:
        directory = home / "knowledge" / config.identity
    return KnowledgeSettings(
        directory,
        paths=[str(path) for path in knowledge_paths(block, folder=loaded.folder)],
        top_k=block.top_k,
        embeddings=block.embeddings,
        semantic=semantic,
    )


def settings_embedder(settings: KnowledgeSettings, *, download: bool = False) -> Embedder | None:
    """The embedder the settings name: `--semantic`'s in-process model, else `knowledge_embedder`'s."""
    if settings.semantic is not None:
        # --semantic replaces whatever embeddings agent.yaml names with the in-process model.
        with reported():
            return StaticEmbedder(settings.semantic, download=download)
    return knowledge_embedder(settings.embeddings, download=download)


def worded(err: RagError) -> str:
    """A knowledge-index error and the CLI's words for its remedy."""
    fix = remedy_text(err.remedy)
    return f"{err}; {fix}" if fix else str(err)


rag_errors = reported
"""Every knowledge-index error becomes one line naming the fix (the CLI words the library's `remedy`)."""


def tier_of(store: Store) -> str:
    """The store's search tier, or a note that the index could not be read."""
    with contextlib.suppress(RagError):
        return store.tier()
    return "unknown (the index could not be read)"


def echo_tier(store: Store) -> None:
    """The tier line: a diagnostic on stderr, not a result, so stdout stays clean for scripts."""
    click.echo(f"tier: {tier_of(store)}", err=True)


def when(ns: int | None) -> str:
    """A nanosecond timestamp as local time, or `-` when unknown."""
    if not ns:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ns / 1e9))


@contextlib.contextmanager
def opened(
    ctx: click.Context, *, read_only: bool, without_stages: Sequence[str] = ()
) -> Generator[tuple[Store, KnowledgeSettings]]:
    """The configured store, with its settings; a writer fetches an in-process model first."""
    settings = knowledge_settings(ctx)
    with rag_errors():
        embedder = settings_embedder(settings)
        if isinstance(embedder, StaticEmbedder) and not read_only:
            from fiskai_cli.commands.knowledge_model import fetch_with_progress  # only indexing downloads

            fetch_with_progress(embedder)
    store = open_store_at(
        settings.store_dir,
        read_only=read_only,
        embedder=embedder,
        without_stages=without_stages,
        embeddings=settings.embeddings,
    )
    try:
        yield store, settings
    finally:
        store.close()


@contextlib.contextmanager
def open_knowledge_store(ctx: click.Context, *, without_stages: Sequence[str] = ()) -> Generator[Store]:
    """The configured store opened read-only for `knowledge context`.

    Packs search as every consumer does (`fiskai_cli._retrieval`): an in-process model configured or
    named by --semantic, else the tier the index was built with, through the configured embeddings
    server for a server-built index (degraded to lexical with a note when it is away).
    """
    settings = knowledge_settings(ctx)
    embedder = settings_embedder(settings) if settings.in_process else None
    store = open_store_at(
        settings.store_dir,
        read_only=True,
        embedder=embedder,
        without_stages=without_stages,
        embeddings=settings.embeddings,
    )
    try:
        yield store
    finally:
        store.close()


def without_stage_option(command: Callable[..., None]) -> Callable[..., None]:
    """`--without-stage STAGE` (repeatable) as `without_stages`: search, context and eval take it."""
    return click.option(
        "--without-stage",
        "without_stages",
        multiple=True,
        type=click.Choice(SEARCH_STAGES),
        metavar="STAGE",
        help="Switch a search ranking stage off to see what it does (repeatable). The stages, in the order "
        f"they run: {', '.join(SEARCH_STAGES)}.",
    )(command)
