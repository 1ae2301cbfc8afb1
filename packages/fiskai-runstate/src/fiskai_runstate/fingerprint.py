"""The resume fingerprint: what a run was started with, as hashes and settings, never the prompt text.

A resume must run against the configuration the run was saved with, or the model would continue a
conversation under different tools or instructions. `check_resume` compares a saved fingerprint with the
current one and names every changed field; `force` accepts the changes, except a provider change, which
no saved conversation survives (provider-specific blocks and signatures would be sent to the wrong API).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields
from typing import Any

from .errors import FieldChange, ProviderChangedError, ResumeMismatchError

__all__ = ["Fingerprint", "check_resume", "sha256_json"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Fingerprint:
    """The configuration a run was started with. Field names match the original's wire format."""

    provider: str = ""
    """Neutral provider id, e.g. `anthropic`. A change is never resumable."""
    model: str = ""
    """Model name."""
    system_hash: str = ""
    """Hex SHA-256 of the system blocks at setup (see `sha256_json`)."""
    tools_hash: str = ""
    """Hex SHA-256 of the full tool-definition list, built-ins included."""
    thinking_mode: str = ""
    """`off` or `summarized`."""
    reasoning_effort: str = ""
    """`llm.reasoning_effort` as configured; empty when unset (the wire name is inferred, see docs/builtins.md)."""
    max_tokens: int = 0
    """The run's token budget."""
    max_iterations: int = 0
    """The run's iteration budget."""

    def diff(self, current: Fingerprint) -> tuple[FieldChange, ...]:
        """Every field that differs from `current`, in declaration order, the provider included.

        Args:
            current: The fingerprint of the configuration a resume would use.

        Returns:
            One change per differing field; empty when they match.
        """
        changes: list[FieldChange] = []
        for spec in fields(self):
            old: str | int = getattr(self, spec.name)
            new: str | int = getattr(current, spec.name)
            if old != new:
                changes.append(FieldChange(field=spec.name, old=old, new=new))
        return tuple(changes)


def check_resume(
    saved: Fingerprint, current: Fingerprint, *, run_id: str, force: bool = False
) -> tuple[FieldChange, ...]:
    """Decide whether a saved run may resume under the current configuration.

    Args:
        saved: The fingerprint in the run's meta record.
        current: The fingerprint of the configuration about to resume it.
        run_id: The run, for the error messages.
        force: Accept every change except a provider change.

    Returns:
        The changes `force` accepted (empty when nothing changed), so the caller can report them.

    Raises:
        ProviderChangedError: The provider changed (whatever `force` says).
        ResumeMismatchError: Anything else changed and `force` is false; lists every changed field.
    """
    changes = saved.diff(current)
    for change in changes:
        if change.field == "provider":
            raise ProviderChangedError(run_id, old=saved.provider, new=current.provider)
    if changes and not force:
        raise ResumeMismatchError(run_id, changes)
    return changes


def sha256_json(value: Any) -> str:
    """Hex SHA-256 of the canonical JSON of a value (sorted keys, compact, UTF-8).

    Used for `system_hash` and `tools_hash`, so the fingerprint holds hashes only, never prompt text.

    Args:
        value: Any JSON-serializable value.

    Returns:
        64 lowercase hex digits.
    """
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
