"""The tags that mean something to fiskai itself; every other tag is free-form."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["TAG_CONFIRM", "TAG_DENY", "TAG_NO_DEFER", "requires_confirmation"]

TAG_DENY = "ai:deny"
"""Never offered to a model, on any face; nothing can add it back."""
TAG_CONFIRM = "ai:confirm"
"""An operator approves each call before it runs."""
TAG_NO_DEFER = "ai:no_defer"
"""Always sent to the model directly, even when the tool set is deferred behind tool search."""


def requires_confirmation(tags: Iterable[str], confirm_tags: Iterable[str] = ()) -> bool:
    """Whether a tool with `tags` must be approved before it runs.

    `ai:confirm` always gates; `confirm_tags` (harness.confirm_tags) add exact-match tags that gate the same way.
    """
    gating = {TAG_CONFIRM, *confirm_tags}
    return any(tag in gating for tag in tags)
