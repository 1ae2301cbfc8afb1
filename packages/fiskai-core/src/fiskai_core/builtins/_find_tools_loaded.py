"""Which deferred tools a run has loaded through `find_tools`, and the refusal for the others.

With client-side tool search, a request carries the tools that are never deferred, `find_tools`, and
every deferred tool a `find_tools` answer has named so far (loaded for the rest of the run, in the order
first found, so the request's tool list only grows at its end). A call to a deferred tool that is not
loaded is refused in-band and nothing runs.

The state is derived from the conversation, not kept beside it: `restore` replays the journaled
`find_tools` answers, so a resumed run loads the same tools in the same order as the run it continues.
"""

from __future__ import annotations

from collections.abc import Iterable

from fiskai_core.tools import ToolResult

from ._find_tools import found_tool_names, not_loaded_result

__all__ = ["DeferredTools"]


class DeferredTools:
    """The deferred tool names of one run and the loaded subset, in the order first found."""

    __slots__ = ("_deferred", "_loaded")

    def __init__(self, deferred: Iterable[str]) -> None:
        """Track `deferred` (the names a request does not carry until found); none is loaded yet."""
        self._deferred = frozenset(deferred)
        self._loaded: dict[str, None] = {}

    def __contains__(self, name: object) -> bool:
        """Whether `name` is a deferred tool (loaded or not)."""
        return name in self._deferred

    @property
    def loaded(self) -> tuple[str, ...]:
        """The deferred tools to send in full, in the order first found."""
        return tuple(self._loaded)

    def load(self, names: Iterable[str]) -> tuple[str, ...]:
        """Load the deferred tools among `names` (a `FindToolsAnswer.found`).

        Returns:
            The newly loaded names, in order; names already loaded or not deferred are skipped (a
            resumed run against a changed application may name tools that no longer exist).
        """
        added: list[str] = []
        for name in names:
            if name in self._deferred and name not in self._loaded:
                self._loaded[name] = None
                added.append(name)
        return tuple(added)

    def restore(self, answers: Iterable[str]) -> tuple[str, ...]:
        """Replay journaled `find_tools` result texts, oldest first; error results name no tool.

        Returns:
            The newly loaded names, in order.
        """
        added: list[str] = []
        for text in answers:
            added.extend(self.load(found_tool_names(text)))
        return tuple(added)

    def refusal(self, name: str) -> ToolResult | None:
        """The in-band error for a call to `name` when it is deferred and not loaded; `None` to proceed."""
        if name in self._deferred and name not in self._loaded:
            return not_loaded_result(name)
        return None
