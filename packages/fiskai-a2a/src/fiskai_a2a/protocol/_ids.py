"""Protocol ids, message ids (KSUIDs) and timestamps as the Go original writes them."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import Final

__all__ = [
    "ACK",
    "CANCEL",
    "DISCOVERY_REPLY",
    "DISCOVERY_REQUEST",
    "ERROR",
    "EVENT",
    "NAMESPACE",
    "PROTOCOL_FAMILY",
    "REQUEST",
    "RESULT",
    "TOOL_REPLY",
    "TOOL_REQUEST",
    "new_id",
    "now_rfc3339",
]

PROTOCOL_FAMILY: Final = "io.choria.fisk-ai"
"""Every fisk-ai protocol id starts with this; the next element is the version."""
NAMESPACE: Final = f"{PROTOCOL_FAMILY}.v1"
"""The v1 namespace, also what an agent card lists under `protocols`."""

REQUEST: Final = f"{NAMESPACE}.request"
EVENT: Final = f"{NAMESPACE}.event"
RESULT: Final = f"{NAMESPACE}.result"
ERROR: Final = f"{NAMESPACE}.error"
CANCEL: Final = f"{NAMESPACE}.cancel"
ACK: Final = f"{NAMESPACE}.ack"
TOOL_REQUEST: Final = f"{NAMESPACE}.tool.request"
TOOL_REPLY: Final = f"{NAMESPACE}.tool.reply"
DISCOVERY_REQUEST: Final = f"{NAMESPACE}.discovery.request"
DISCOVERY_REPLY: Final = f"{NAMESPACE}.discovery.reply"

_KSUID_EPOCH = 1_400_000_000
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def new_id() -> str:
    """A KSUID: 27 base62 characters of a 32-bit timestamp and 128 random bits, sortable by time."""
    stamp = max(0, int(time.time()) - _KSUID_EPOCH)
    value = int.from_bytes(stamp.to_bytes(4, "big") + os.urandom(16), "big")
    digits: list[str] = []
    while value:
        value, digit = divmod(value, 62)
        digits.append(_BASE62[digit])
    return "".join(reversed(digits)).rjust(27, "0")


def now_rfc3339() -> str:
    """The current UTC time in RFC 3339 with nanosecond precision trimmed as Go's RFC3339Nano does."""
    now = datetime.now(UTC)
    fraction = f"{now.microsecond:06d}".rstrip("0")
    return now.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"
