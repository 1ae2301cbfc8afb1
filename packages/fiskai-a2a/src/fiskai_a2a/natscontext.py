"""NATS contexts as the `nats` CLI stores them: where to connect and how to authenticate.

A context is a JSON file `<config>/nats/context/<name>.json`, where `<config>` is `XDG_CONFIG_HOME`
or `~/.config`; `<config>/nats/context.txt` names the selected one. fiskai reads the connection
settings (`url`, `user`/`password`, `token`, `creds`, `nkey`, `user_jwt`, `cert`/`key`/`ca`,
`tls_first`, `inbox_prefix`) and ignores the CLI's display and JetStream settings. Settings it cannot
honor (`nsc` look-ups, a SOCKS proxy, the Windows certificate store) are refused with a clear error
rather than silently connecting some other way. Reading a context imports no NATS library.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from fiskai_a2a.errors import NatsContextError

__all__ = ["DEFAULT_URL", "NatsContext", "context_dir", "load_context", "selected_context"]

DEFAULT_URL = "nats://127.0.0.1:4222"
"""Where a context without a `url` connects, as the nats CLI does."""

_UNSUPPORTED = {
    "nsc": "nsc look-ups",
    "socks_proxy": "a SOCKS proxy",
    "windows_cert_store": "the Windows certificate store",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class NatsContext:
    """Connection settings: a server URL (comma-separated for a cluster) and optional credentials."""

    name: str
    """The context name, or the URL itself for an ad-hoc connection (`--server`)."""
    url: str = DEFAULT_URL
    user: str = ""
    password: str = ""
    token: str = ""
    creds: str = ""
    """Path of a `.creds` file (JWT and seed)."""
    nkey: str = ""
    """Path of an nkey seed file."""
    user_jwt: str = ""
    cert: str = ""
    key: str = ""
    ca: str = ""
    tls_first: bool = False
    inbox_prefix: str = ""
    path: str = ""
    """The file the context was read from; empty for a URL."""

    @classmethod
    def from_url(cls, url: str) -> NatsContext:
        """An ad-hoc context: just a server URL, no credentials."""
        return cls(name=url, url=url)

    def describe(self) -> str:
        """How errors and start-up lines name this connection: `context "x" (nats://...)` or the URL."""
        if self.path:
            return f'NATS context "{self.name}" ({self.url})'
        return self.url

    @property
    def servers(self) -> list[str]:
        """The server URLs, split on commas."""
        return [part.strip() for part in self.url.split(",") if part.strip()]


def context_dir() -> Path:
    """Where the nats CLI keeps its contexts."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "nats"


def selected_context() -> str:
    """The context `nats context select` chose, or "" when none is."""
    try:
        return (context_dir() / "context.txt").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def load_context(name: str = "") -> NatsContext:
    """Read a context by name; the selected context when `name` is empty.

    An absolute path to a context file is read directly. No selection and no name gives the default URL.

    Raises:
        NatsContextError: the name is invalid, the file is missing or not a JSON object, or it asks for
            a setting fiskai cannot honor.
    """
    chosen = name or selected_context()
    if not chosen:
        return NatsContext(name="default", url=DEFAULT_URL)
    if os.path.isabs(chosen) and chosen.endswith(".json"):
        path = Path(chosen)
        label = path.stem
    else:
        if ".." in chosen or os.sep in chosen:
            raise NatsContextError(f'invalid NATS context name "{chosen}": a name has no ".." or "/"')
        path = context_dir() / "context" / f"{chosen}.json"
        label = chosen
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NatsContextError(
            f'unknown NATS context "{label}": no file at {path}; create it with `nats context add {label} '
            "--server URL`, or pass --server URL"
        ) from None
    except OSError as err:
        raise NatsContextError(f'cannot read NATS context "{label}" at {path}: {err.strerror or err}') from None
    try:
        document: object = json.loads(text)
    except ValueError as err:
        raise NatsContextError(f'NATS context "{label}" at {path} is not valid JSON: {err}') from None
    if not isinstance(document, dict):
        raise NatsContextError(f'NATS context "{label}" at {path} is not a JSON object')
    return _from_document(label, path, cast("dict[str, Any]", document))


def _from_document(label: str, path: Path, document: dict[str, Any]) -> NatsContext:
    for key, what in _UNSUPPORTED.items():
        if document.get(key):
            raise NatsContextError(
                f'NATS context "{label}" at {path} uses {what} ("{key}"), which fiskai does not support; '
                "make a context with the resolved url and credentials instead"
            )

    def text(key: str, *, is_path: bool = False) -> str:
        value = document.get(key, "")
        if value is None:
            return ""
        if not isinstance(value, str):
            raise NatsContextError(f'NATS context "{label}" at {path}: "{key}" must be a string')
        value = value.strip()
        return os.path.expanduser(os.path.expandvars(value)) if is_path and value else value

    tls_first = document.get("tls_first", False)
    return NatsContext(
        name=label,
        url=text("url") or DEFAULT_URL,
        user=text("user"),
        password=text("password"),
        token=text("token"),
        creds=text("creds", is_path=True),
        nkey=text("nkey", is_path=True),
        user_jwt=text("user_jwt"),
        cert=text("cert", is_path=True),
        key=text("key", is_path=True),
        ca=text("ca", is_path=True),
        tls_first=tls_first is True,
        inbox_prefix=text("inbox_prefix"),
        path=str(path),
    )
