"""The knowledge commands' settings from agent.yaml, validated once and remembered until the file changes.

Validating agent.yaml imports pydantic and the configuration schema: about 100 ms, twice what a lexical
`fiskai knowledge search` costs without a configuration. The figures a knowledge command uses are few
(where the index is, which paths, top_k, the embeddings server), so after the full loader has accepted
a file they are written to a small record in `$XDG_CACHE_HOME/fiskai/knowledge-settings/`, and a later
run rebuilds them from it without pydantic.

A record is used only when its key matches: the file's absolute path and a SHA-256 of its bytes, the
state-home environment the index directory was derived from, the fiskai version, and the name, size and
modification time of every source file of the configuration loader (an upgrade or an edit of the schema
invalidates it). Anything else (no record, a stale or unreadable one, a cache directory that cannot be
written) means the full loader runs, so an invalid file is always reported by the loader itself and a
disabled knowledge block is never remembered.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from fiskai_core.config import Config

__all__ = ["EmbeddingsSpec", "KnowledgeBlock", "block_from_config", "cached_block", "remember_block"]

_FORMAT = 1
"""Bump when the record's fields change."""


@dataclass(frozen=True, slots=True)
class EmbeddingsSpec:
    """`harness.knowledge.embeddings`, as the knowledge commands use it.

    With `base_url`, an OpenAI-compatible server; without it, the in-process static model `model` names.
    """

    base_url: str
    model: str
    api_key_env: str
    timeout_seconds: float
    query_prefix: str
    document_prefix: str

    @property
    def local(self) -> bool:
        """No server: `model` names the in-process static model (`potion-base-8M` when empty)."""
        return not self.base_url.strip()


@dataclass(frozen=True, slots=True)
class KnowledgeBlock:
    """What the knowledge commands take from a validated agent.yaml whose knowledge block is enabled."""

    identity: str
    directory: Path
    """The index directory, as `_wiring.knowledge_directory` resolved it."""
    paths: list[str] = field(default_factory=lambda: list[str]())
    top_k: int = 5
    embeddings: EmbeddingsSpec | None = None


def block_from_config(config: Config, *, directory: Path, paths: list[str]) -> KnowledgeBlock:
    """The record of a configuration the full loader has validated."""
    knowledge = config.harness.knowledge
    spec = knowledge.embeddings
    embeddings = (
        None
        if spec is None
        else EmbeddingsSpec(
            base_url=spec.base_url,
            model=spec.model,
            api_key_env=spec.api_key_env,
            timeout_seconds=spec.timeout.total_seconds(),
            query_prefix=spec.query_prefix,
            document_prefix=spec.document_prefix,
        )
    )
    return KnowledgeBlock(
        identity=config.identity, directory=directory, paths=paths, top_k=knowledge.top_k, embeddings=embeddings
    )


def cached_block(config_path: Path) -> KnowledgeBlock | None:
    """The remembered record for `config_path` when its key still matches, else None."""
    import json

    try:
        key = _key(config_path)
        record = json.loads(_record_path(config_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    fields = cast("dict[str, object]", record)
    if fields.get("key") != key:
        return None
    try:
        return _decode(fields)
    except (KeyError, TypeError, ValueError):
        return None


def remember_block(config_path: Path, block: KnowledgeBlock) -> None:
    """Write the record for `config_path` (best effort: a cache that cannot be written is skipped)."""
    import json

    try:
        key = _key(config_path)
        target = _record_path(config_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        spare = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        spare.write_text(json.dumps({"key": key, **_encode(block)}), encoding="utf-8")
        os.replace(spare, target)
    except OSError:
        return


def _cache_home() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "fiskai" / "knowledge-settings"


def _record_path(config_path: Path) -> Path:
    import hashlib

    name = hashlib.sha256(os.fsencode(config_path.resolve())).hexdigest()[:32]
    return _cache_home() / f"{name}.json"


def _key(config_path: Path) -> str:
    import hashlib

    from fiskai_cli._version import VERSION

    digest = hashlib.sha256()
    for part in (
        str(_FORMAT),
        VERSION,
        os.fspath(config_path.resolve()),
        os.environ.get("XDG_STATE_HOME", ""),
        os.environ.get("HOME", ""),
        *_loader_stamp(),
    ):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(config_path.read_bytes())
    return digest.hexdigest()


def _loader_stamp() -> list[str]:
    import importlib.util

    spec = importlib.util.find_spec("fiskai_core.config")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    stamp: list[str] = []
    for folder in folders:
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    stamp.append(f"{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    if not stamp:
        raise OSError("the configuration loader's sources were not found")
    return stamp


def _encode(block: KnowledgeBlock) -> dict[str, object]:
    spec = block.embeddings
    return {
        "identity": block.identity,
        "directory": os.fspath(block.directory),
        "paths": block.paths,
        "top_k": block.top_k,
        "embeddings": None
        if spec is None
        else {
            "base_url": spec.base_url,
            "model": spec.model,
            "api_key_env": spec.api_key_env,
            "timeout_seconds": spec.timeout_seconds,
            "query_prefix": spec.query_prefix,
            "document_prefix": spec.document_prefix,
        },
    }


def _decode(fields: dict[str, object]) -> KnowledgeBlock:
    paths = fields["paths"]
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in cast("list[object]", paths)):
        raise TypeError("paths")
    raw = fields["embeddings"]
    embeddings: EmbeddingsSpec | None = None
    if raw is not None:
        if not isinstance(raw, dict):
            raise TypeError("embeddings")
        spec = cast("dict[str, object]", raw)
        timeout = spec["timeout_seconds"]
        if not isinstance(timeout, (int, float)):
            raise TypeError("timeout_seconds")
        embeddings = EmbeddingsSpec(
            base_url=_text(spec, "base_url"),
            model=_text(spec, "model"),
            api_key_env=_text(spec, "api_key_env"),
            timeout_seconds=float(timeout),
            query_prefix=_text(spec, "query_prefix"),
            document_prefix=_text(spec, "document_prefix"),
        )
    top_k = fields["top_k"]
    if not isinstance(top_k, int):
        raise TypeError("top_k")
    return KnowledgeBlock(
        identity=_text(fields, "identity"),
        directory=Path(_text(fields, "directory")),
        paths=cast("list[str]", paths),
        top_k=top_k,
        embeddings=embeddings,
    )


def _text(fields: dict[str, object], name: str) -> str:
    value = fields[name]
    if not isinstance(value, str):
        raise TypeError(name)
    return value
