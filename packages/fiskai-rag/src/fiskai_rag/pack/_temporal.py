"""The date window of a context pack: `--since/--until`, or one closed temporal expression in the query.

The closed expressions, recognised only at the start or the end of a query (after leading conversational
scaffolding is trimmed, so "show me notes from last week" still finds `last week`):

    today, yesterday              that day
    this week                     Monday of this week .. today
    last week                     Monday .. Sunday of the previous week
    monday .. sunday              the most recent such day on or before today
    last monday .. last sunday    the most recent such day strictly before today
    YYYY-MM                       that calendar month
    YYYY-MM-DD                    that day
    since YYYY-MM-DD              that day .. today

An expression is removed from the query before ranking, and its resolution is recorded in the receipt's
`window.derived_from`. Two expressions, or one together with `--since/--until`, are refused rather than
guessed between. `--until` alone looks back 30 days instead of scanning all history.
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from fiskai_rag.errors import QueryWindowError

__all__ = ["SCAFFOLDING", "UNTIL_LOOKBACK_DAYS", "Window", "resolve_window", "scaffold_word"]

UNTIL_LOOKBACK_DAYS = 30

SCAFFOLDING = frozenset(
    """about can could did do does for from give how i is last me my our please prepare show summarize take
    tell the was were what when where which who why with would your""".split()
)
"""Words that describe how an answer was requested, not the evidence to retrieve (the seed's closed list)."""

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_PUNCTUATION = "?!,.;:\"'()[]"


class Window(NamedTuple):
    """Inclusive date bounds; None on a side means unbounded. No bounds at all means no window."""

    since: dt.date | None = None
    until: dt.date | None = None
    derived_from: str = "none"
    """`none`, `--since/--until`, `--until (30 days back)` or `query "last week" -> 2026-11-16..2026-11-22`."""

    @property
    def active(self) -> bool:
        """Whether the window restricts the candidates (only dated documents inside it remain)."""
        return self.since is not None or self.until is not None

    def as_dict(self) -> dict[str, str | None]:
        """The receipt's `window` object."""
        return {
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "derived_from": self.derived_from,
        }


def scaffold_word(word: str) -> str:
    """A whitespace token lowercased with surrounding punctuation removed, as scaffolding is compared."""
    return word.strip(_PUNCTUATION).lower()


def _iso_day(text: str) -> dt.date | None:
    if len(text) != 10 or text[4] != "-" or text[7] != "-" or not text.replace("-", "").isdigit():
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def _month(text: str) -> tuple[dt.date, dt.date] | None:
    if len(text) != 7 or text[4] != "-" or not text.replace("-", "").isdigit():
        return None
    year, month = int(text[:4]), int(text[5:])
    if not 1 <= month <= 12 or year < 1:
        return None
    first = dt.date(year, month, 1)
    following = dt.date(year + 1, 1, 1) if month == 12 else dt.date(year, month + 1, 1)
    return first, following - dt.timedelta(days=1)


def _one_word(word: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    if word == "today":
        return today, today
    if word == "yesterday":
        day = today - dt.timedelta(days=1)
        return day, day
    if word in _WEEKDAYS:
        day = today - dt.timedelta(days=(today.weekday() - _WEEKDAYS.index(word)) % 7)
        return day, day
    day = _iso_day(word)
    if day is not None:
        return day, day
    return _month(word)


def _two_words(first: str, second: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    monday = today - dt.timedelta(days=today.weekday())
    if (first, second) == ("this", "week"):
        return monday, today
    if (first, second) == ("last", "week"):
        return monday - dt.timedelta(days=7), monday - dt.timedelta(days=1)
    if first == "last" and second in _WEEKDAYS:
        back = (today.weekday() - _WEEKDAYS.index(second)) % 7 or 7
        day = today - dt.timedelta(days=back)
        return day, day
    if first == "since":
        day = _iso_day(second)
        if day is not None:
            return day, today
    return None


def _match(words: list[str], start: int, today: dt.date) -> tuple[int, tuple[dt.date, dt.date]] | None:
    """An expression beginning at `words[start]`: how many words it spans and its bounds."""
    if start + 1 < len(words):
        found = _two_words(words[start], words[start + 1], today)
        if found is not None:
            return 2, found
    if start < len(words):
        found = _one_word(words[start], today)
        if found is not None:
            return 1, found
    return None


def _match_end(words: list[str], today: dt.date) -> tuple[int, tuple[dt.date, dt.date]] | None:
    if len(words) >= 2:
        found = _two_words(words[-2], words[-1], today)
        if found is not None:
            return 2, found
    if words:
        found = _one_word(words[-1], today)
        if found is not None:
            return 1, found
    return None


def resolve_window(
    query: str, *, since: dt.date | None, until: dt.date | None, today: dt.date
) -> tuple[str, Window, tuple[str, ...]]:
    """Find the query's temporal expression, if any, and combine it with explicit bounds.

    Returns:
        The query without leading scaffolding and without the expression, the window, and the leading
        scaffolding words that were trimmed.

    Raises:
        QueryWindowError: Two expressions, an expression with `--since/--until`, or since after until.
    """
    raw = query.split()
    words = [scaffold_word(w) for w in raw]
    trimmed: list[str] = []
    while words and words[0] in SCAFFOLDING and _match(words, 0, today) is None:
        trimmed.append(words[0])
        raw, words = raw[1:], words[1:]
    found: list[tuple[str, tuple[dt.date, dt.date]]] = []
    head = _match(words, 0, today)
    if head is not None:
        span, bounds = head
        found.append((" ".join(words[:span]), bounds))
        raw, words = raw[span:], words[span:]
    tail = _match_end(words, today)
    if tail is not None:
        span, bounds = tail
        found.append((" ".join(words[-span:]), bounds))
        raw, words = raw[:-span], words[:-span]
    if found:
        # Another expression right behind the one removed ("today yesterday notes") is a second one too.
        extra = _match(words, 0, today) or _match_end(words, today)
        if extra is not None:
            span = extra[0]
            at_start = _match(words, 0, today) is not None
            found.append((" ".join(words[:span] if at_start else words[-span:]), extra[1]))
    if len(found) > 1:
        named = ", ".join(f'"{text}"' for text, _ in found)
        raise QueryWindowError(
            f"the query carries more than one temporal expression ({named}); keep one, or use --since/--until"
        )
    text = " ".join(raw)
    if found:
        expression, (start, end) = found[0]
        if since is not None or until is not None:
            raise QueryWindowError(
                f'the query\'s temporal expression "{expression}" and --since/--until both bound the window; '
                "keep one of them"
            )
        derived = f'query "{expression}" -> {start.isoformat()}..{end.isoformat()}'
        return text, Window(start, end, derived), tuple(trimmed)
    if since is None and until is None:
        return text, Window(), tuple(trimmed)
    if since is None:
        assert until is not None
        window = Window(
            until - dt.timedelta(days=UNTIL_LOOKBACK_DAYS), until, f"--until ({UNTIL_LOOKBACK_DAYS} days back)"
        )
    else:
        window = Window(since, until if until is not None else today, "--since/--until")
    assert window.since is not None and window.until is not None
    if window.since > window.until:
        raise QueryWindowError(
            f"--since {window.since.isoformat()} is after --until {window.until.isoformat()}; swap them"
        )
    return text, window, tuple(trimmed)
