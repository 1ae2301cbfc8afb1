"""Reading files, and what a loaded `Config` offers: its source, --state-dir, secret names."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from fiskai_core.config import Config, Mode, load_config, parse_config
from fiskai_core.errors import ConfigError


def _write(tmp_path: Path, text: str, name: str = "agent.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_config_reads_the_file_and_records_its_path(tmp_path: Path) -> None:
    path = _write(tmp_path, "identity: ops\n")
    config = load_config(path, Mode.MCP)
    assert config.identity == "ops"
    assert config.source_path == path


def test_load_config_accepts_a_string_path(tmp_path: Path) -> None:
    path = _write(tmp_path, "identity: ops\n")
    assert load_config(str(path), Mode.MCP).source_path == path


def test_parse_config_has_no_source_path_and_names_its_source_in_errors() -> None:
    assert parse_config("", Mode.MCP).source_path is None
    with pytest.raises(ConfigError) as caught:
        parse_config("identity: [x]\n", Mode.MCP, source="inline.yaml")
    assert str(caught.value) == "inline.yaml:1: identity: got a list; expected a string"


def test_a_missing_file_names_the_path_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as caught:
        load_config(path, Mode.AGENT)
    assert str(caught.value) == (
        f'reading config "{path}": the file does not exist; create it, or pass --config with an existing file'
    )


def test_a_directory_is_not_a_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, Mode.MCP)
    assert str(caught.value) == (
        f'reading config "{tmp_path}": it is a directory; pass --config with the agent.yaml file inside it'
    )


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_bytes(b"identity: caf\xe9\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, Mode.MCP)
    assert str(caught.value) == f'reading config "{path}": byte 13 is not UTF-8; save the file as UTF-8 text'


def test_a_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_bytes(b"\xef\xbb\xbfidentity: ops\n")
    assert load_config(path, Mode.MCP).identity == "ops"


def test_an_empty_file_is_an_empty_config_then_the_mode_decides(tmp_path: Path) -> None:
    path = _write(tmp_path, "")
    assert load_config(path, Mode.MCP).identity == "fiskai"
    with pytest.raises(ConfigError) as caught:
        load_config(path, Mode.SERVER)
    assert str(caught.value).startswith(f"{path}: application_path is required for the a2a server")


def test_with_state_dir_replaces_the_sessions_settings(tmp_path: Path) -> None:
    config = parse_config("harness:\n  sessions:\n    options: {directory: /old}\n", Mode.MCP)
    moved = config.with_state_dir(tmp_path / "state")
    assert moved.harness.sessions.backend == "file"
    assert moved.harness.sessions.options == {"directory": str(tmp_path / "state")}
    assert config.harness.sessions.options == {"directory": "/old"}
    assert moved.harness.memory == config.harness.memory


def test_with_state_dir_keeps_the_source(tmp_path: Path) -> None:
    path = _write(tmp_path, "")
    assert load_config(path, Mode.MCP).with_state_dir("/s").source_path == path


@pytest.mark.parametrize("state_dir", [None, ""])
def test_with_state_dir_empty_is_a_no_op(state_dir: str | None) -> None:
    config = parse_config("harness: {sessions: {backend: jetstream}}\n", Mode.MCP)
    assert config.with_state_dir(state_dir) is config


def test_with_state_dir_refuses_a_non_file_backend(tmp_path: Path) -> None:
    path = _write(tmp_path, "nats_context: x\nharness:\n  sessions:\n    backend: jetstream\n")
    config = load_config(path, Mode.MCP)
    with pytest.raises(ConfigError) as caught:
        config.with_state_dir("/var/state")
    assert str(caught.value) == (
        f"{path}:4: --state-dir applies only to the file session backend, but harness.sessions.backend is "
        '"jetstream": remove --state-dir, or set harness.sessions.backend to "file"'
    )


def test_credential_env_names_need_the_vector_tier_on() -> None:
    def names(text: str) -> list[str]:
        return parse_config(text, Mode.MCP).credential_env_names()

    assert names("") == []
    assert names("harness: {knowledge: {enabled: true}}") == []
    assert names("harness: {knowledge: {enabled: false, embeddings: {api_key_env: KEY}}}") == []
    assert names("harness: {knowledge: {enabled: true, embeddings: {api_key_env: ' KEY '}}}") == ["KEY"]
    assert names("harness: {knowledge: {enabled: true, embeddings: {api_key_env: '  '}}}") == []


def test_error_at_names_the_file_and_line_of_a_setting(tmp_path: Path) -> None:
    path = _write(tmp_path, "harness:\n  memory:\n    options:\n      directry: /m\n")
    config = load_config(path, Mode.MCP)
    error = config.error_at(("harness", "memory", "options", "directry"), 'unknown option; did you mean "directory"?')
    assert str(error) == f'{path}:4: harness.memory.options.directry: unknown option; did you mean "directory"?'
    missing = config.error_at(("harness", "memory", "options", "bucket"), "required by the jetstream backend")
    assert str(missing) == f"{path}:3: harness.memory.options.bucket: required by the jetstream backend"


def test_configs_are_immutable() -> None:
    config = parse_config("", Mode.MCP)
    with pytest.raises(ValidationError):
        config.identity = "other"


def test_config_built_in_code_resolves_like_a_parsed_one() -> None:
    config = Config.model_validate({"application_path": "/bin/tool", "llm": {"model": "m"}})
    assert (config.identity, config.harness.knowledge.directory) == ("tool", "knowledge/tool")
    assert Config().identity == "fiskai"
    assert Config(identity="x").harness.knowledge.directory == "knowledge/x"
