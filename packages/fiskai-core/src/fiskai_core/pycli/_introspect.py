"""Describe a Python CLI by running `child/fiskai_child.py` in a child of the app's own interpreter, and cache it.

The child runs `<app python> -I _child.py OUT FRAMEWORK TARGET [PARSER]`: isolated mode (no `PYTHON*`
variables, no user site, neither the cwd nor the script's folder on `sys.path`), in an empty temporary
folder that is also its `HOME` and every `XDG_*` folder (so the app reads none of the operator's
configuration), with only an allowlisted environment (`PATH`, `LANG`, `NO_COLOR=1`, `TERM=dumb`,
`TYPER_STANDARD_TRACEBACK=1`), stdin from `/dev/null`, in its own process group (killed on the time
limit and when it exits), and it writes its JSON to a file the parent names: importing an app may
print. The network is not blocked: importing the app runs its import-time code, as running it would.

The description is cached under `${XDG_CACHE_HOME:-~/.cache}/fiskai/pycli/`, keyed by the interpreter
(path, size, mtime), the target and this child script, and kept while the files it was read from
(the distribution's METADATA, which names its version, and the target module) are unchanged. A cached
start therefore runs no interpreter at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from fiskai_core.errors import CommandError, CommandTimeoutError, IntrospectionError
from fiskai_core.exec import format_seconds
from fiskai_core.exec.blocking import run_blocking

from ._model import DOCUMENT_FORMAT, Framework, PyCliDocument, trusted_document

__all__ = ["CHILD_SCRIPT", "PyCliTarget", "cache_dir", "child_env", "describe_target"]

CHILD_SCRIPT = Path(__file__).with_name("child") / "fiskai_child.py"
"""The introspection script; run by path in the app's interpreter, never imported by fiskai."""
_MAX_STRAY_OUTPUT = 1024 * 1024
_KEPT_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT")


@dataclass(frozen=True, slots=True, kw_only=True)
class PyCliTarget:
    """What to describe and with which interpreter."""

    framework: Framework
    target: str
    """A console-script name or `module:attr`."""
    python: str
    """The app's interpreter (absolute)."""
    parser: str = ""
    """argparse only: a `module:attr` parser factory used instead of trapping the entry point."""

    @property
    def label(self) -> str:
        """How messages name the source (`click: sqlite-utils`)."""
        return f"{self.framework}: {self.target}"


def cache_dir() -> Path:
    """`${XDG_CACHE_HOME:-~/.cache}/fiskai/pycli`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fiskai" / "pycli"


def child_env(home: str) -> dict[str, str]:
    """The allowlisted environment of the introspection child, with `home` as HOME and every XDG folder."""
    env = {name: os.environ[name] for name in _KEPT_ENV if name in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        HOME=home,
        XDG_CONFIG_HOME=home,
        XDG_CACHE_HOME=home,
        XDG_DATA_HOME=home,
        XDG_STATE_HOME=home,
        XDG_RUNTIME_DIR=home,
        NO_COLOR="1",
        TERM="dumb",
        TYPER_STANDARD_TRACEBACK="1",
    )
    return env


def describe_target(target: PyCliTarget, *, timeout: float = 20.0, use_cache: bool = True) -> PyCliDocument:
    """The command tree of `target`, from the cache when still fresh, else from a child process.

    Raises:
        IntrospectionError: the interpreter cannot run, the child times out, or the app cannot be described
            (not found, optparse, an unknown framework, an import error); one line saying which and why.
    """
    key = _cache_key(target)
    cached = cache_dir() / f"{key}.json" if key else None
    if use_cache and cached is not None:
        document = _read_cached(cached)
        if document is not None:
            return document
    document = _run_child(target, timeout=timeout)
    if cached is not None:
        _write_cached(cached, document)
    return document


def _cache_key(target: PyCliTarget) -> str:
    try:
        st = os.stat(target.python)
        script = CHILD_SCRIPT.read_bytes()
    except OSError:
        return ""
    material = [
        DOCUMENT_FORMAT,
        target.framework,
        target.target,
        target.parser,
        os.path.realpath(target.python),
        st.st_size,
        st.st_mtime_ns,
        hashlib.sha256(script).hexdigest(),
    ]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()[:32]


def _read_cached(path: Path) -> PyCliDocument | None:
    try:
        data: object = json.loads(path.read_bytes())
        document = trusted_document(cast("dict[str, Any]", data)) if isinstance(data, dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if document is None or document.format != DOCUMENT_FORMAT:
        return None
    if not document.fingerprint:
        return None  # nothing to tell a stale entry by
    for file, mtime_ns, size in document.fingerprint:
        try:
            st = os.stat(file)
        except OSError:
            return None
        if st.st_mtime_ns != mtime_ns or st.st_size != size:
            return None
    return document


def _write_cached(path: Path, document: PyCliDocument) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(document.model_dump_json())
        os.replace(temp, path)
    except OSError:
        pass  # a cache that cannot be written only costs the next start a child run


def _run_child(target: PyCliTarget, *, timeout: float) -> PyCliDocument:
    label = target.label
    with tempfile.TemporaryDirectory(prefix="fiskai-pycli-") as scratch:
        home = os.path.join(scratch, "home")
        os.mkdir(home)
        out = os.path.join(scratch, "out.json")
        argv = [target.python, "-I", str(CHILD_SCRIPT), out, target.framework, target.target]
        if target.parser:
            argv.append(target.parser)
        try:
            outcome = run_blocking(argv, env=child_env(home), timeout=timeout, limit=_MAX_STRAY_OUTPUT, cwd=home)
        except CommandTimeoutError as err:
            raise IntrospectionError(
                f"introspecting {label} timed out after {format_seconds(timeout)}; its import must finish sooner"
            ) from err
        except CommandError as err:
            raise IntrospectionError(f"introspecting {label}: {err.reason}; check python: in tool_sources") from err
        try:
            raw = Path(out).read_bytes()
        except OSError:
            shown = outcome.output.decode("utf-8", "replace").strip().splitlines()[-1:] or ["nothing"]
            raise IntrospectionError(
                f"introspecting {label} with {target.python}: the child wrote no description "
                f"(exit code {outcome.exit_code}; last output: {shown[0][:200]})"
            ) from None
    try:
        data = json.loads(raw)
    except ValueError as err:
        raise IntrospectionError(f"introspecting {label}: the description is not JSON ({err})") from None
    if isinstance(data, dict) and "error" in data:
        raise IntrospectionError(f"introspecting {label}: {data['error']}")
    try:
        return PyCliDocument.model_validate(data)
    except ValidationError as err:
        raise IntrospectionError(
            f"introspecting {label}: the description does not fit ({err.error_count()} problems, first: "
            f"{err.errors(include_url=False)[0]['msg']})"
        ) from None
