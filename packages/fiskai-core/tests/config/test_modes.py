"""Per-mode rules in the original's order: the first failure wins, with the original's words."""

from pathlib import Path

import pytest

from fiskai_core.config import Mode, load_config, parse_config
from fiskai_core.errors import ConfigError

GLOBAL_FLAGS = (
    "global_flags is set but application_path is not: global flags are the wrapped application's own globals and "
    "have nothing to attach to without an application; remove global_flags or set application_path"
)
A2A_APP = (
    "application_path is required for the a2a server: a2a serves the wrapped application's tools and cannot serve "
    "the built-in tools"
)
BUILTINS_KNOWLEDGE = (
    "expose.agent.mcp.builtins lists knowledge_search but knowledge is not enabled; add a harness.knowledge block "
    "with 'enabled: true' or remove knowledge_search from builtins"
)


def _identity_message(identity: str) -> str:
    return (
        f"identity \"{identity}\" is invalid: it must contain only letters, digits, '-' or '_' (it doubles as a "
        "NATS queue group); set an explicit identity if the application binary name contains other characters"
    )


def _error(text: str, mode: Mode, tmp_path: Path) -> str:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, mode)
    return str(caught.value).replace(str(path), "agent.yaml")


def _ok(text: str, mode: Mode) -> None:
    parse_config(text, mode)


MINIMAL_AGENT = "system_prompt: hi\nllm: {model: claude-sonnet-4-6}\n"


def test_minimal_configs_pass_each_mode() -> None:
    _ok(MINIMAL_AGENT, Mode.AGENT)
    _ok("", Mode.MCP)
    _ok("application_path: /bin/app\nnats_context: prod\n", Mode.SERVER)


@pytest.mark.parametrize("mode", list(Mode))
def test_global_flags_without_application_fail_in_every_mode(mode: Mode, tmp_path: Path) -> None:
    text = "nats_context: x\nglobal_flags: [trace]\n" + MINIMAL_AGENT
    assert _error(text, mode, tmp_path) == f"agent.yaml:2: {GLOBAL_FLAGS}"


def test_global_flags_that_normalize_to_nothing_need_no_application() -> None:
    _ok("global_flags: ['--', ' ']\n", Mode.MCP)


@pytest.mark.parametrize("mode", list(Mode))
def test_identity_pattern_applies_in_every_mode(mode: Mode, tmp_path: Path) -> None:
    text = "identity: my agent\napplication_path: /bin/app\nnats_context: x\n" + MINIMAL_AGENT
    assert _error(text, mode, tmp_path) == f"agent.yaml:1: {_identity_message('my agent')}"


def test_derived_identity_with_a_dot_is_rejected_at_the_application_path_line(tmp_path: Path) -> None:
    text = "# wraps nats\napplication_path: ./bin/nats.exe\n"
    assert _error(text, Mode.MCP, tmp_path) == f"agent.yaml:2: {_identity_message('nats.exe')}"


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("identity: ops\napplication_path: /bin/app\n", True),
        ("identity: app\napplication_path: /bin/app\n", True),
        ("identity: ''\napplication_path: /bin/app\n", False),
        ("identity:\napplication_path: /bin/app\n", False),
        ("application_path: /bin/app\n", False),
        ("{}\n", False),
    ],
)
def test_identity_written_tells_a_chosen_identity_from_a_derived_one(text: str, written: bool) -> None:
    config = parse_config(text, Mode.MCP)
    assert config.identity_written is written
    assert config.model_copy(update={"prompts": ["x"]}).identity_written is written, "kept by copies"


def test_explicit_identity_fixes_an_unusable_binary_name() -> None:
    config = parse_config("identity: nats\napplication_path: ./bin/nats.exe\n", Mode.MCP)
    assert config.identity == "nats"


@pytest.mark.parametrize(
    ("application_path", "identity"),
    [("/usr/local/bin/nats", "nats"), ("nats", "nats"), ("/opt/tools/my-app/", "my-app"), ("./x_y", "x_y")],
)
def test_identity_derives_from_the_application_basename(application_path: str, identity: str) -> None:
    config = parse_config(f"application_path: '{application_path}'\n", Mode.MCP)
    assert config.identity == identity
    assert config.harness.knowledge.directory == f"knowledge/{identity}"


def test_identity_defaults_to_fiskai_without_an_application() -> None:
    assert parse_config("identity: ''\n", Mode.MCP).identity == "fiskai"


def test_application_path_of_only_slashes_derives_an_invalid_identity(tmp_path: Path) -> None:
    assert _error("application_path: /\n", Mode.MCP, tmp_path) == f"agent.yaml:1: {_identity_message('/')}"


@pytest.mark.parametrize(
    ("hosts", "message"),
    [
        ("  - alias: x\n", "agent.yaml:3: remote_tools[0]: remote_tools host is missing a name"),
        (
            "  - name: ok\n  - name: bad.name\n",
            'agent.yaml:4: remote_tools[1].name: remote_tools host name "bad.name" is invalid: it must contain only '
            "letters, digits, '-' or '_' (it keys the NATS subjects)",
        ),
        (
            "  - name: billing\n    alias: 'b b'\n",
            'agent.yaml:4: remote_tools[0].alias: remote_tools host "billing" has an invalid alias "b b": it must '
            "contain only letters, digits, '-' or '_' (it prefixes imported tool names)",
        ),
        (
            "  - name: billing\n    exclude:\n      tags: [internal]\n",
            'agent.yaml:5: remote_tools[0].exclude.tags: remote_tools host "billing" has an exclude.tags filter, '
            "which cannot be honored: discovery does not carry tags, so a tool excluded by tag would be imported "
            "anyway; exclude by tool name instead",
        ),
        # Name before alias before exclude.tags, within one host.
        (
            "  - name: 'a b'\n    alias: 'c d'\n    exclude: {tags: [x]}\n",
            'agent.yaml:3: remote_tools[0].name: remote_tools host name "a b" is invalid: it must contain only '
            "letters, digits, '-' or '_' (it keys the NATS subjects)",
        ),
    ],
)
@pytest.mark.parametrize("mode", list(Mode))
def test_remote_tool_hosts_are_checked_in_every_mode(hosts: str, message: str, mode: Mode, tmp_path: Path) -> None:
    text = "nats_context: ctx\nremote_tools:\n" + hosts + "application_path: /bin/app\n" + MINIMAL_AGENT
    assert _error(text, mode, tmp_path) == message


def test_remote_include_tags_are_allowed() -> None:
    _ok("remote_tools: [{name: a, include: {tags: [x]}}]\n", Mode.MCP)


def test_shared_rules_run_in_order_global_flags_first(tmp_path: Path) -> None:
    text = "identity: 'bad id'\nglobal_flags: [x]\nremote_tools: [{alias: y}]\n"
    assert _error(text, Mode.MCP, tmp_path) == f"agent.yaml:2: {GLOBAL_FLAGS}"
    text = "identity: 'bad id'\nremote_tools: [{alias: y}]\n"
    assert _error(text, Mode.MCP, tmp_path) == f"agent.yaml:1: {_identity_message('bad id')}"


def test_builtins_knowledge_check_runs_before_the_mode_rules(tmp_path: Path) -> None:
    text = "global_flags: [x]\nexpose:\n  agent:\n    mcp:\n      builtins: [knowledge_search]\n"
    assert _error(text, Mode.MCP, tmp_path) == f"agent.yaml:5: {BUILTINS_KNOWLEDGE}"


def test_builtins_knowledge_search_passes_with_knowledge_enabled() -> None:
    _ok("harness: {knowledge: {enabled: true}}\nexpose: {agent: {mcp: {builtins: [knowledge_search]}}}\n", Mode.MCP)


def test_server_mode_requires_application_path_then_nats_context(tmp_path: Path) -> None:
    assert _error("", Mode.SERVER, tmp_path) == f"agent.yaml: {A2A_APP}"
    assert _error("nats_context: x\n", Mode.SERVER, tmp_path) == f"agent.yaml: {A2A_APP}"
    assert (
        _error("application_path: /bin/app\nnats_context: ''\n", Mode.SERVER, tmp_path)
        == "agent.yaml:2: nats_context is required for the a2a server: set nats_context in agent.yaml to a nats CLI "
        "context, or pass --server URL or --context NAME"
    )


def test_server_mode_needs_nothing_else() -> None:
    # No model, no prompt: the a2a server never calls an LLM.
    _ok("application_path: /bin/app\nnats_context: x\nremote_tools: [{name: a}]\n", Mode.SERVER)


def test_mcp_mode_needs_nothing_beyond_the_shared_rules() -> None:
    _ok("remote_tools: [{name: a}]\n", Mode.MCP)


def test_agent_mode_requires_nats_context_for_remote_tools_first(tmp_path: Path) -> None:
    text = "remote_tools:\n  - name: billing\n"
    assert _error(text, Mode.AGENT, tmp_path) == "agent.yaml:1: nats_context is required when remote_tools is set"


def test_agent_mode_requires_a_prompt_unless_served_over_mcp(tmp_path: Path) -> None:
    assert (
        _error("llm: {model: m}\n", Mode.AGENT, tmp_path)
        == "agent.yaml: system_prompt: prompt is required unless exposed over MCP"
    )
    assert (
        _error("system_prompt: ''\nllm: {model: m}\n", Mode.AGENT, tmp_path)
        == "agent.yaml:1: system_prompt: prompt is required unless exposed over MCP"
    )
    _ok("expose: {agent: {mcp: {}}}\nllm: {model: m}\n", Mode.AGENT)


def test_agent_mode_checks_the_prompt_before_the_model(tmp_path: Path) -> None:
    assert _error("", Mode.AGENT, tmp_path) == "agent.yaml: system_prompt: prompt is required unless exposed over MCP"


def test_agent_mode_requires_a_model_even_when_served_over_mcp(tmp_path: Path) -> None:
    assert _error("expose: {agent: {mcp: {}}}\n", Mode.AGENT, tmp_path) == "agent.yaml: llm.model is required"
    text = "system_prompt: hi\nllm:\n  provider: anthropic\n"
    assert _error(text, Mode.AGENT, tmp_path) == "agent.yaml:2: llm.model is required"


def test_application_path_is_optional_outside_server_mode() -> None:
    _ok(MINIMAL_AGENT, Mode.AGENT)
    _ok("", Mode.MCP)


def test_mode_accepts_its_string_value() -> None:
    assert parse_config("", Mode("mcp")).identity == "fiskai"
    assert [mode.value for mode in Mode] == ["agent", "mcp", "server"]
