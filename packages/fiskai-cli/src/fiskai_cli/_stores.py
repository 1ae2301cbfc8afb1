"""The stores a command opens, each from its typed settings block: run journal, memory, knowledge index.

NATS-backed ones (the JetStream journal, the KV memory) take a connection the harness lends them (one
per command, from `nats_context`); they never connect on their own. Each store's library loads inside
its opener, and a missing extra names the extra to install.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from fiskai_cli._settings import needs_extra, reported, resolve_under, state_home

if TYPE_CHECKING:
    from pathlib import Path

    from fiskai_core.config import EmbeddingsSettings, KnowledgeSettings, MemorySettings, SessionsSettings
    from fiskai_memory import Store as MemoryStore
    from fiskai_rag import Embedder, Store as KnowledgeStore
    from fiskai_runstate import Store as JournalStore

__all__ = [
    "journal_backend",
    "knowledge_directory",
    "knowledge_embedder",
    "knowledge_paths",
    "manifest_embedder",
    "memory_backend",
    "open_journal_store",
    "open_knowledge_store",
    "open_memory_store",
]


def journal_backend(sessions: SessionsSettings | None) -> str:
    """`harness.sessions.backend`, checked: `file` or `jetstream`.

    Raises:
        click.ClickException: an unknown backend.
    """
    try:
        from fiskai_runstate.options import check_backend
    except ImportError as err:
        raise needs_extra("session", "the run journal", err) from err
    with reported():
        return check_backend(sessions.backend if sessions is not None else "")


async def open_journal_store(
    sessions: SessionsSettings | None,
    *,
    folder: Path | None = None,
    state_dir: Path | None = None,
    nats: Any = None,
) -> JournalStore:
    """The run journal store `harness.sessions` names (the file backend in the state home without one).

    Args:
        sessions: The configured block; None means no configuration.
        folder: The configuration's folder, for a relative `options.directory`.
        state_dir: `--state-dir`: the file backend's directory, winning over the configured one.
        nats: The lent NATS connection, for the `jetstream` backend.

    Raises:
        click.ClickException: an unknown backend or option, `--state-dir` with a non-file backend, a missing
            stream, or no NATS connection for the jetstream backend.
    """
    from fiskai_runstate import FileJournalStore
    from fiskai_runstate.options import parse_file_options, parse_jetstream_options

    backend = journal_backend(sessions)
    if sessions is None:
        return FileJournalStore(state_dir or state_home() / "runs")
    if backend == "jetstream":
        if state_dir is not None:
            raise click.ClickException(
                "--state-dir applies only to the file session backend, but harness.sessions.backend is "
                '"jetstream": remove --state-dir, or set harness.sessions.backend to "file"'
            )
        with reported():
            options = parse_jetstream_options(sessions.options)
        if nats is None:
            raise click.ClickException(
                "harness.sessions.backend is jetstream but no NATS connection is configured: set nats_context in "
                "agent.yaml (a context of the nats CLI)"
            )
        try:
            from fiskai_runstate.jetstream import JetStreamJournalStore
        except ImportError as err:
            raise needs_extra("nats", "the jetstream session backend", err) from err
        with reported():
            return await JetStreamJournalStore.bind(nats, options.stream)
    with reported():
        options = parse_file_options(sessions.options)
    if state_dir is not None:
        return FileJournalStore(state_dir)
    if options.directory is None:
        return FileJournalStore(state_home() / "runs")
    return FileJournalStore(resolve_under(options.directory, folder))


def memory_backend(memory: MemorySettings | None) -> str:
    """`harness.memory.backend`, checked: `file` or `jetstream`.

    Raises:
        click.ClickException: an unknown backend.
    """
    try:
        from fiskai_memory import check_backend
    except ImportError as err:
        raise needs_extra("memory", "the memory store", err) from err
    with reported():
        return check_backend(memory.backend if memory is not None else "file")


async def open_memory_store(
    memory: MemorySettings | None, *, identity: str, folder: Path | None = None, nats: Any = None, where: str = ""
) -> tuple[MemoryStore, str]:
    """The memory store `harness.memory` names for `identity`, and a line saying where it is.

    Without a block (or without `options.directory`) the file backend keeps `identity`'s memory in the
    state home (`memory/<identity>`); a relative directory is under the configuration's folder. The
    `jetstream` backend binds a KV bucket over the lent connection (`nats`, described by `where`).

    Raises:
        click.ClickException: an unknown backend or option, an identity unusable as a name, a missing extra,
            or no NATS connection for the jetstream backend.
    """
    from fiskai_memory import FileMemoryStore, parse_kv_options

    options: dict[str, object] = dict(memory.options) if memory is not None else {}
    if memory_backend(memory) == "file":
        with reported():
            store = FileMemoryStore(_memory_directory(options, identity=identity, folder=folder))
        return store, str(store.directory)
    with reported():
        kv = parse_kv_options(options)
    if nats is None:
        raise click.ClickException(
            "harness.memory.backend is jetstream but no NATS connection is configured: set nats_context in "
            "agent.yaml (a context of the nats CLI)"
        )
    try:
        from fiskai_memory.kv import open_kv_store
    except ImportError as err:
        raise needs_extra("nats", "the jetstream memory backend", err) from err
    with reported():
        kv_store = await open_kv_store(
            nats.jetstream(),
            identity=identity,
            bucket=kv.bucket,
            prefix=kv.prefix,
            require_read_before_update=kv.require_read_before_update,
        )
    at = f"{kv_store.prefix}.* in " if kv_store.prefix else ""
    return kv_store, f"{at}KV bucket {kv_store.bucket}" + (f" at {where}" if where else "")


def _memory_directory(options: dict[str, object], *, identity: str, folder: Path | None) -> Path:
    from fiskai_memory import is_valid_key, parse_file_options

    directory = parse_file_options(options).directory
    if directory is not None:
        return resolve_under(directory, folder)
    if not is_valid_key(identity):
        raise click.ClickException(
            f'the agent identity "{identity}" cannot name a memory directory; set identity in the '
            "configuration, or pass --identity or --directory"
        )
    return state_home() / "memory" / identity


def knowledge_directory(knowledge: KnowledgeSettings | None, *, identity: str, folder: Path | None = None) -> Path:
    """Where the knowledge index lives: the state home's `knowledge/<identity>` unless configured elsewhere.

    The original's default, `knowledge/<identity>` (which the configuration fills in when `directory` is
    unset), put state in whatever folder the command ran from; here it means the state home. Any other
    relative `directory` is under the configuration's folder.
    """
    default = state_home() / "knowledge" / identity
    if knowledge is None or not knowledge.directory or knowledge.directory == f"knowledge/{identity}":
        return default
    return resolve_under(knowledge.directory, folder)


def knowledge_paths(knowledge: KnowledgeSettings, *, folder: Path | None = None) -> list[Path]:
    """The configured index roots (`harness.knowledge.paths`), each resolved under the configuration's folder."""
    return [resolve_under(path, folder) for path in knowledge.paths]


def knowledge_embedder(embeddings: EmbeddingsSettings | None, *, download: bool = False) -> Embedder | None:
    """The embedder `harness.knowledge.embeddings` describes; None (lexical only) without the block.

    With a `base_url`, the OpenAI-compatible server client; without one, the in-process static model
    named by `model` (default `potion-base-8M`; the `semantic` extra), loaded on first use and downloaded
    then only when `download` is true (indexing), never inside an agent's or MCP client's search.

    Raises:
        click.ClickException: the `knowledge` extra is missing, or the model name is unknown.
    """
    if embeddings is None:
        return None
    try:
        from fiskai_rag import OpenAICompatibleEmbedder, StaticEmbedder
    except ImportError as err:
        raise needs_extra("knowledge", "the knowledge index", err) from err
    with reported():
        if not embeddings.base_url.strip():
            return StaticEmbedder(embeddings.model, download=download)
        return OpenAICompatibleEmbedder(
            base_url=embeddings.base_url,
            model=embeddings.model,
            api_key_env=embeddings.api_key_env.strip() or None,
            timeout=embeddings.timeout,
            query_prefix=embeddings.query_prefix,
            document_prefix=embeddings.document_prefix,
        )


def open_knowledge_store(
    directory: Path,
    *,
    read_only: bool,
    embedder: Embedder | None = None,
    without_stages: Sequence[str] = (),
    embeddings: EmbeddingsSettings | None = None,
) -> KnowledgeStore:
    """Open the knowledge index in `directory`: read-only for searching, else as its single writer.

    Without an embedder, the index's own tier is used (`_retrieval`): an index built with an in-process
    model (`fiskai knowledge --semantic index`) is opened with that model, one built through an embeddings
    server with the server `embeddings` configures (or, without one, an embedder whose every query
    degrades to lexical with the reason), so one switch at index time makes every later search, pack, MCP
    server and agent hybrid. `without_stages` switches search ranking stages off by name
    (`fiskai knowledge --without-stage`).

    Raises:
        click.ClickException: the `knowledge` extra is missing, or the index cannot be opened.
    """
    try:
        from fiskai_rag import open_store
    except ImportError as err:
        raise needs_extra("knowledge", "the knowledge index", err) from err
    from fiskai_cli._embed_trace import traced

    def searcher(inner: Embedder | None) -> Embedder | None:
        # A searching store's embedding calls are `embeddings` spans; indexing is not instrumented (6.1).
        return traced(inner) if read_only else inner

    with reported():
        store = open_store(directory, read_only=read_only, embedder=searcher(embedder), without_stages=without_stages)
        if embedder is None:
            # A writer never gets the stand-in for an absent server: its index run would fail on it.
            follow = _manifest_embedder(store) or (_server_embedder(store, embeddings) if read_only else None)
            if follow is not None:
                store.close()
                store = open_store(
                    directory, read_only=read_only, embedder=searcher(follow), without_stages=without_stages
                )
        return store


def manifest_embedder(directory: Path) -> Embedder | None:
    """The in-process model the index in `directory` was built with, if any (read without locking)."""
    try:
        from fiskai_rag import RagError, open_store
    except ImportError:
        return None
    try:
        with open_store(directory, read_only=True) as store:
            return _manifest_embedder(store)
    except RagError:
        return None


def _server_embedder(store: KnowledgeStore, embeddings: EmbeddingsSettings | None) -> Embedder | None:
    from fiskai_rag import RagError

    try:
        manifest = store.manifest()
    except RagError:
        return None
    if manifest is None or not manifest.has_vectors:
        return None
    from fiskai_cli._retrieval import server_embedder

    return server_embedder(manifest, embeddings)


def _manifest_embedder(store: KnowledgeStore) -> Embedder | None:
    from fiskai_rag import RagError, StaticEmbedder

    try:
        manifest = store.manifest()
    except RagError:
        return None  # a damaged index stays openable for `reset`
    if manifest is None or not manifest.has_vectors:
        return None
    # Imported only for an index with vectors: the model module pulls in hashlib (OpenSSL), 5 ms of a
    # lexical `knowledge search`.
    from fiskai_rag.models import model_of_identity

    model = model_of_identity(manifest.model)
    # The index's own prompts: queries must be embedded the way its chunks were.
    prompts = (manifest.query_prefix, manifest.document_prefix)
    return StaticEmbedder(model, prompts=prompts) if model is not None else None
