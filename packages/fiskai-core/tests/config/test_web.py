"""`expose.agent.web` and the card keys: defaults, normalization and every refusal, with file and line."""

from typing import Any

import pytest

from fiskai_core.config import Mode, parse_config
from fiskai_core.errors import ConfigError

_AGENT = "system_prompt: You help.\nllm: {model: m}\n"


def _web(block: str) -> Any:
    return parse_config(f"{_AGENT}expose: {{agent: {{web: {block}}}}}\n", Mode.AGENT).expose.agent.web


def test_absent_block_is_off_and_defaults_fill_in() -> None:
    assert parse_config(_AGENT, Mode.AGENT).expose.agent.web is None
    web = _web("{origins: ['http://127.0.0.1:8080/'], base_path: /chat/}")
    assert web is not None
    assert (web.listen, web.base_path, web.origins) == ("127.0.0.1:8080", "/chat", ["http://127.0.0.1:8080"])


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("{}", "expose.agent.web.origins is required"),
        ("{origins: []}", "expose.agent.web.origins is required"),
        ("{origins: ['*']}", "wildcards are not allowed"),
        ("{origins: ['https://*.example.com']}", "wildcards are not allowed"),
        ("{origins: ['https://a.example/page']}", "no path"),
        ("{origins: ['a.example']}", r"scheme://host\[:port\]"),
        ("{origins: ['ftp://a.example']}", r"scheme://host\[:port\]"),
        ("{origins: ['https://a.example'], base_path: chat}", "must be a path starting with /"),
        ("{origins: ['https://a.example'], listen: '8080'}", "must be host:port"),
        ("{origins: ['https://a.example'], listen: ':8080'}", "name the host"),
        ("{origins: ['https://a.example'], listen: 'x:99999'}", "must be host:port"),
    ],
)
def test_refusals_name_the_key_and_the_fix(block: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        _web(block)
    assert str(caught.value).startswith("agent.yaml:3: "), "the file and the line of the block"


def test_card_keys_and_their_limits() -> None:
    config = parse_config(
        _AGENT + "description: Runs the cluster\ndisplay_name: Ops\nicon: '🛠'\nicon_url: https://x.example/i.png\n"
        "prompts: [one, two]\n",
        Mode.AGENT,
    )
    assert (config.description, config.display_name, config.icon, config.prompts) == (
        "Runs the cluster",
        "Ops",
        "🛠",
        ["one", "two"],
    )
    for text, message in (
        (f"display_name: {'x' * 129}\n", "display_name: must be at most 128 bytes"),
        ("icon: '🛠🛠🛠🛠🛠'\n", "icon: must be one emoji of at most 16 bytes"),
        ("icon_url: http://x.example/i.png\n", "must be an https URL"),
        (f"icon_url: https://x.example/{'a' * 500}\n", "icon_url: must be at most 512 bytes"),
        (f"prompts: [{', '.join('p' for _ in range(9))}]\n", "at most 8 suggestions"),
        (f"prompts: [{'p' * 257}]\n", "must be at most 256 characters"),
    ):
        with pytest.raises(ConfigError, match=message):
            parse_config(_AGENT + text, Mode.AGENT)
