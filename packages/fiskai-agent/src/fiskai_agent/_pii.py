"""The PII guard on the loop's two entries: each prompt and each tool result (reference 7.4).

It runs after the caller's hooks (`user_prompt_submit`, `post_tool_use`), so what it leaves is what the
model, the journal, the events and telemetry see. A tool result's guard decision is journaled with the
result, among the hook decisions (`{"point": "post_tool_use", "hook": "pii", "decision": "redact" |
"withhold", "counts": {TYPE: n}}`): the fact and the counts per type, never a value. A prompt is journaled
as redacted, so the placeholders in the journaled text are its record.

Not scanned (as the reference lists): the system prompt, the memory index, model replies, model-written
tool arguments (a command result's `command` echoes them, so only its `output` is scanned), and history
restored from a journal (it was scanned when it first entered).

The detector (`fiskai_core.pii`) is imported on first use: compiling its patterns is a cost only a run
that scans pays, never `fiskai --help`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from fiskai_agent.errors import SetupError
from fiskai_agent.events import Advisory, Events
from fiskai_core.hooks import Decisions
from fiskai_core.tools import ToolResult

if TYPE_CHECKING:
    from fiskai_core.pii import PiiMode

__all__ = ["PromptRefused", "check_scanner", "guard_prompt", "guard_result"]


class _Guard:
    """How the journal names the guard among the hooks."""

    name = "pii"


_GUARD = _Guard()


@dataclasses.dataclass(frozen=True, slots=True)
class PromptRefused:
    """A prompt `reject` mode refused; `message` says why and what to do."""

    message: str


def check_scanner(mode: PiiMode) -> None:
    """Build the scanner now: one that will not build fails the run before anything is sent.

    Raises:
        SetupError: The patterns do not compile (a broken installation).
    """
    if mode == "off":
        return
    try:
        from fiskai_core import pii

        pii.find("scanner check: a@example.com")  # importing compiles the patterns; this runs them once
    except Exception as err:  # noqa: BLE001 - any failure to build is the same refusal
        raise SetupError(f"the PII scanner (harness.pii.mode: {mode}) could not be built: {err}") from None


def _listing(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in counts.items())


def guard_prompt(mode: PiiMode, prompt: str, events: Events) -> str | PromptRefused:
    """The prompt the conversation gets (redacted), or the refusal (`reject` mode, or a failed scan)."""
    if mode == "off" or not prompt:
        return prompt
    from fiskai_core.pii import PROMPT_REFUSED, guard

    guarded = guard(prompt, mode)
    if guarded.blocked:
        found = "the scan failed" if guarded.failed else f"found {', '.join(guarded.counts)}"
        return PromptRefused(f"{PROMPT_REFUSED} ({found})")
    if guarded.counts:
        events.warn(Advisory(kind="pii_redacted", message=f"redacted from the prompt: {_listing(guarded.counts)}"))
    return guarded.text


def guard_result(mode: PiiMode, tool: str, result: ToolResult, decisions: Decisions, events: Events) -> ToolResult:
    """The result the model gets: redacted, or withheld with the fixed message; the decision journaled."""
    if mode == "off" or not result.output:
        return result
    from fiskai_core.pii import guard_output

    output, guarded = guard_output(result.output, mode)
    if not guarded.changed:
        return result
    record = guarded.journal()
    decisions.add("post_tool_use", _GUARD, str(record.pop("action")), **record)
    if guarded.blocked:
        found = "the scan failed" if guarded.failed else _listing(guarded.counts)
        events.warn(Advisory(kind="pii_withheld", name=tool, message=f'"{tool}": result withheld ({found})'))
        return dataclasses.replace(result, output=output, is_error=True, truncated=False)
    events.warn(Advisory(kind="pii_redacted", name=tool, message=f'"{tool}": redacted {_listing(guarded.counts)}'))
    return dataclasses.replace(result, output=output)
