"""Approval state for the 2026-07-28 round trip: sealed, bound to one call, single-use, short-lived.

Under protocol 2026-07-28 the server cannot ask the client mid-call; it answers `InputRequiredResult`
with an opaque `requestState` and the client calls the tool again with the user's answer and that state
echoed back. The state crosses the client, so it is attacker-controlled: a token is an HMAC (under a key
made when the process starts) over a fresh nonce, the tool name, a digest of the exact arguments and an
expiry. Redeeming checks all four and forgets the nonce, so a token approves one call with those
arguments, once, within its lifetime; a restart invalidates every outstanding token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

__all__ = ["ApprovalStates", "arguments_digest"]

_PREFIX = "fiskai-approval-v1"
_MAX_OUTSTANDING = 4096
"""Tokens kept waiting for an answer; beyond this the oldest are forgotten (and so refused)."""


def arguments_digest(arguments: Mapping[str, Any] | None) -> str:
    """A digest of arguments that does not depend on key order."""
    canonical = json.dumps(arguments or {}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ApprovalStates:
    """Mints and redeems approval tokens for one server process."""

    def __init__(self, *, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        """Make a fresh key.

        Args:
            ttl: Seconds a token stays redeemable; the user answers within it.
            clock: Monotonic seconds (a parameter so tests can step time without sleeping).
        """
        self._key = os.urandom(32)
        self._ttl = ttl
        self._clock = clock
        self._outstanding: dict[str, float] = {}

    def mint(self, name: str, arguments: Mapping[str, Any] | None) -> str:
        """A token approving nothing yet: it names the call an answer will be for."""
        now = self._clock()
        self._forget_expired(now)
        while len(self._outstanding) >= _MAX_OUTSTANDING:
            del self._outstanding[next(iter(self._outstanding))]
        nonce = _b64(os.urandom(16))
        expires = now + self._ttl
        self._outstanding[nonce] = expires
        body = _b64(json.dumps({"n": nonce, "t": name, "a": arguments_digest(arguments)}).encode())
        return f"{_PREFIX}.{body}.{_b64(self._mac(body))}"

    def redeem(self, token: str | None, name: str, arguments: Mapping[str, Any] | None) -> bool:
        """Whether `token` was minted here for exactly this call and is still unused and unexpired.

        A token that verifies is used up whatever the answer it came with, so it can never be replayed.
        """
        if not token:
            return False
        prefix, _, rest = token.partition(".")
        body, _, mac = rest.partition(".")
        if prefix != _PREFIX or not body or not mac:
            return False
        try:
            given = _unb64(mac)
            claims: object = json.loads(_unb64(body))
        except ValueError:
            return False
        if not hmac.compare_digest(given, self._mac(body)) or not isinstance(claims, dict):
            return False
        fields = cast("dict[str, object]", claims)
        nonce = fields.get("n")
        if not isinstance(nonce, str):
            return False
        expires = self._outstanding.pop(nonce, None)
        if expires is None or self._clock() >= expires:
            return False
        return fields.get("t") == name and fields.get("a") == arguments_digest(arguments)

    @property
    def outstanding(self) -> int:
        """Tokens minted and neither redeemed nor forgotten."""
        return len(self._outstanding)

    def _mac(self, body: str) -> bytes:
        return hmac.new(self._key, f"{_PREFIX}.{body}".encode(), hashlib.sha256).digest()

    def _forget_expired(self, now: float) -> None:
        for nonce in [nonce for nonce, expires in self._outstanding.items() if expires <= now]:
            del self._outstanding[nonce]
