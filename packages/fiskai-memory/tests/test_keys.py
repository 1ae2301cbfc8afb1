from __future__ import annotations

import pytest

from fiskai_memory import is_valid_key
from fiskai_memory.errors import MemoryKeyError
from fiskai_memory.keys import MAX_KEY_LENGTH, validate_key


@pytest.mark.parametrize("key", ["a", "A-Z_a.z=0-9", "x" * MAX_KEY_LENGTH, "v1.2.3", "k=v"])
def test_valid_keys_are_returned_unchanged(key: str) -> None:
    assert validate_key(key) == key
    assert is_valid_key(key)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("", "memory key must not be empty"),
        ("x" * 201, "memory key is too long: at most 200 characters"),
        (
            "a/b",
            "memory key \"a/b\" is invalid: use only letters, digits and '.', '_', '=' or '-' (no slashes or spaces)",
        ),
        (
            "a b",
            "memory key \"a b\" is invalid: use only letters, digits and '.', '_', '=' or '-' (no slashes or spaces)",
        ),
        (".hidden", "memory key \".hidden\" is invalid: it must not start or end with '.'"),
        ("end.", "memory key \"end.\" is invalid: it must not start or end with '.'"),
        ("a..b", "memory key \"a..b\" is invalid: it must not contain '..'"),
        ("..", "memory key \"..\" is invalid: it must not start or end with '.'"),
    ],
)
def test_invalid_keys_raise_the_reference_messages(key: str, message: str) -> None:
    with pytest.raises(MemoryKeyError) as raised:
        validate_key(key)
    assert str(raised.value) == message
    assert raised.value.key == key
    assert not is_valid_key(key)


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("nul\x00byte", r'"nul\x00byte"'),
        ("\u0430pple", r'"\u0430pple"'),  # Cyrillic a looks like a Latin one
        ("zero\u200bwidth", r'"zero\u200bwidth"'),
        ("line\nbreak", r'"line\nbreak"'),
        ("trailing\n", r'"trailing\n"'),
    ],
)
def test_hard_to_see_characters_are_shown_escaped_in_the_error(key: str, shown: str) -> None:
    with pytest.raises(MemoryKeyError) as raised:
        validate_key(key)
    assert str(raised.value).startswith(f"memory key {shown} is invalid: use only letters")


def test_length_limit_counts_characters() -> None:
    with pytest.raises(MemoryKeyError, match="too long"):
        validate_key("\u00e9" * 201)
