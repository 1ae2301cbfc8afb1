"""Unknown keys are errors at every level, with a line, a did-you-mean and the allowed keys."""

from pathlib import Path

import pytest

from fiskai_core.config import Mode, load_config
from fiskai_core.errors import ConfigError

TOP = (
    "identity, application_path, tool_sources, nats_context, system_prompt, include, exclude, global_flags, "
    "remote_agents, remote_tools, mcp_clients, mcp_servers, expose, harness, llm, telemetry, "
    "description, display_name, icon, icon_url, prompts"
)


def _error(text: str, tmp_path: Path) -> str:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, Mode.MCP)
    message = str(caught.value)
    assert message.startswith(f"{path}:")
    return message.replace(str(path), "agent.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "identity: a\nidentty: b\n",
            f'agent.yaml:2: identty: unknown key; did you mean "identity"? allowed keys: {TOP}',
        ),
        (
            "llm:\n  model: x\n  budget:\n    max_token: 5\n",
            'agent.yaml:4: llm.budget.max_token: unknown key; did you mean "max_tokens"? allowed keys: '
            "max_tokens, max_output_tokens, max_iterations, call_timeout",
        ),
        (
            "llm:\n  thinking:\n    on: true\n",
            "agent.yaml:3: llm.thinking.on: unknown key; allowed keys: enabled",
        ),
        (
            "harness:\n  memory:\n    enabled: true\n    backnd: file\n",
            'agent.yaml:4: harness.memory.backnd: unknown key; did you mean "backend"? allowed keys: '
            "enabled, backend, no_index, read_only, options",
        ),
        (
            "harness:\n  sessions:\n    backend: jetstream\n    stream: RUNS\n",
            'agent.yaml:4: harness.sessions.stream: unknown key; did you mean "harness.sessions.options.stream"? '
            "allowed keys: backend, options",
        ),
        (
            "harness:\n  memory:\n    directory: /tmp/m\n",
            'agent.yaml:3: harness.memory.directory: unknown key; did you mean "harness.memory.options.directory"? '
            "allowed keys: enabled, backend, no_index, read_only, options",
        ),
        (
            "harness:\n  knowledge:\n    embeddings:\n      modle: m\n",
            'agent.yaml:4: harness.knowledge.embeddings.modle: unknown key; did you mean "model"? allowed keys: '
            "base_url, model, api_key_env, timeout, query_prefix, document_prefix",
        ),
        (
            "harness:\n  human_in_the_loop:\n    enable: true\n",
            'agent.yaml:3: harness.human_in_the_loop.enable: unknown key; did you mean "enabled"? allowed keys: '
            "enabled",
        ),
        (
            "expose:\n  agent:\n    mcp:\n      prot: 80\n",
            'agent.yaml:4: expose.agent.mcp.prot: unknown key; did you mean "port"? allowed keys: '
            "max_concurrent_tools, tool_timeout, port, address, instructions, confirm_over_mcp, builtins",
        ),
        (
            "expose:\n  agent:\n    a2a:\n      timeout: 5s\n",
            'agent.yaml:4: expose.agent.a2a.timeout: unknown key; did you mean "tool_timeout"? allowed keys: '
            "max_concurrent_tools, tool_timeout, serve_tools, request_timeout, prompts",
        ),
        (
            "expose:\n  mcp: {}\n",
            'agent.yaml:2: expose.mcp: unknown key; did you mean "expose.agent.mcp"? allowed keys: agent',
        ),
        (
            "remote_tools:\n  - name: a\n  - name: b\n    exclud: {tools: [x]}\n",
            'agent.yaml:4: remote_tools[1].exclud: unknown key; did you mean "exclude"? allowed keys: '
            "name, alias, include, exclude",
        ),
        (
            "include:\n  tool: [x]\n",
            'agent.yaml:2: include.tool: unknown key; did you mean "tools"? allowed keys: tools, tags',
        ),
        (
            "remote_agents:\n  - {name: a, nick: b}\n",
            "agent.yaml:2: remote_agents[0].nick: unknown key; allowed keys: name, alias",
        ),
    ],
)
def test_unknown_key_names_path_line_suggestion_and_allowed_keys(text: str, message: str, tmp_path: Path) -> None:
    assert _error(text, tmp_path) == message


@pytest.mark.parametrize(
    ("key", "home"),
    [
        ("memory", "harness.memory"),
        ("knowledge", "harness.knowledge"),
        ("sessions", "harness.sessions"),
        ("confirm_tags", "harness.confirm_tags"),
        ("no_tui", "harness.no_tui"),
        ("no_bell", "harness.no_bell"),
        ("human_in_the_loop", "harness.human_in_the_loop"),
        ("model", "llm.model"),
        ("budget", "llm.budget"),
        ("thinking", "llm.thinking"),
    ],
)
def test_a_key_in_the_wrong_block_points_at_its_home(key: str, home: str, tmp_path: Path) -> None:
    message = _error(f"system_prompt: hi\n{key}: {{}}\n", tmp_path)
    assert message == f'agent.yaml:2: {key}: unknown key; did you mean "{home}"? allowed keys: {TOP}'


def test_an_unknown_key_with_a_null_value_is_still_reported(tmp_path: Path) -> None:
    assert _error("harness:\n  memroy:\n", tmp_path).startswith(
        'agent.yaml:2: harness.memroy: unknown key; did you mean "memory"?'
    )


def test_an_ambiguous_key_gets_no_guess(tmp_path: Path) -> None:
    # `backend` belongs to harness.memory and harness.sessions alike (`enabled`, once as ambiguous, is now
    # shallowest under telemetry, so a stray top-level one is pointed there).
    assert _error("backend: file\n", tmp_path) == f"agent.yaml:1: backend: unknown key; allowed keys: {TOP}"


def test_unknown_option_keys_are_left_to_the_backend(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("harness:\n  memory:\n    options: {directry: /x}\n", encoding="utf-8")
    assert load_config(path, Mode.MCP).harness.memory.options == {"directry": "/x"}


def test_an_option_of_another_backend_block_gets_no_options_hint(tmp_path: Path) -> None:
    message = _error("harness:\n  sessions:\n    no_require_read_before_update: true\n", tmp_path)
    assert message == (
        "agent.yaml:3: harness.sessions.no_require_read_before_update: unknown key; allowed keys: backend, options"
    )
