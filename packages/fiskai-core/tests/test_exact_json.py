import json

from hypothesis import given, settings, strategies as st

from fiskai_core.tools import DecodedValue, JsonNumber, dumps_exact, loads_exact, plain_json

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=_json_values, sort_keys=st.booleans())
def test_dumps_exact_writes_what_compact_json_dumps_writes(value: object, sort_keys: bool) -> None:
    # A faster writer must not change a byte: digests and journals key on this text. Python writes each
    # number as it reads back, so the exact text equals the standard library's.
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    decoded = loads_exact(json.dumps(value).encode("utf-8", "surrogatepass"))
    assert dumps_exact(decoded, sort_keys=sort_keys) == expected


def test_dumps_exact_keeps_number_text_and_escapes_as_json_does() -> None:
    value: DecodedValue = {"z": JsonNumber("1.50"), "a": [JsonNumber("1e2"), JsonNumber("-0")], "s": '"\\\x00é\ud800'}
    assert dumps_exact(value) == '{"z":1.50,"a":[1e2,-0],"s":"\\"\\\\\\u0000é\ud800"}'
    assert dumps_exact(value, sort_keys=True).startswith('{"a":[1e2,-0],"s"')
    assert plain_json(loads_exact(dumps_exact(value).encode("utf-8", "surrogatepass"))) == {
        "z": 1.5,
        "a": [100.0, 0],
        "s": '"\\\x00é\ud800',
    }
