"""A NATS context as nats-py `connect` keywords, and a failed connection in an operator's words.

The keywords carry the context's credentials, inbox prefix and TLS. Kept apart from
`fiskai_a2a.nats_transport` (the only module that imports nats-py): nothing here touches a connection,
so it needs no NATS import.
"""

from __future__ import annotations

import importlib.util
import os
import ssl
from typing import Any

from .errors import NatsContextError
from .natscontext import NatsContext

__all__ = ["connect_options", "failure_reason"]


def connect_options(context: NatsContext) -> dict[str, Any]:
    """nats-py `connect` keywords for a context's credentials, inbox prefix and TLS.

    Raises:
        NatsContextError: the context needs the `nkeys` package, or its TLS files cannot be loaded.
    """
    options: dict[str, Any] = {}
    if context.user:
        options["user"] = context.user
        options["password"] = context.password
    elif context.creds or context.nkey:
        _need_nkeys(context)
        if context.creds:
            options["user_credentials"] = context.creds
        else:
            options["nkeys_seed"] = context.nkey
    elif context.token:
        options["token"] = context.token
    if context.inbox_prefix:
        options["inbox_prefix"] = context.inbox_prefix
    if context.cert or context.ca or context.tls_first or any(s.startswith("tls://") for s in context.servers):
        options["tls"] = _tls(context)
        options["tls_handshake_first"] = context.tls_first
    return options


def _need_nkeys(context: NatsContext) -> None:
    if importlib.util.find_spec("nkeys") is None:
        raise NatsContextError(
            f"{context.describe()} authenticates with an nkey or a creds file, which needs the `nkeys` package: "
            "pip install nkeys"
        )


def _tls(context: NatsContext) -> ssl.SSLContext:
    try:
        tls = ssl.create_default_context(cafile=context.ca or None)
        if context.cert:
            tls.load_cert_chain(context.cert, context.key or None)
    except (OSError, ssl.SSLError) as err:
        raise NatsContextError(f"{context.describe()}: cannot load its TLS files: {err}") from None
    return tls


def failure_reason(error: BaseException | str) -> str:
    """Why a connection failed, in the words an operator reads (`connection refused`, not `[Errno 111] ...`)."""
    if isinstance(error, OSError) and error.errno:
        return os.strerror(error.errno).lower()
    text = str(error)
    return text or error.__class__.__name__
