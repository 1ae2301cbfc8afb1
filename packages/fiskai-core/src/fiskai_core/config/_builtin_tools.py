"""`harness.tools` and `harness.knowledge.citations`: the opt-in built-ins and the citation rewrite rules.

Both are checked whole at load (reference 7.3, 7.4): an unknown tool name or option key, a duplicate
tool, a pattern that does not compile or a `replace` naming a group the pattern lacks fails the file,
naming the entry (`harness.tools[N]`, `citations[N]`) and the fix.
"""

from __future__ import annotations

import re

from pydantic import Field, JsonValue, field_validator

from fiskai_core._gojson import go_quote

from ._schema import Block, SettingError, Text

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "DEFAULT_READ_FILE_MAX_BYTES",
    "CitationRule",
    "HarnessTool",
    "check_citation_rules",
    "check_harness_tools",
    "replace_references",
]

DEFAULT_READ_FILE_MAX_BYTES = 1 << 20
"""`read_file`'s `max_bytes` when unset: 1 MiB."""

_OPTIONS: dict[str, tuple[str, ...]] = {"read_file": ("root", "max_bytes"), "base64_encode": ()}
BUILTIN_TOOL_NAMES = tuple(_OPTIONS)
"""The names `harness.tools` accepts, in the reference's order."""

_SPECIAL = frozenset({"ordinal", "heading", "anchor"})
# Go's regexp.Expand: `$$`, `$name` (the longest run of letters, digits and `_`), `${name}`.
_REFERENCE = re.compile(r"\$(?:(\$)|\{([^}]*)\}|(\w+))")


class HarnessTool(Block):
    """One `harness.tools` entry: a harness-implemented built-in offered only when listed."""

    name: Text
    """`read_file` or `base64_encode`."""
    confirm: bool = False
    """Gate every call behind the operator's confirmation, as `ai:confirm` does for a command."""
    options: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue])
    """`read_file`: `root` (the folder it may read; default the working directory, relative to the config
    file's folder) and `max_bytes` (the largest file it returns, default 1 MiB). `base64_encode`: none."""

    @property
    def max_bytes(self) -> int:
        """`read_file`'s size cap."""
        value = self.options.get("max_bytes")
        return value if isinstance(value, int) and not isinstance(value, bool) else DEFAULT_READ_FILE_MAX_BYTES

    @property
    def root(self) -> str:
        """`read_file`'s root as written (empty: the working directory)."""
        value = self.options.get("root")
        return value if isinstance(value, str) else ""


class CitationRule(Block):
    """One `harness.knowledge.citations` rule: a document path matching `pattern` is cited as `replace`."""

    pattern: Text
    """A regular expression searched in the document's citation path (`docs/design.md`)."""
    replace: Text
    """What the citation becomes: `$1`, `$name`, `${name}` name the pattern's groups, `$$` is a `$`, and
    `${ordinal}`, `${heading}`, `${anchor}` the section's number, heading and GitHub-style anchor. Group
    values are percent-encoded for a URL path (`/` kept)."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as err:
            raise SettingError(f"pattern {go_quote(value)} is not a valid regular expression: {err}") from None
        return value


def replace_references(replace: str) -> list[str]:
    """The group names and numbers `replace` refers to (`$$` excluded), in order."""
    return [
        m.group(2) if m.group(2) is not None else m.group(3) for m in _REFERENCE.finditer(replace) if not m.group(1)
    ]


def check_citation_rules(rules: list[CitationRule]) -> list[CitationRule]:
    """Every `replace` names only groups its pattern has (or the three section values)."""
    for index, rule in enumerate(rules):
        compiled = re.compile(rule.pattern)
        for name in replace_references(rule.replace):
            known = name in _SPECIAL or name in compiled.groupindex
            if name.isdigit():
                known = int(name) <= compiled.groups
            if not known:
                raise SettingError(
                    f"citations[{index}]: replace {go_quote(rule.replace)} refers to ${{{name}}}, which the "
                    f"pattern {go_quote(rule.pattern)} does not capture; use a group number up to {compiled.groups}, "
                    "a named group of the pattern, or ${ordinal}, ${heading}, ${anchor}"
                )
    return rules


def check_harness_tools(tools: list[HarnessTool]) -> list[HarnessTool]:
    """Known names, once each, with only their own option keys of the right types."""
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"harness.tools[{index}]"
        if tool.name not in _OPTIONS:
            raise SettingError(
                f"{where}: unknown built-in {go_quote(tool.name)}; the harness offers {', '.join(BUILTIN_TOOL_NAMES)}"
            )
        if tool.name in seen:
            raise SettingError(f"{where}: {tool.name} is listed twice; keep one entry")
        seen.add(tool.name)
        allowed = _OPTIONS[tool.name]
        for key in tool.options:
            if key not in allowed:
                takes = f"takes only {', '.join(allowed)}" if allowed else "takes no options"
                raise SettingError(f"{where}: unknown option {go_quote(key)} for {tool.name}, which {takes}")
        root, max_bytes = tool.options.get("root"), tool.options.get("max_bytes")
        if root is not None and not isinstance(root, str):
            raise SettingError(f"{where}: read_file option root must be a string (a folder path)")
        if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1):
            raise SettingError(f"{where}: read_file option max_bytes must be a positive whole number of bytes")
    return tools
