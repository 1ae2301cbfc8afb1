"""The tags that mean something to fiskai itself; every other tag is free-form."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "TAG_CONFIRM",
    "TAG_DENY",
    "TAG_IDEMPOTENT",
    "TAG_NO_DEFER",
    "requires_confirmation",
    "trigger_tag",
]

MAX_TOOL_NAME_LENGTH = 128
"""The longest tool name model APIs accept (Anthropic: `^[a-zA-Z0-9_-]{1,128}$`); longer ones are refused."""
TAG_DENY = "ai:deny"
"""Never offered to a model, on any face; nothing can add it back."""
TAG_CONFIRM = "ai:confirm"
"""An operator approves each call before it runs."""
TAG_NO_DEFER = "ai:no_defer"
"""Always sent to the model directly, even when the tool set is deferred behind tool search."""
TAG_IDEMPOTENT = "ai:idempotent"
"""Safe to run twice: after a crash, a call interrupted mid-run is run again without asking."""


def trigger_tag(tags: Sequence[str], confirm_tags: Collection[str] = ()) -> str | None:
    """The tag that puts a tool behind the confirm gate: `ai:confirm` first, else its first `confirm_tags` tag.

    `confirm_tags` are `harness.confirm_tags`: exact-match tags that gate like `ai:confirm`.
    """
    if TAG_CONFIRM in tags:
        return TAG_CONFIRM
    return next((tag for tag in tags if tag in confirm_tags), None)


def requires_confirmation(tags: Iterable[str], confirm_tags: Collection[str] = ()) -> bool:
    """Whether a tool with `tags` must be approved before it runs."""
    return trigger_tag(tuple(tags), confirm_tags) is not None
