"""`harness.environment`: extra names and prefixes to strip, default names to pass (issue 9.4.11)."""

from __future__ import annotations

import pytest

from fiskai_core.config import Mode, parse_config
from fiskai_core.errors import ConfigError


def _config(block: str) -> str:
    return "harness:\n  environment:\n" + block


def test_strip_and_pass_reach_the_tool_environment_settings() -> None:
    config = parse_config(
        _config("    strip: [MYCORP_*, ' VAULT_TOKEN ', VAULT_TOKEN]\n    pass: [GH_TOKEN]\n"), Mode.MCP
    )
    assert config.credential_env_names() == ["MYCORP_*", "VAULT_TOKEN"]
    assert config.passed_env_names() == ["GH_TOKEN"]


def test_the_embeddings_key_variable_joins_the_strip_list() -> None:
    text = (
        "harness:\n  environment:\n    strip: [X_*]\n  knowledge:\n    enabled: true\n"
        "    embeddings:\n      base_url: http://127.0.0.1:1/v1\n      model: m\n      api_key_env: EMBED_KEY\n"
    )
    assert parse_config(text, Mode.MCP).credential_env_names() == ["X_*", "EMBED_KEY"]


def test_absent_block_strips_only_the_defaults() -> None:
    config = parse_config("{}\n", Mode.MCP)
    assert config.credential_env_names() == []
    assert config.passed_env_names() == []


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("    pass: [ANTHROPIC_API_KEY]\n", r'pass: "ANTHROPIC_API_KEY" is the model provider.s credential namespace'),
        ("    pass: [CLAUDE_CODE_OAUTH_TOKEN]\n", r"never reaches a tool"),
        ("    pass: [GH_*]\n", r'pass: "GH_\*" is not a variable name'),
        ("    strip: ['a b']\n", r'strip: "a b" is not a variable name or a prefix ending in \*'),
        ("    strip: ['*']\n", r'strip: "\*" is not a variable name'),
        ("    strip: [X]\n    pass: [X]\n", r'"X" is listed under both strip and pass'),
        ("    keep: [X]\n", r"unknown key; .*allowed keys: strip, pass"),
    ],
)
def test_bad_entries_are_one_line_errors_naming_the_key(block: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_config(_config(block), Mode.MCP)
    assert "\n" not in str(caught.value)
    assert "harness.environment" in str(caught.value)
