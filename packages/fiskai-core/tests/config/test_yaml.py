"""YAML-level problems: syntax, duplicates, tags, aliases, merges and the top-level shape."""

from pathlib import Path

import pytest

from fiskai_core.config import Mode, load_config, parse_config
from fiskai_core.errors import ConfigError


def _error(text: str, tmp_path: Path) -> str:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, Mode.MCP)
    message = str(caught.value)
    assert "\n" not in message
    assert "Traceback" not in message
    return message.replace(str(path), "agent.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "llm:\n  model: a: b\n",
            "agent.yaml:2:11: malformed YAML: mapping values are not allowed in this context; "
            "fix the syntax at that position",
        ),
        (
            "identity: x\nglobal_flags: [a, b\n",
            "agent.yaml:3:1: malformed YAML: did not find expected ',' or ']' (while parsing a flow sequence); "
            "fix the syntax at that position",
        ),
        (
            "harness:\n\tno_tui: true\n",
            "agent.yaml:2:1: malformed YAML: found character that cannot start any token (while scanning for the "
            "next token); fix the syntax at that position",
        ),
        (
            "identity: a\n---\nidentity: b\n",
            "agent.yaml:2:1: malformed YAML: but found another document (expected a single document in the stream); "
            "fix the syntax at that position",
        ),
    ],
)
def test_malformed_yaml_names_line_column_and_problem(text: str, message: str, tmp_path: Path) -> None:
    assert _error(text, tmp_path) == message


def test_control_characters_are_reported_on_one_line(tmp_path: Path) -> None:
    assert _error("identity: a\x07\n", tmp_path).startswith("agent.yaml: malformed YAML: unacceptable character #x0007")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "identity: a\nllm: {}\nidentity: b\n",
            "agent.yaml:3: identity: duplicate key (first set at line 1); keep only one",
        ),
        (
            "harness:\n  memory:\n    enabled: true\n    backend: file\n    enabled: false\n",
            "agent.yaml:5: harness.memory.enabled: duplicate key (first set at line 3); keep only one",
        ),
        (
            "harness:\n  sessions:\n    options:\n      directory: /a\n      directory: /b\n",
            "agent.yaml:5: harness.sessions.options.directory: duplicate key (first set at line 4); keep only one",
        ),
        ("llm: {model: a, model: b}\n", "agent.yaml:1: llm.model: duplicate key (first set at line 1); keep only one"),
    ],
)
def test_duplicate_keys_are_errors(text: str, message: str, tmp_path: Path) -> None:
    assert _error(text, tmp_path) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "- identity: a\n",
            "agent.yaml:1: the top level must be a mapping of settings (identity, llm, harness, ...); got a list",
        ),
        (
            "just words\n",
            'agent.yaml:1: the top level must be a mapping of settings (identity, llm, harness, ...); got the string "just words"',
        ),
        (
            "42\n",
            "agent.yaml:1: the top level must be a mapping of settings (identity, llm, harness, ...); got the number 42",
        ),
    ],
)
def test_top_level_must_be_a_mapping(text: str, message: str, tmp_path: Path) -> None:
    assert _error(text, tmp_path) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "system_prompt: !!binary aGk=\n",
            "agent.yaml:1: system_prompt: unsupported YAML tag !!binary; write a plain value",
        ),
        ("llm:\n  model: !custom x\n", "agent.yaml:2: llm.model: unsupported YAML tag !custom; write a plain value"),
        ("? [a, b]\n: c\n", "agent.yaml:1: a mapping key must be a plain name, not a list or mapping"),
        (
            "llm: &a\n  model: *a\n",
            "agent.yaml:2: llm.model: a YAML alias refers to itself; remove the recursive alias",
        ),
        ("llm:\n  <<: [a]\n", "agent.yaml:2: llm: a '<<' merge key needs a mapping or a list of mappings"),
    ],
)
def test_unsupported_yaml_features_are_errors(text: str, message: str, tmp_path: Path) -> None:
    assert _error(text, tmp_path) == message


def test_alias_bombs_are_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    message = _error("\n".join(lines) + "\n", tmp_path)
    assert "expands to more than 100000 nodes" in message


def test_aliases_and_merge_keys_work_and_explicit_keys_win() -> None:
    config = parse_config(
        """
remote_tools:
  - name: billing
    include: &shared {tools: [invoice], tags: [finance]}
  - name: ledger
    include: *shared
  - name: audit
    include:
      <<: *shared
      tags: [audit]
""",
        Mode.MCP,
    )
    assert [host.include.tools for host in config.remote_tools] == [["invoice"]] * 3
    assert [host.include.tags for host in config.remote_tools] == [["finance"], ["finance"], ["audit"]]


def test_yaml_booleans_and_nulls_follow_yaml() -> None:
    config = parse_config("harness: {no_tui: yes, no_bell: True}\nllm: {thinking: {enabled: off}}\n", Mode.MCP)
    assert (config.harness.no_tui, config.harness.no_bell, config.llm.thinking.enabled) == (True, True, False)


def test_lines_are_counted_from_one_in_flow_and_block_style(tmp_path: Path) -> None:
    text = "# comment\n\nllm:\n  budget: {max_iterations: -1}\n"
    assert _error(text, tmp_path).startswith("agent.yaml:4: llm.budget.max_iterations:")
