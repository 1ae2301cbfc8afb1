"""The approval rules file: its YAML layout, read and written through the owner-only file checks.

    # Approval rules for agent 'fixturectl'; manage them with `fiskai approvals`.
    version: 1
    rules:
    - tool: cluster_node_drain
      patterns: [--reason=*, '@1=n*']
      tags: [ai:confirm, impact:rw]
      added: '2026-01-02T03:04:05Z'

Besides the file checks (`_file`) and its size cap, the file may hold at most `MAX_PATTERNS` patterns
in all (a YAML alias counts once per use), so a small file of aliases cannot make fiskai build millions
of rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

import yaml

from fiskai_core.tools import TAG_DENY

from ._errors import RuleError
from ._file import read_owned, write_owned
from ._rules import TOOL_NAME, ApprovalRule

__all__ = ["MAX_PATTERNS", "load_rules", "save_rules"]

MAX_PATTERNS = 100_000
"""More than a 1 MiB file can spell out without aliases (each pattern takes at least a few bytes)."""

_FILE_VERSION = 1
_FIX = "fix it, or remove it and add the rules again with fiskai approvals add"

try:
    # libyaml's parser is several times faster than PyYAML's pure-Python one on a large file.
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # pyright: ignore[reportAssignmentType]
    _Dumper: type[yaml.SafeDumper] = yaml.CSafeDumper  # pyright: ignore[reportAssignmentType]
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader
    _Dumper = yaml.SafeDumper


def load_rules(path: Path) -> list[ApprovalRule]:
    """The rules in `path` (none when it does not exist).

    Raises:
        RuleError: The file or its folder is refused (a link, not a regular file, not owned by this
            user, writable by others, over the size cap), cannot be read, is not the rules layout, or
            holds an unreadable rule; the message names the file and the fix.
    """
    raw = read_owned(path)
    if raw is None:
        return []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RuleError(f'approval rules file "{path}" is not UTF-8 text ({err}); {_FIX}') from err
    try:
        data: object = yaml.load(text, Loader=_Loader)  # a safe loader (CSafeLoader or SafeLoader)
    except yaml.YAMLError as err:
        detail = " ".join(str(err).split())
        raise RuleError(f'approval rules file "{path}" is not valid YAML ({detail}); {_FIX}') from err
    except RecursionError as err:
        raise RuleError(f'approval rules file "{path}" is nested too deeply to be a rules file; {_FIX}') from err
    if data is None:
        return []
    document: dict[object, object] = dict(data) if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
    listed = document.get("rules", [])
    if not isinstance(data, dict) or not isinstance(listed, list):
        raise RuleError(f'approval rules file "{path}" must be a mapping with a "rules" list; {_FIX}')
    raw_rules: list[object] = list(listed)  # pyright: ignore[reportUnknownArgumentType]
    # Count before building anything: aliases make counting cheap and building expensive.
    patterns = sum(_count(entry) for entry in raw_rules)
    if patterns > MAX_PATTERNS:
        raise RuleError(
            f'approval rules file "{path}" holds {patterns:,} patterns, over the {MAX_PATTERNS:,} a rules file may '
            f"hold; fiskai did not write it: remove it and add the rules again with fiskai approvals add"
        )
    return [
        _rule_from(entry, f'approval rules file "{path}", rule {number}') for number, entry in enumerate(raw_rules, 1)
    ]


def _count(entry: object) -> int:
    if not isinstance(entry, dict):
        return 1
    patterns = cast("dict[object, object]", entry).get("patterns")
    return 1 + (len(cast("list[object]", patterns)) if isinstance(patterns, list) else 0)


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
    if not all(isinstance(item, str) for item in items):
        return None
    return tuple(str(item) for item in items)


def _rule_from(entry: object, where: str) -> ApprovalRule:
    if not isinstance(entry, dict):
        raise RuleError(f"{where} is not a mapping; {_FIX}")
    fields: dict[object, object] = dict(entry)  # pyright: ignore[reportUnknownArgumentType]
    tool = fields.get("tool")
    patterns = _strings(fields.get("patterns", []))
    tags = _strings(fields.get("tags", []))
    added = fields.get("added", "")
    if not isinstance(tool, str) or not TOOL_NAME.fullmatch(tool) or patterns is None or tags is None:
        raise RuleError(f"{where} needs tool (a name), patterns and tags (lists of strings); {_FIX}")
    if TAG_DENY in tags:
        raise RuleError(f'{where} approves "{tool}", which is tagged {TAG_DENY}; remove that rule')
    try:
        return ApprovalRule(tool=tool, patterns=patterns, tags=tuple(sorted(set(tags))), added=str(added))
    except RuleError as err:
        raise RuleError(f"{where}: {err}; {_FIX}") from err


def save_rules(path: Path, rules: Sequence[ApprovalRule], *, identity: str = "") -> None:
    """Replace `path` with `rules`: atomically, 0600, never through a link (the folder is made 0700).

    Raises:
        RuleError: The folder is refused or the file cannot be written.
    """
    body = {
        "version": _FILE_VERSION,
        "rules": [
            {"tool": r.tool, "patterns": list(r.patterns), "tags": list(r.tags), "added": r.added} for r in rules
        ],
    }
    header = f"# Approval rules for agent {identity!r}; manage them with `fiskai approvals`.\n" if identity else ""
    text = header + yaml.dump(body, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False)
    write_owned(path, text.encode("utf-8", "surrogatepass"))
