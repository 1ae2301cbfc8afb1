from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fiskai_memory.frontmatter import Parsed, decode, encode

T0 = datetime(2026, 11, 29, 23, 5, 40, 123456, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)


def test_encode_writes_the_fisk_ai_layout_plus_timestamps() -> None:
    assert encode("Build notes", "body\n", created=T0, updated=T1) == (
        "---\n"
        "description: Build notes\n"
        "created: 2026-11-29 23:05:40.123456+00:00\n"
        "updated: 2026-11-30 01:00:00+00:00\n"
        "---\n"
        "\n"
        "body\n"
    )


@pytest.mark.parametrize(
    "description",
    ["key: value", "- item", "'q'", '"dq"', "true", "null", "~", "{a: 1}", "---", "# hash", "12:30", "0x1F"],
)
def test_yaml_significant_descriptions_round_trip(description: str) -> None:
    parsed = decode(encode(description, "---\nbody\n---\n", created=T0, updated=T1))
    assert parsed == Parsed(description=description, body="---\nbody\n---\n", created=T0, updated=T1)


def test_fisk_ai_values_without_timestamps_decode() -> None:
    assert decode("---\ndescription: Old entry\n---\n\ncontent") == Parsed(description="Old entry", body="content")


@pytest.mark.parametrize(
    "value",
    [
        "no header at all",
        "---\ndescription: never closed\nbody",
        "--- \ndescription: not a delimiter\n---\n\nbody",
        "---\n: [unbalanced\n---\n\nbody",
        "---\njust a string\n---\n\nbody",
        "---\ndescription: [a, list]\n---\n\nbody",
        "",
    ],
)
def test_headerless_unterminated_and_unparsable_headers_read_as_body(value: str) -> None:
    assert decode(value) == Parsed(description="", body=value)


def test_header_closed_at_the_very_end_has_an_empty_body() -> None:
    assert decode("---\ndescription: d\n---") == Parsed(description="d", body="")


def test_empty_header_and_only_one_leading_newline_trimmed() -> None:
    assert decode("---\n---\n\n\nbody") == Parsed(description="", body="\nbody")


def test_scalar_descriptions_read_as_text_and_are_collapsed() -> None:
    assert decode("---\ndescription: 42\n---\n\nx").description == "42"
    assert decode("---\ndescription: true\n---\n\nx").description == "true"
    assert decode("---\ndescription: |\n  two\n  lines\n---\n\nx").description == "two lines"


def test_timestamps_as_strings_or_naive_are_read_as_utc() -> None:
    parsed = decode("---\ndescription: d\ncreated: '2026-11-29T23:05:40Z'\nupdated: 2026-11-30 01:00:00\n---\n\nx")
    assert (parsed.created, parsed.updated) == (datetime(2026, 11, 29, 23, 5, 40, tzinfo=UTC), T1)
    assert decode("---\ndescription: d\ncreated: soon\n---\n\nx").created is None
