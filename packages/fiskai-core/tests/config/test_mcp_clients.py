"""`mcp_clients` keys: every rule of the entry, the `mcp_servers` alias, and references checked but not read."""

from datetime import timedelta
from pathlib import Path

import pytest

from fiskai_core.config import Mode, UnresolvedReferenceError, check_references, parse_config, resolve_references
from fiskai_core.errors import ConfigError


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, Mode.MCP)
    return str(caught.value)


def test_mcp_clients_entry_defaults_and_both_transports_load() -> None:
    config = parse_config(
        """
mcp_clients:
  - name: filesystem
    alias: fs
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", /srv/data]
    env: {FS_TOKEN: "${file:/run/secrets/fs_token}", STATE: "${HOME}/cache"}
  - name: docs
    url: https://mcp.example.net/mcp?apiKey=${DOCS_TOKEN}
    headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
    timeout: 15s
    watch_tools: true
    confirm: all
""",
        Mode.MCP,
    )
    fs, docs = config.mcp_client_entries
    assert (fs.effective_alias, fs.transport, fs.timeout, fs.confirm, fs.watch_tools) == (
        "fs",
        "stdio",
        timedelta(seconds=30),
        "destructive",
        False,
    )
    assert (docs.effective_alias, docs.transport, docs.timeout, docs.confirm) == (
        "docs",
        "http",
        timedelta(seconds=15),
        "all",
    )
    # Parsing reads no variable: the reference stays as written.
    assert docs.headers["Authorization"] == "Bearer ${DOCS_TOKEN}"
    assert config.notices() == []


def test_mcp_servers_is_read_as_mcp_clients_with_a_notice() -> None:
    config = parse_config("mcp_servers: [{name: a, url: 'http://127.0.0.1:1/mcp'}]", Mode.MCP)
    assert [e.name for e in config.mcp_client_entries] == ["a"]
    assert config.notices() == [
        "agent.yaml uses mcp_servers, the earlier name of mcp_clients; rename the key to mcp_clients"
    ]
    both = "mcp_clients: [{name: a, url: 'http://h/'}]\nmcp_servers: [{name: b, url: 'http://h/'}]"
    assert "both are set; merge them into mcp_clients" in _error(both)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{command: x}", "mcp_clients[0]: the server needs a name"),
        ("{name: 'a b', command: x}", 'mcp_clients[0].name: name "a b" is invalid'),
        ("{name: a, alias: 'x.y', command: x}", 'mcp_clients[0].alias: alias "x.y" is invalid'),
        ("{name: a, command: x, url: 'http://h/'}", 'server "a" sets both of command and url'),
        ("{name: a}", 'server "a" sets neither of command and url'),
        ("{name: a, command: x, headers: {A: b}}", "mcp_clients[0].headers: headers apply to url servers only"),
        ("{name: a, url: 'http://h/', env: {A: b}}", "mcp_clients[0].env: env apply to command servers only"),
        ("{name: a, url: 'ftp://h/'}", "url must start with http:// or https://"),
        ("{name: a, url: 'http://h/', timeout: 0s}", 'timeout must be positive, got "0s"'),
        ("{name: a, url: 'http://h/', timeout: -1s}", 'timeout must be positive, got "-1s"'),
        ("{name: a, url: 'http://h/', include: {tags: [x]}}", "mcp_clients[0].include.tags: MCP tools carry no tags"),
        ("{name: a, url: 'http://h/${TOKEN'}", "a reference opened with ${ is never closed"),
        ("{name: a, url: 'http://h/', headers: {A: '${1X}'}}", "mcp_clients[0].headers.A: reference '${1X}'"),
        ("{name: a, url: 'http://h/', headers: {A: '${file:}'}}", "names no file"),
        ("{name: a, url: 'http://h/', confirm: sometimes}", "expected one of all, destructive or none"),
    ],
)
def test_mcp_clients_entry_rule_names_the_key_and_the_fix(entry: str, message: str) -> None:
    assert message in _error(f"mcp_clients: [{entry}]")


def test_mcp_clients_names_and_effective_aliases_are_unique() -> None:
    assert 'server name "a" is used twice' in _error(
        "mcp_clients: [{name: a, url: 'http://h/'}, {name: a, url: 'http://h/'}]"
    )
    # b's alias defaults to its name, which a's alias already holds.
    message = _error("mcp_clients: [{name: a, alias: b, url: 'http://h/'}, {name: b, url: 'http://h/'}]")
    assert 'mcp_clients[1].alias: alias "b" is already the alias of mcp_clients[0]' in message


def test_dollar_name_without_braces_is_literal() -> None:
    assert check_references("Bearer $TOKEN and ${OK}") is None
    assert resolve_references("$TOKEN-${A}", root=None, server="s", environ={"A": "x"}).text == "$TOKEN-x"


def test_references_resolve_variables_and_files_with_every_value_kept_for_redaction(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("s3cr3t-value \n\n", encoding="utf-8")
    resolved = resolve_references(
        "Bearer ${TOKEN}/${file:secret}", root=tmp_path, server="docs", environ={"TOKEN": "abcdefgh12"}
    )
    assert resolved.text == "Bearer abcdefgh12/s3cr3t-value"
    assert resolved.secrets == ("abcdefgh12", "s3cr3t-value")


@pytest.mark.parametrize(
    ("value", "files", "message"),
    [
        ("${MISSING}", {}, 'mcp_clients server "docs": environment variable MISSING is not set'),
        ("${file:absent}", {}, 'mcp_clients server "docs": cannot read file'),
        ("${file:empty}", {"empty": " \n"}, "is empty; put the value in it"),
    ],
)
def test_unresolvable_reference_names_the_server_and_the_variable_or_file(
    tmp_path: Path, value: str, files: dict[str, str], message: str
) -> None:
    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(UnresolvedReferenceError) as caught:
        resolve_references(value, root=tmp_path, server="docs", environ={})
    assert message in str(caught.value)
