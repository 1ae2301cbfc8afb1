"""What is printed about a server: endpoints without credentials, resolved values replaced."""

import pytest

from fiskai_mcp.client import REDACTED, Redactor, redact_command, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://mcp.example.net/mcp", "https://mcp.example.net/mcp"),
        ("https://user:pw@mcp.example.net:8443/mcp", f"https://{REDACTED}@mcp.example.net:8443/mcp"),
        ("https://h/mcp/?apiKey=abc&mode=x&flag", f"https://h/mcp/?apiKey={REDACTED}&mode={REDACTED}&flag"),
        ("https://h/mcp#token", f"https://h/mcp#{REDACTED}"),
        ("https://h/mcp?apiKey=${DOCS_TOKEN}", f"https://h/mcp?apiKey={REDACTED}"),
        ("not a url", "not a url"),
    ],
)
def test_redact_url_keeps_scheme_host_port_path_and_parameter_names(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_stdio_command_line_redacts_each_url_argument() -> None:
    shown = redact_command("npx", ["-y", "mcp-remote", "https://host/sse?key=supersecret"])
    assert shown == f"npx -y mcp-remote https://host/sse?key={REDACTED}"


def test_redactor_replaces_values_of_eight_characters_or_more_only() -> None:
    redact = Redactor(["short", "longer-secret", "longer-secret-and-more"])
    text = "a short token, longer-secret-and-more and longer-secret"
    assert redact(text) == f"a short token, {REDACTED} and {REDACTED}"
