import pytest

from fiskai_core.config import Mode, parse_config
from fiskai_core.errors import ConfigError


def test_pii_mode_defaults_to_redact_without_the_block() -> None:
    assert parse_config("", Mode.MCP).harness.pii.mode == "redact"
    assert parse_config("harness: {pii: {}}", Mode.MCP).harness.pii.mode == "redact"


@pytest.mark.parametrize("mode", ["redact", "reject", "off"])
def test_pii_mode_is_read(mode: str) -> None:
    assert parse_config(f"harness:\n  pii:\n    mode: {mode}\n", Mode.MCP).harness.pii.mode == mode


def test_an_unknown_pii_mode_names_the_key_and_the_choices() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config("harness:\n  pii:\n    mode: mask\n", Mode.MCP)
    message = str(raised.value)
    assert "harness.pii.mode" in message
    assert "mask" in message
    assert "redact" in message and "reject" in message and "off" in message
    assert "Traceback" not in message


def test_an_unknown_pii_key_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"harness\.pii\.types"):
        parse_config("harness:\n  pii:\n    types: [EMAIL]\n", Mode.MCP)
