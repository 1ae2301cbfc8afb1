"""Approval rules: an operator's standing "yes" for a gated tool with arguments of a given shape.

A rule is matched on the canonical argv the call would run (`Confirmable.command_argv`, the output of
the JSON-to-argv trust boundary), never on the model's raw JSON, so a rule approves exactly the command
lines it describes, whatever JSON spelling produced them. That argv has a fixed layout:

    BINARY COMMAND WORDS... [--flag=value | --flag | --no-flag]... [-- POSITIONAL...]

A rule is the tool name followed by patterns, written as the operator sees the command line:

* `--NAME=GLOB`: the call carries flag `--NAME`, and every value it gives that flag matches GLOB
  (a repeatable flag given three times: all three must match). Global flags are flags like any other.
* `--NAME` (no `=`): the bare boolean token, exactly (`--force`, `--no-wait`).
* `@N=GLOB`: the N-th positional argument (1-based, after the `--`) exists and matches GLOB.
* `@*=GLOB`: every positional no `@N` pattern addresses matches GLOB (zero or more of them).
* `...`: arguments no pattern mentions are allowed. Without it a rule is complete: a call carrying any
  flag or positional the rule does not mention does not match, so `drain @1=n1` never approves
  `drain --force -- n1`. A rule of only the tool name matches a call with no arguments; `TOOL ...`
  matches any arguments.

GLOB is literal text except `*` (any run of characters, none of them control characters) and `?` (one
such character); `\\*`, `\\?` and `\\\\` stand for the characters themselves. Values with spaces are
quoted as a shell would (`--reason='node is flapping'`); nothing is ever run through a shell.

A rule remembers the tool's tags when it was made and applies only while the tags are the same: an
application that re-tags a command (say, newly `impact:destructive`) has reclassified it, and the
operator decides again. A rule for a tool tagged `ai:deny` cannot be made (such tools are never loaded).

Rules are kept per agent identity in a YAML file the CLI places in the state home; this module reads and
writes it: owner-only (0600 in a 0700 folder), replaced atomically, a malformed file an error naming it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from fiskai_core.errors import FiskaiError
from fiskai_core.tools import TAG_DENY

__all__ = [
    "ANY_ARGUMENTS",
    "ApprovalRule",
    "Approvals",
    "RuleError",
    "load_rules",
    "parse_rule",
    "save_rules",
    "suggest_rule",
]

ANY_ARGUMENTS = "..."
"""The pattern that lets a rule match arguments it does not mention."""

_FILE_VERSION = 1
_FLAG = re.compile(r"--([A-Za-z0-9][A-Za-z0-9_.-]*)(?:=(.*))?", re.DOTALL)
_POSITIONAL = re.compile(r"@([1-9][0-9]*|\*)=(.*)", re.DOTALL)
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]+")
# `*` and `?` never match control characters, so a rule cannot approve a value that hides text on a terminal.
_VALUE_CHAR = r"[^\x00-\x1f\x7f]"


class RuleError(FiskaiError):
    """An approval rule cannot be parsed, added or stored; the message names the rule or file and the fix."""


def _glob_regex(glob: str) -> re.Pattern[str]:
    out: list[str] = []
    escaped = False
    for ch in glob:
        if escaped:
            out.append(re.escape(ch))
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "*":
            out.append(_VALUE_CHAR + "*")
        elif ch == "?":
            out.append(_VALUE_CHAR)
        else:
            out.append(re.escape(ch))
    if escaped:
        out.append(re.escape("\\"))
    return re.compile("".join(out), re.DOTALL)


def _glob_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("*", "\\*").replace("?", "\\?")


@dataclass(frozen=True, slots=True)
class _Split:
    """A call's argv as rules see it."""

    flags: tuple[tuple[str, str | None], ...]
    """(name, value) per flag token in order; value None for a bare `--name` token (whose name may be `no-x`)."""
    positionals: tuple[str, ...]


def _split(argv: Sequence[str]) -> _Split:
    flags: list[tuple[str, str | None]] = []
    positionals: list[str] = []
    for index, token in enumerate(argv[1:], 1):
        if token == "--":
            positionals = list(argv[index + 1 :])
            break
        if token.startswith("--"):
            name, sep, value = token[2:].partition("=")
            flags.append((name, value if sep else None))
        # Other tokens before `--` are command words; the tool name already identifies them.
    return _Split(tuple(flags), tuple(positionals))


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    """One standing approval: a tool, the shape of its arguments, and the tags it had when approved."""

    tool: str
    patterns: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    """The tool's tags (sorted) when the rule was made; the rule applies only while they are unchanged."""
    added: str = ""
    """When the rule was made (ISO 8601, UTC)."""
    _compiled: tuple[tuple[str, str, re.Pattern[str] | None], ...] = field(
        default=(), compare=False, repr=False, init=False
    )

    def __post_init__(self) -> None:
        compiled: list[tuple[str, str, re.Pattern[str] | None]] = []
        for pattern in self.patterns:
            if pattern == ANY_ARGUMENTS:
                continue
            flag = _FLAG.fullmatch(pattern)
            if flag is not None:
                value = flag.group(2)
                compiled.append(("flag", flag.group(1), _glob_regex(value) if value is not None else None))
                continue
            positional = _POSITIONAL.fullmatch(pattern)
            if positional is not None:
                compiled.append(("arg", positional.group(1), _glob_regex(positional.group(2))))
                continue
            raise RuleError(
                f'approval rule for "{self.tool}": cannot read pattern {pattern!r}; write --FLAG=GLOB, --FLAG, '
                f"@N=GLOB (N-th positional), @*=GLOB or {ANY_ARGUMENTS}"
            )
        object.__setattr__(self, "_compiled", tuple(compiled))

    @property
    def text(self) -> str:
        """The rule as an operator writes it: `TOOL PATTERN...`, quoted where needed."""
        return " ".join([self.tool, *(shlex.quote(p) for p in self.patterns)])

    @property
    def id(self) -> str:
        """A short, stable id (from the tool and patterns) for `fiskai approvals rm`."""
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()[:10]

    def matches(self, *, name: str, tags: Sequence[str], argv: Sequence[str]) -> bool:
        """Whether this rule approves running `argv` for tool `name` with `tags` (see the module docs)."""
        if name != self.tool or tuple(sorted(set(tags))) != self.tags or TAG_DENY in tags:
            return False
        call = _split(argv)
        open_ended = ANY_ARGUMENTS in self.patterns
        return self._flags_match(call, open_ended) and self._positionals_match(call, open_ended)

    def _flags_match(self, call: _Split, open_ended: bool) -> bool:
        flag_rules = [(key, rx) for kind, key, rx in self._compiled if kind == "flag"]
        for key, rx in flag_rules:
            if rx is None:
                if (key, None) not in call.flags:
                    return False
                continue
            values = [value for flag, value in call.flags if flag == key and value is not None]
            if not values or not all(rx.fullmatch(v) for v in values):
                return False
        if open_ended:
            return True
        valued = {key for key, rx in flag_rules if rx is not None}
        bare = {key for key, rx in flag_rules if rx is None}
        return all((flag in bare) if value is None else (flag in valued) for flag, value in call.flags)

    def _positionals_match(self, call: _Split, open_ended: bool) -> bool:
        indexed = {int(key): rx for kind, key, rx in self._compiled if kind == "arg" and key != "*" and rx is not None}
        rest = [rx for kind, key, rx in self._compiled if kind == "arg" and key == "*" and rx is not None]
        for number, rx in indexed.items():
            if number > len(call.positionals) or not rx.fullmatch(call.positionals[number - 1]):
                return False
        for number, value in enumerate(call.positionals, 1):
            if number in indexed:
                continue
            if rest:
                if not all(rx.fullmatch(value) for rx in rest):
                    return False
            elif not open_ended:
                return False
        return True


def parse_rule(text: str, *, tags: Sequence[str], added: str = "") -> ApprovalRule:
    """Read `TOOL [PATTERN...]` (shell-style quoting) into a rule bound to the tool's current `tags`.

    Raises:
        RuleError: The text is empty, badly quoted, names no valid tool, has a pattern it cannot read, or
            the tool is tagged `ai:deny`.
    """
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise RuleError(f"approval rule {text!r}: {err}; quote values as a shell would") from err
    if not words:
        raise RuleError("an approval rule needs a tool name, e.g. cluster_node_drain @1='n*'")
    tool, patterns = words[0], tuple(words[1:])
    if not _TOOL_NAME.fullmatch(tool):
        raise RuleError(f"approval rule {text!r}: {tool!r} is not a tool name")
    if TAG_DENY in tags:
        raise RuleError(f'no rule can approve "{tool}": it is tagged {TAG_DENY}, so no agent may ever run it')
    return ApprovalRule(tool=tool, patterns=patterns, tags=tuple(sorted(set(tags))), added=added or _now())


def suggest_rule(name: str, argv: Sequence[str]) -> str:
    """The narrowest rule that matches `argv`: every flag and positional, exactly (globs escaped)."""
    call = _split(argv)
    patterns = [f"--{flag}" if value is None else f"--{flag}={_glob_escape(value)}" for flag, value in call.flags]
    patterns += [f"@{number}={_glob_escape(value)}" for number, value in enumerate(call.positionals, 1)]
    return " ".join([name, *(shlex.quote(p) for p in patterns)])


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# -- the rules file --------------------------------------------------------------------------------


def load_rules(path: Path) -> list[ApprovalRule]:
    """The rules in `path` (none when it does not exist).

    Raises:
        RuleError: The file cannot be read, is not the rules layout, or holds an unreadable rule; the
            message names the file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as err:
        raise RuleError(f'approval rules file "{path}" cannot be read: {err}') from err
    try:
        data: object = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise RuleError(f'approval rules file "{path}" is not valid YAML ({err}); fix or remove it') from err
    if data is None:
        return []
    fix = "fix it, or remove it and add the rules again with fiskai approvals add"
    document: dict[object, object] = dict(data) if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
    listed = document.get("rules", [])
    if not isinstance(data, dict) or not isinstance(listed, list):
        raise RuleError(f'approval rules file "{path}" must be a mapping with a "rules" list; {fix}')
    raw_rules: list[object] = list(listed)  # pyright: ignore[reportUnknownArgumentType]
    rules: list[ApprovalRule] = []
    for number, entry in enumerate(raw_rules, 1):
        rules.append(_rule_from(entry, f'approval rules file "{path}", rule {number}', fix))
    return rules


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
    if not all(isinstance(item, str) for item in items):
        return None
    return tuple(str(item) for item in items)


def _rule_from(entry: object, where: str, fix: str) -> ApprovalRule:
    if not isinstance(entry, dict):
        raise RuleError(f"{where} is not a mapping; {fix}")
    fields: dict[object, object] = dict(entry)  # pyright: ignore[reportUnknownArgumentType]
    tool = fields.get("tool")
    patterns = _strings(fields.get("patterns", []))
    tags = _strings(fields.get("tags", []))
    added = fields.get("added", "")
    if not isinstance(tool, str) or not _TOOL_NAME.fullmatch(tool) or patterns is None or tags is None:
        raise RuleError(f"{where} needs tool (a name), patterns and tags (lists of strings); {fix}")
    if TAG_DENY in tags:
        raise RuleError(f'{where} approves "{tool}", which is tagged {TAG_DENY}; remove that rule')
    try:
        return ApprovalRule(tool=tool, patterns=patterns, tags=tuple(sorted(set(tags))), added=str(added))
    except RuleError as err:
        raise RuleError(f"{where}: {err}; {fix}") from err


def save_rules(path: Path, rules: Sequence[ApprovalRule], *, identity: str = "") -> None:
    """Replace `path` with `rules`, atomically, owner-only (the folder is made 0700 when created).

    Raises:
        RuleError: The folder or file cannot be written.
    """
    body = {
        "version": _FILE_VERSION,
        "rules": [
            {"tool": r.tool, "patterns": list(r.patterns), "tags": list(r.tags), "added": r.added} for r in rules
        ],
    }
    header = f"# Approval rules for agent {identity!r}; manage them with `fiskai approvals`.\n" if identity else ""
    text = header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, default_flow_style=False)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, 0o600)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as err:
        raise RuleError(f'approval rules file "{path}" cannot be written: {err.strerror or err}') from err


# -- what a gate consults --------------------------------------------------------------------------


class Approvals:
    """One agent's persisted rules, as a confirm gate consults and extends them.

    Args:
        rules: The rules loaded for the agent.
        saver: Persists the full rule list after the operator adds one at a prompt; `None` means rules
            cannot be saved on this path (the prompt then does not offer to).
        identity: The agent the rules belong to (shown in prompts).
    """

    def __init__(
        self,
        rules: Sequence[ApprovalRule] = (),
        *,
        saver: Callable[[Sequence[ApprovalRule]], None] | None = None,
        identity: str = "",
    ) -> None:
        self._rules = list(rules)
        self._saver = saver
        self.identity = identity

    @classmethod
    def from_file(cls, path: Path, *, identity: str) -> Approvals:
        """The rules in `path`, saving additions back to it.

        Raises:
            RuleError: The file is malformed or unreadable.
        """
        return cls(load_rules(path), saver=lambda rules: save_rules(path, rules, identity=identity), identity=identity)

    @property
    def rules(self) -> tuple[ApprovalRule, ...]:
        return tuple(self._rules)

    @property
    def can_persist(self) -> bool:
        return self._saver is not None

    def match(self, *, name: str, tags: Sequence[str], argv: Sequence[str]) -> ApprovalRule | None:
        """The first rule that approves this call, if any."""
        return next((rule for rule in self._rules if rule.matches(name=name, tags=tags, argv=argv)), None)

    def add(self, rule: ApprovalRule) -> None:
        """Keep `rule` for this run and save it (a rule that cannot be saved still holds for the run).

        Raises:
            RuleError: Saving failed (the rule is in force for this run all the same).
        """
        if rule not in self._rules:
            self._rules.append(rule)
        if self._saver is not None:
            self._saver(self._rules)
