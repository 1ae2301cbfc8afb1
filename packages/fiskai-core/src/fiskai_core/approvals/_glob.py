"""The value globs of approval rules, and what their wildcards may stand for.

A glob is literal text except:

* `?`: one *name character*: a printable character (`str.isprintable`: no control, format, bidi,
  zero-width, separator other than the space, private-use, surrogate or unassigned character) that is
  not `/`.
* `*`: any run (possibly empty) of name characters, so it stays inside one path segment.
* `**`: any run of printable characters, `/` included.

No wildcard ever stands for a character of a `..` path segment (`..` alone, or between slashes, or at
either end of a value next to a slash): `@1=/srv/*` does not match `/srv/..`, and `--dir=/srv/**` does
not match `/srv/a/../../etc`. A `..` the rule writes out literally matches itself. `\\*`, `\\?` and
`\\\\` stand for the characters themselves, as `\\` does before any other character.

So a wildcard can never approve a value that hides text on a terminal, reorders it (bidi overrides) or
climbs out of the directory the rule names. Literal text matches exactly whatever it says.

Matching simulates the glob as an automaton, one bit per glob position, over the value once: time grows
with the value's length times the glob's (never exponentially, as a backtracking regex does with several
`*`s against a long, nearly matching value), so no model-chosen value can stall the gate.
"""

from __future__ import annotations

from typing_extensions import override

__all__ = ["ValueGlob", "glob_escape"]

_LITERAL = 0
_ONE = 1
_STAR = 2
_DEEP = 3


def glob_escape(value: str) -> str:
    """`value` as a glob matching exactly itself."""
    return value.replace("\\", "\\\\").replace("*", "\\*").replace("?", "\\?")


def _tokens(glob: str) -> list[tuple[int, str]]:
    tokens: list[tuple[int, str]] = []
    index = 0
    while index < len(glob):
        ch = glob[index]
        if ch == "\\":
            # A trailing backslash stands for itself.
            tokens.append((_LITERAL, glob[index + 1] if index + 1 < len(glob) else "\\"))
            index += 2
            continue
        if ch == "*":
            deep = glob.startswith("**", index)
            kind = _DEEP if deep else _STAR
            index += 2 if deep else 1
            # Runs of stars add nothing: `***` is `**`, `**` next to `*` is `**`.
            if tokens and tokens[-1][0] in (_STAR, _DEEP):
                tokens[-1] = (max(kind, tokens[-1][0]), "")
            else:
                tokens.append((kind, ""))
            continue
        tokens.append((_ONE, "") if ch == "?" else (_LITERAL, ch))
        index += 1
    return tokens


def _dotdot_positions(value: str) -> set[int]:
    """Indexes of the characters that form a `..` path segment."""
    positions: set[int] = set()
    start = 0
    for segment in value.split("/"):
        if segment == "..":
            positions.update((start, start + 1))
        start += len(segment) + 1
    return positions


class ValueGlob:
    """One compiled glob (see the module docs for what it matches)."""

    __slots__ = ("_deep", "_exact", "_literals", "_one", "_size", "_star", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        tokens = _tokens(text)
        self._size = len(tokens)
        self._exact: str | None = (
            "".join(ch for _, ch in tokens) if all(kind == _LITERAL for kind, _ in tokens) else None
        )
        literals: dict[str, int] = {}
        one = star = deep = 0
        for position, (kind, ch) in enumerate(tokens):
            bit = 1 << position
            if kind == _LITERAL:
                literals[ch] = literals.get(ch, 0) | bit
            elif kind == _ONE:
                one |= bit
            elif kind == _STAR:
                star |= bit
            else:
                deep |= bit
        self._literals = literals
        self._one = one
        self._star = star
        self._deep = deep

    @override
    def __repr__(self) -> str:
        return f"ValueGlob({self.text!r})"

    def matches(self, value: str) -> bool:
        """Whether the whole of `value` matches."""
        if self._exact is not None:
            return value == self._exact
        wild = self._star | self._deep
        states = self._closure(1, wild)
        # Usually every character is a name character: skip the per-character classification.
        plain = value.isprintable() and "/" not in value and ".." not in value
        dotdot = set[int]() if plain else _dotdot_positions(value)
        literals, one, deep = self._literals, self._one, self._deep
        for index, ch in enumerate(value):
            moved = states & literals.get(ch, 0)
            stay = 0
            if plain or (index not in dotdot and ch.isprintable()):
                if ch != "/":
                    moved |= states & one
                    stay = states & wild
                else:
                    stay = states & deep
            states = self._closure((moved << 1) | stay, wild)
            if not states:
                return False
        return bool(states >> self._size & 1)

    @staticmethod
    def _closure(states: int, wild: int) -> int:
        # A star may match nothing: reaching it also reaches the position after it (runs are merged,
        # so one step suffices).
        return states | (states & wild) << 1
