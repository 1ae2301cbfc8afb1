"""Journal claims: a second writer reaching a run takes it over, and the first stops at its next append.

Two workers reach the same journal when a queue redelivers work that is still running somewhere (its run time
ran out) or a second worker resumes a session the first has not let go. The later one claims the run before it
starts (`Claimable.claim`); every writer checks, before each append, that the claim is still its own, and a
writer that lost it raises `JournalClaimedError` without writing. Since a run journals a tool's intent before
running it, the writer that lost stops before its next tool call: only a tool already in flight can run twice.

The file backend keeps the claim beside the journal (`<run>.claim`, replaced atomically, holding the owner's
token); each writer takes a fresh token when it creates or opens the run. The owner's token is random, so no
two writers ever share one. The JetStream backend publishes the claim under the run's subjects
(`<prefix>.<run>._claim.<token>`): that advances the run, so the holder's next append fails the
expected-last-sequence fence and is told it was taken over; `load` skips claims. The in-memory test backend
keeps tokens in a dict with the file backend's semantics.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Final, Protocol, runtime_checkable

from .errors import JournalClaimedError

__all__ = ["CLAIM_SUFFIX", "Claimable", "new_owner", "read_claim", "write_claim"]

CLAIM_SUFFIX: Final = ".claim"


@runtime_checkable
class Claimable(Protocol):
    """A store whose runs can be taken over by a later writer (the file, JetStream and in-memory backends)."""

    async def claim(self, run_id: str) -> str:
        """Claim the run for the next writer; the writer holding it now stops before its next append."""
        ...


def new_owner() -> str:
    """A writer's token: 128 random bits, hex."""
    return secrets.token_hex(16)


def write_claim(path: Path, owner: str) -> None:
    """Replace the claim with `owner`, atomically (a reader sees the old token or the new, never a mix)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, owner.encode("ascii"))
    finally:
        os.close(fd)
    try:
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def read_claim(path: Path) -> str | None:
    """The token holding the run, or None when no claim was ever written (a journal from before claims)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        return os.read(fd, 256).decode("ascii", "replace")
    finally:
        os.close(fd)


def check_claim(path: Path, owner: str, run_id: str) -> None:
    """Raises JournalClaimedError when another writer claimed the run since `owner` took it."""
    holder = read_claim(path)
    if holder is not None and holder != owner:
        raise JournalClaimedError(run_id)
