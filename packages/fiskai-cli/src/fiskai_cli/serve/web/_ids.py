"""Thread ids (what a page names a conversation by) and the journal ids they map to.

A session id is never taken from a caller: it is `w-`, a short hash of the identity, `-`, then the
thread id, so a web caller can only reach journals of this channel and this agent, and the session list
can give each conversation's thread id back (a hash alone could not be reversed). Thread ids are limited
to what a journal name may hold.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

__all__ = ["THREAD_ID", "session_for", "thread_of", "valid_thread"]

THREAD_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a thread id may be: an AI SDK chat id (16 characters) or a UUID fits."""


def _prefix(identity: str) -> str:
    return "w-" + hashlib.sha256(identity.encode()).hexdigest()[:12] + "-"


def valid_thread(thread: object) -> bool:
    """Whether `thread` can name a conversation."""
    return isinstance(thread, str) and THREAD_ID.fullmatch(thread) is not None


def session_for(identity: str, thread: str) -> str:
    """The journal of `thread` for the agent `identity`."""
    return _prefix(identity) + thread


def thread_of(identity: str, session: str) -> str | None:
    """The thread id of a journal of this channel and agent, else None."""
    prefix = _prefix(identity)
    if not session.startswith(prefix):
        return None
    thread = session[len(prefix) :]
    return thread if valid_thread(thread) else None
