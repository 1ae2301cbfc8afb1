"""Properties of the Go-compatible decoder: valid JSON round-trips, arbitrary bytes never crash it."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from fiskai_core._gojson import GoJSONError, decode_first_value, decode_whole_value
from fiskai_core.tools import DecodedValue, JsonNumber

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


def _plain(value: DecodedValue) -> object:
    """Map decoded numbers back to Python numbers so Python's own decoder can be compared."""
    if isinstance(value, JsonNumber):
        return json.loads(value.text)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


@settings(max_examples=150, deadline=None)
@given(value=_json_values, ensure_ascii=st.booleans(), indent=st.sampled_from([None, 0, 2]))
def test_valid_json_decodes_to_the_same_structure_with_literal_numbers(
    value: object, ensure_ascii: bool, indent: int | None
) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    assert _plain(decode_first_value(text.encode())) == json.loads(text)
    assert _plain(decode_whole_value(text.encode())) == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=40) | st.text(alphabet='{}[]":,\\ tfnrule0123456789.-+eE', max_size=40).map(str.encode))
def test_arbitrary_bytes_either_decode_or_raise_go_json_error(data: bytes) -> None:
    for decode in (decode_first_value, decode_whole_value):
        try:
            decode(data)
        except GoJSONError as err:
            assert str(err)
