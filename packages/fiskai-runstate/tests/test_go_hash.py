"""The Go agent's fingerprint hashes: each expected string is what Go's encoding/json writes for the value."""

from __future__ import annotations

import hashlib

import pytest

from fiskai_runstate.go_hash import GoToolDef, go_json, go_system_hash, go_tools_hash


@pytest.mark.parametrize(
    ("value", "go"),
    [
        (1.0, "1"),
        (0.5, "0.5"),
        (-2.0, "-2"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-5, "0.000015"),
        (123456789.125, "123456789.125"),
        (7, "7"),
        (True, "true"),
        (None, "null"),
        ("a<b>&c", '"a\\u003cb\\u003e\\u0026c"'),  # HTML-safe escaping, as json.Marshal does
        ("line\nnext\ttab\x01\u2028é", '"line\\nnext\\ttab\\u0001\\u2028é"'),
        ({"b": 1, "a": [1, 2.5], "B": None}, '{"B":null,"a":[1,2.5],"b":1}'),  # map keys by their bytes
    ],
)
def test_values_encode_as_go_writes_them(value: object, go: str) -> None:
    assert go_json(value) == go


def test_a_tool_definition_keeps_the_go_structs_field_order() -> None:
    tool = GoToolDef("stream_info", "Shows a <stream>", {"type": "object", "properties": {}}, False)

    assert go_json([tool]) == (
        '[{"Name":"stream_info","Description":"Shows a \\u003cstream\\u003e",'
        '"InputSchema":{"properties":{},"type":"object"},"DeferLoading":false}]'
    )
    expected = hashlib.sha256(go_json([tool]).encode()).hexdigest()
    assert go_tools_hash([tool]) == expected


def test_the_system_hash_covers_the_blocks_as_a_json_array_of_strings() -> None:
    expected = hashlib.sha256(b'["You run \\u0026 report.","note"]').hexdigest()
    assert go_system_hash(["You run & report.", "note"]) == expected
