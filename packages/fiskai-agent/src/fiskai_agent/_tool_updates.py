"""Tools that change during a run (`mcp_clients` with `watch_tools`): swapped in whole between model calls.

`ToolUpdates` is the seam a caller hands the run (`RunOptions.tool_updates`): a counter that moves when
its part of the set changed, the part as it is now, and notices for the operator. Before each model
call the run looks at the counter; when it moved, every entry of the updated kind is replaced by the
new part at once, so the request and the calls of the turn it answers see one set. A batch already
dispatched keeps the entries it was dispatched with (the swap happens only when a request is built).
A new tool whose name another tool holds is left out, with a notice. With the client-side finder the
new tools are sent directly (not deferred); without it they follow the run's deferral decision.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from fiskai_agent._tools import entry_of, tool_def
from fiskai_agent.events import Advisory
from fiskai_core.tools import ToolEntry, ToolKind

if TYPE_CHECKING:
    # The run's state imports the options, which name this seam: only the type checker needs it here.
    from fiskai_agent._prepared import Setup

__all__ = ["ToolUpdates", "apply_tool_updates"]


class ToolUpdates(Protocol):
    """A part of the run's tool set that may change; read from the run's task between model calls.

    Implementations swap their part atomically (a reader never sees half of an update) and must not
    block: every method is called on the run's task just before a request is built.
    """

    @property
    def kind(self) -> ToolKind:
        """The kind of every entry of this part (the run replaces exactly those)."""
        ...

    @property
    def changes(self) -> int:
        """Moves each time the part changed."""
        ...

    def entries(self) -> Sequence[ToolEntry]:
        """The part as it is now."""
        ...

    def take_notices(self) -> list[str]:
        """What the operator should be told since the last call (emptied)."""
        ...


def apply_tool_updates(setup: Setup, updates: ToolUpdates | None, seen: int) -> int:
    """Swap in `updates`' part when its counter moved past `seen`; returns the counter now seen."""
    if updates is None:
        return seen
    events = setup.options.events
    for notice in updates.take_notices():
        events.warn(Advisory(kind="mcp_tools_changed", message=notice))
    changes = updates.changes
    if changes == seen:
        return seen
    kind = updates.kind
    gone = {name for name, entry in setup.entries.items() if entry.kind == kind}
    for name in gone:
        del setup.entries[name]
    setup.deferrable = [entry for entry in setup.deferrable if entry.kind != kind]
    deferring = setup.finder is None and any(d.defer_loading for d in setup.tool_defs)
    added: list[str] = []
    for item in updates.entries():
        name = item.tool.name
        if name in setup.entries:
            events.warn(Advisory(kind="mcp_tools_changed", name=name, message=f'"{name}" is already taken; left out'))
            continue
        entry = entry_of(item, setup.gate.trigger_tag(item.tool.tags))
        setup.entries[name] = entry
        setup.deferrable.append(entry)
        added.append(name)
    fresh = tuple(tool_def(setup.entries[n], defer=deferring and not setup.entries[n].no_defer) for n in added)
    if setup.finder is not None:
        finder = setup.finder
        base = tuple(d for d in finder.base if d.name not in gone) + fresh
        setup.finder = dataclasses.replace(finder, base=base)
    else:
        setup.tool_defs = tuple(d for d in setup.tool_defs if d.name not in gone) + fresh
    return changes
