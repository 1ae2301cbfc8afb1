"""The stored value format: a YAML frontmatter header, then the content verbatim.

Every backend stores the same bytes, so entries migrate between backends unchanged::

    ---
    description: Build notes
    created: 2026-11-29 23:05:40.123456+00:00
    updated: 2026-11-29 23:05:40.123456+00:00
    ---

    <content, verbatim>

fisk-ai writes only `description`; its reader ignores the timestamps, and this reader treats a header
without them as "unknown". A value that does not start with `---` and a newline, whose header has no
closing `---` line, or whose header is not a YAML mapping, is read as all body with an empty description,
so an operator's hand-written file is never lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import yaml

from .store import normalize_description

__all__ = ["Parsed", "decode", "encode"]

_OPEN = "---\n"
_CLOSE = "\n---\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class Parsed:
    """A decoded stored value."""

    description: str
    body: str
    created: datetime | None = None
    updated: datetime | None = None


def encode(description: str, content: str, *, created: datetime, updated: datetime) -> str:
    """Render a stored value.

    Args:
        description: The (already normalized, one-line) description.
        content: The content, stored verbatim after the header.
        created: When the entry was first written.
        updated: When the entry was last written.

    Returns:
        The value text.
    """
    header = yaml.safe_dump(
        {"description": description, "created": created.astimezone(UTC), "updated": updated.astimezone(UTC)},
        sort_keys=False,
        allow_unicode=True,
        # One line per field whatever the description's length: a folded line could look like a delimiter.
        width=1 << 20,
    )
    return f"{_OPEN}{header}---\n\n{content}"


def decode(value: str) -> Parsed:
    """Split a stored value into its description, timestamps and body.

    The header ends at the first line that is exactly `---`; the body is everything after it with one
    leading newline removed, so a body that itself holds `---` lines is preserved.
    """
    headerless = Parsed(description="", body=value)
    if not value.startswith(_OPEN):
        return headerless
    rest = value[len(_OPEN) :]
    if rest.startswith("---\n") or rest == "---":
        header, after = "", rest[4:]
    elif (end := rest.find(_CLOSE)) >= 0:
        header, after = rest[: end + 1], rest[end + len(_CLOSE) :]
    elif rest.endswith("\n---"):
        header, after = rest[: -len("---")], ""
    else:
        return headerless
    try:
        fields: object = yaml.safe_load(header) if header.strip() else {}
    except yaml.YAMLError:
        return headerless
    if not isinstance(fields, dict):
        return headerless
    description = _text(fields.get("description"))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    if description is None:
        return headerless
    return Parsed(
        description=normalize_description(description),
        body=after.removeprefix("\n"),
        created=_timestamp(fields.get("created")),  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        updated=_timestamp(fields.get("updated")),  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    )


def _text(value: object) -> str | None:
    # Scalars read as text (as a Go string field would take them); a list or mapping is not a description.
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _timestamp(value: object) -> datetime | None:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    # A timestamp without a zone is taken as UTC, which is how this module writes them.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
