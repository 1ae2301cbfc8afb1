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

GLOB is literal text except `*` (a run of printable characters other than `/`), `**` (the same, `/`
included) and `?` (one printable character other than `/`); no wildcard stands for a control, bidi or
other invisible character, or for a `..` path segment (`_glob`). Values with spaces are quoted as a
shell would (`--reason='node is flapping'`); nothing is ever run through a shell.

A rule remembers the tool's tags when it was made and applies only while the tags are the same: an
application that re-tags a command (say, newly `impact:destructive`) has reclassified it, and the
operator decides again. A rule for a tool tagged `ai:deny` cannot be made (such tools are never loaded).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from fiskai_core.tools import TAG_DENY

from ._errors import RuleError
from ._glob import ValueGlob, glob_escape

__all__ = ["ANY_ARGUMENTS", "TOOL_NAME", "ApprovalRule", "parse_rule", "suggest_rule"]

ANY_ARGUMENTS = "..."
"""The pattern that lets a rule match arguments it does not mention."""

_FLAG = re.compile(r"--([A-Za-z0-9][A-Za-z0-9_.-]*)(?:=(.*))?", re.DOTALL)
_POSITIONAL = re.compile(r"@([1-9][0-9]*|\*)=(.*)", re.DOTALL)
TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]+")


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
    _compiled: tuple[tuple[str, str, ValueGlob | None], ...] = field(default=(), compare=False, repr=False, init=False)

    def __post_init__(self) -> None:
        compiled: list[tuple[str, str, ValueGlob | None]] = []
        for pattern in self.patterns:
            if pattern == ANY_ARGUMENTS:
                continue
            flag = _FLAG.fullmatch(pattern)
            if flag is not None:
                value = flag.group(2)
                compiled.append(("flag", flag.group(1), ValueGlob(value) if value is not None else None))
                continue
            positional = _POSITIONAL.fullmatch(pattern)
            if positional is not None:
                compiled.append(("arg", positional.group(1), ValueGlob(positional.group(2))))
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

    def applies_to(self, name: str, tags: Sequence[str]) -> bool:
        """Whether this rule can approve calls of tool `name` with `tags` (the tool, and its tags unchanged)."""
        return name == self.tool and tuple(sorted(set(tags))) == self.tags and TAG_DENY not in tags

    def same_as(self, other: ApprovalRule) -> bool:
        """Whether `other` is this rule, however it was quoted (tags and date aside)."""
        return (self.tool, self.patterns) == (other.tool, other.patterns)

    def matches(self, *, name: str, tags: Sequence[str], argv: Sequence[str]) -> bool:
        """Whether this rule approves running `argv` for tool `name` with `tags` (see the module docs)."""
        if not self.applies_to(name, tags):
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
            if not values or not all(rx.matches(v) for v in values):
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
            if number > len(call.positionals) or not rx.matches(call.positionals[number - 1]):
                return False
        for number, value in enumerate(call.positionals, 1):
            if number in indexed:
                continue
            if rest:
                if not all(rx.matches(value) for rx in rest):
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
    if not TOOL_NAME.fullmatch(tool):
        raise RuleError(f"approval rule {text!r}: {tool!r} is not a tool name")
    if TAG_DENY in tags:
        raise RuleError(f'no rule can approve "{tool}": it is tagged {TAG_DENY}, so no agent may ever run it')
    return ApprovalRule(tool=tool, patterns=patterns, tags=tuple(sorted(set(tags))), added=added or _now())


def suggest_rule(name: str, argv: Sequence[str]) -> str:
    """The narrowest rule that matches `argv`: every flag and positional, exactly (globs escaped)."""
    call = _split(argv)
    patterns = [f"--{flag}" if value is None else f"--{flag}={glob_escape(value)}" for flag, value in call.flags]
    patterns += [f"@{number}={glob_escape(value)}" for number, value in enumerate(call.positionals, 1)]
    return " ".join([name, *(shlex.quote(p) for p in patterns)])


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
