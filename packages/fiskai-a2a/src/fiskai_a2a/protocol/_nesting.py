"""The nesting cap: how deep a message's JSON may go, checked on the raw bytes before any parser sees them.

Python's JSON decoder recurses once per `[` or `{`, so 100,000 of them (100 KB, well inside the size cap)
raise RecursionError, which is no ValueError: before this check that escaped the codec, and a server
answered an empty 500 with a traceback in its log. Pydantic already refuses values nested past 255
levels; no v1 message needs more than a few dozen (the deepest fisk schema in the NATS CLI's card is
about ten), so 128 leaves room for any real schema or tool input and keeps every layer's recursion small.

The scan is linear and runs in C: JSON strings are cut out first (a string can hold any number of
brackets), then the running depth of the brackets left is summed with `itertools.accumulate`. A message
with no more brackets in all than the cap (every request, most replies) skips the scan; the 221-tool card
of the NATS CLI (180 KB) takes about 2 ms, and the worst 768 KiB message (all one-character strings)
about 90 ms, on the order of what decoding and validating such a message costs anyway.
"""

from __future__ import annotations

import itertools
import re
from array import array
from typing import Final

from fiskai_a2a.errors import MessageValidationError

__all__ = ["MAX_NESTING_DEPTH", "check_nesting"]

MAX_NESTING_DEPTH: Final = 128
"""The deepest a message's arrays and objects may nest (the outermost object is level 1)."""

# A JSON string by the decoder's own rule (so the scan skips exactly what it reads as a string), or an
# unterminated one running to the end: then no `"` is ever scanned twice and the scan stays linear.
_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_OPEN, _CLOSE = 1, 255  # as signed bytes: +1 and -1
_DEPTH_STEPS: Final = bytes(_OPEN if byte in b"[{" else _CLOSE if byte in b"]}" else 0 for byte in range(256))
_NOT_BRACKETS: Final = bytes(byte for byte in range(256) if byte not in b"[]{}")


def check_nesting(data: bytes) -> None:
    """Refuse `data` when its arrays and objects nest deeper than `MAX_NESTING_DEPTH`.

    Raises:
        MessageValidationError: too deep (the message a server answers with code 400).
    """
    if data.count(b"[") + data.count(b"{") <= MAX_NESTING_DEPTH:
        return
    brackets = _STRING.sub(b"", data).translate(_DEPTH_STEPS, _NOT_BRACKETS)
    depth = max(itertools.accumulate(array("b", brackets)), default=0)
    if depth > MAX_NESTING_DEPTH:
        raise MessageValidationError(
            f"invalid message: JSON nested {depth} levels deep, over the limit of {MAX_NESTING_DEPTH}"
        )
