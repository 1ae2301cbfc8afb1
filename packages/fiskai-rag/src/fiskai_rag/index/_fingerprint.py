"""The fingerprint of a chunk, computed at index time and stored, by which `_distinct` finds copies.

Its own module so that search, which only reads stored fingerprints, does not import `hashlib` (and
OpenSSL behind it): 4.5 ms of a `fiskai knowledge search` CLI run. See `_distinct` for what the
fingerprint leaves out and why.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["fingerprint"]

_NOISE = re.compile(rb"[]{<](?:\([^)\s]*\)|\{[<%].*?[%>]\}\}|!--.*?-->)", re.S)
"""A link target `](...)` (its text stays), a Hugo shortcode, an HTML comment."""
_CRUMB = " > "
_SPACE = b" \t\n\r\f\v"


def _noisy(data: bytes) -> bool:
    # Whether `_NOISE` can match, each pattern tested only when its first byte occurs: a one-byte `in` is
    # a memchr, a two-byte one a slower search (on the generated bench corpus, with none of the three,
    # the test took 22 ms of the fingerprints' 56 ms; 7 ms this way).
    return (b"]" in data and b"](" in data) or (b"{" in data and b"{{" in data) or (b"<" in data and b"<!--" in data)


def fingerprint(content: str, root: str = "") -> int | None:
    """A signed 64-bit fingerprint of a chunk's text (breadcrumb and body), or None when no text is left.

    `root`, the front matter title heading the breadcrumb (`ChunkedDocument.root`), is left out: copies
    across product trees keep their sections' headings and text, while their titles name the product
    (`Configure InfluxDB OSS` / `Configure InfluxDB Enterprise v1 data nodes`). A `#` title stays in:
    two pages whose text differs only there are two pages.

    Bytes, `translate` and one regex, as it runs for every chunk of a cold index: on influxdata-docs
    (21 MB of chunks) about 0.17 s where chunking takes 0.45 s, half of it the regex (measured on an
    idle 2-core machine; twice both under load). Tried: case folding inside `translate`'s table instead
    of `.lower()` after it, same prints but slower (influxdata-docs 0.24 -> 0.26 s: a table costs
    `translate` its delete-only path).
    """
    if root and content.startswith(root):
        rest = content[len(root) :]
        if rest.startswith(_CRUMB):
            content = rest[len(_CRUMB) :]
        elif rest.startswith("\n\n"):
            content = rest
    data = content.encode()
    if _noisy(data):
        data = _NOISE.sub(b"", data)
    data = data.translate(None, _SPACE).lower()
    if not data:
        return None
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big", signed=True)  # SQLite's are
