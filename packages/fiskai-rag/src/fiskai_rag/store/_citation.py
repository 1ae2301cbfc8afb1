"""The citation token: `<path>#<ordinal>`, naming one chunk of one indexed document.

`path` is the document's citation path (see `_labels`): its indexed root's folder name joined with the
file's path inside that root (`docs/design.md`), or an absolute path where that name was taken. The
ordinal is the chunk's 0-based position in the document. The last `#` separates the two, so a path
may itself contain `#`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fiskai_rag.errors import CitationError

if TYPE_CHECKING:
    from typing_extensions import override
else:  # fiskai-rag depends on apsw only; the decorator matters to pyright alone

    def override(func: Any) -> Any:
        return func


__all__ = ["MAX_ORDINAL", "Citation"]

MAX_ORDINAL = 2**63 - 1
"""SQLite's largest integer; a larger ordinal can name no chunk."""


@dataclass(frozen=True, slots=True, order=True)
class Citation:
    """One chunk's address: `Citation("docs/design.md", 3)` prints as `docs/design.md#3`."""

    path: str
    ordinal: int

    @classmethod
    def parse(cls, text: str) -> Citation:
        """Read a citation token.

        Raises:
            CitationError: The text has no `#<ordinal>` suffix, an empty path, or an ordinal that is not
                a non-negative decimal integer SQLite can hold.
        """
        parsed = cls.try_parse(text)
        if parsed is None:
            raise CitationError(text)
        return parsed

    @classmethod
    def try_parse(cls, text: str) -> Citation | None:
        """The citation `text` names, or None when it is not one (a plain path, a malformed token)."""
        path, sep, ordinal = text.rpartition("#")
        if not sep or not path or not ordinal.isascii() or not ordinal.isdigit():
            return None
        # Digits only, so the length bounds the value before int() does any work on hostile input.
        if len(ordinal) > 19 or int(ordinal) > MAX_ORDINAL:
            return None
        return cls(path, int(ordinal))

    @override
    def __str__(self) -> str:
        return f"{self.path}#{self.ordinal}"
