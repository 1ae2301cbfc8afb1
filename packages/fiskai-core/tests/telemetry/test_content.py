import json

from fiskai_core.telemetry import encoded_size, fit_json, fit_messages


def _message(role: str, text: str) -> dict[str, object]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def test_a_1_mb_tool_result_is_cut_to_the_cap_and_still_parses() -> None:
    fitted = fit_json({"result": "r" * 1_000_000}, 8192)
    assert fitted.truncated
    assert len(fitted.text.encode()) <= 8192
    body = json.loads(fitted.text)["result"]
    assert body.startswith("rrr")
    assert body.endswith("bytes omitted]")
    assert "[truncated by fisk-ai:" in body


def test_oldest_messages_are_dropped_first_and_the_newest_kept() -> None:
    messages = [_message("user", f"{n}" * 3000) for n in range(5)]
    fitted = fit_messages(messages, 7000)
    kept = json.loads(fitted.text)
    assert (fitted.dropped, fitted.truncated) == (3, False)
    assert [m["parts"][0]["content"][0] for m in kept] == ["3", "4"]


def test_control_characters_count_as_their_escapes() -> None:
    assert encoded_size("\x01") == 8  # the quotes and a six-byte escape
    fitted = fit_messages([_message("tool", "\x01" * 5000)], 4096)
    assert len(fitted.text.encode()) <= 4096
    assert json.loads(fitted.text)[0]["role"] == "tool"


def test_a_document_under_the_cap_is_untouched() -> None:
    fitted = fit_messages([_message("user", "hi")], 256)
    assert (fitted.dropped, fitted.truncated) == (0, False)
    assert json.loads(fitted.text) == [_message("user", "hi")]


def test_a_bare_string_document_is_cut_too() -> None:
    fitted = fit_json("x" * 100_000, 1024)
    assert fitted.truncated
    assert len(fitted.text.encode()) <= 1024
    assert json.loads(fitted.text).endswith("bytes omitted]")
