"""The chat row's input history: Up and Down recall earlier messages, the draft is kept aside."""

from __future__ import annotations

__all__ = ["InputHistory"]


class InputHistory:
    """Sent messages, oldest first; consecutive duplicates are stored once."""

    def __init__(self) -> None:
        self._items: list[str] = []
        self._index: int | None = None
        self._draft = ""

    def add(self, text: str) -> None:
        """Remember a sent message and leave browsing."""
        if text.strip() and (not self._items or self._items[-1] != text):
            self._items.append(text)
        self._index = None

    def previous(self, current: str) -> str | None:
        """The message before the one shown (`current` is kept as the draft); None at the oldest."""
        if self._index is None:
            if not self._items:
                return None
            self._draft = current
            self._index = len(self._items)
        if self._index == 0:
            return None
        self._index -= 1
        return self._items[self._index]

    def next(self) -> str | None:
        """The message after the one shown, then the draft again; None when not browsing."""
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(self._items):
            self._index = None
            return self._draft
        return self._items[self._index]
