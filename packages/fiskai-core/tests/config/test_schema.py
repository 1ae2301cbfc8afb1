"""Every key of agent.yaml: its default, its normalization, and the type it must have."""

from datetime import timedelta
from pathlib import Path

import pytest

from fiskai_core.config import Config, Mode, load_config, parse_config
from fiskai_core.errors import ConfigError
from fiskai_core.tools import FilterRule


def _mcp(text: str) -> Config:
    return parse_config(text, Mode.MCP)


def _error(text: str, tmp_path: Path) -> str:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, Mode.MCP)
    return str(caught.value).replace(str(path), "agent.yaml")


def test_empty_document_gives_every_default() -> None:
    config = _mcp("")
    assert config.identity == "fiskai"
    assert config.application_path == ""
    assert config.nats_context == ""
    assert config.system_prompt == ""
    assert (config.include.tools, config.include.tags) == ([], [])
    assert (config.exclude.tools, config.exclude.tags) == ([], [])
    assert config.global_flags == []
    assert config.remote_agents == []
    assert config.remote_tools == []
    agent = config.expose.agent
    assert agent.agent_to_agent is False
    assert agent.mcp is None
    assert (agent.a2a.max_concurrent_tools, agent.a2a.tool_timeout) == (0, None)
    assert (agent.tools.include.tools, agent.tools.exclude.tags) == ([], [])
    harness = config.harness
    assert harness.human_in_the_loop.enabled is False
    assert harness.confirm_tags == []
    assert (harness.no_tui, harness.no_bell) == (False, False)
    assert (harness.memory.enabled, harness.memory.backend, harness.memory.no_index) == (False, "file", False)
    assert harness.memory.options == {}
    knowledge = harness.knowledge
    assert (knowledge.enabled, knowledge.paths, knowledge.directory) == (False, [], "knowledge/fiskai")
    assert (knowledge.top_k, knowledge.max_injected_tokens, knowledge.embeddings) == (5, 6000, None)
    assert (harness.sessions.backend, harness.sessions.options) == ("file", {})
    llm = config.llm
    assert (llm.model, llm.provider) == ("", "anthropic")
    budget = llm.budget
    assert (budget.max_tokens, budget.max_output_tokens, budget.max_iterations) == (500_000, 0, 50)
    assert budget.call_timeout == timedelta(seconds=120)
    assert (llm.thinking.enabled, llm.no_prompt_cache, llm.no_tool_search) == (False, False, False)
    assert config.source_path is None


def test_whitespace_and_comment_only_documents_are_empty() -> None:
    assert _mcp("# nothing yet\n\n").identity == "fiskai"
    assert _mcp("---\n").llm.provider == "anthropic"


def test_every_key_is_read() -> None:
    config = _mcp(
        """
identity: ops-agent
application_path: /usr/local/bin/nats
nats_context: prod
system_prompt: |
  You operate NATS.
include: {tools: ["^stream_"], tags: [ops]}
exclude: {tools: [purge], tags: [""]}
global_flags: [server]
remote_agents: [{name: peer, alias: p}]
remote_tools:
  - name: billing
    alias: bill
    include: {tools: [invoice]}
    exclude: {tools: [delete]}
expose:
  agent:
    agent_to_agent: true
    mcp:
      port: 9090
      address: 0.0.0.0
      instructions: Use with care.
      confirm_over_mcp: always
      builtins: [knowledge_search]
      max_concurrent_tools: 4
      tool_timeout: 45s
    a2a: {max_concurrent_tools: 3, tool_timeout: 1m}
    tools: {include: {tags: [public]}, exclude: {tools: [secret]}}
harness:
  human_in_the_loop: {enabled: true}
  confirm_tags: [danger]
  no_tui: true
  no_bell: true
  memory: {enabled: true, backend: jetstream, no_index: true, options: {bucket: MEM, prefix: x}}
  knowledge:
    enabled: true
    paths: [docs, notes]
    directory: /var/kb
    top_k: 7
    max_injected_tokens: 900
    embeddings:
      base_url: http://localhost:11434/v1
      model: nomic-embed-text
      api_key_env: EMBED_KEY
      timeout: 10s
      query_prefix: "search_query: "
      document_prefix: "search_document: {title}: "
  sessions: {backend: jetstream, options: {stream: RUNS}}
  environment: {strip: [MYCORP_*], pass: [GH_TOKEN]}
llm:
  model: claude-sonnet-4-6
  provider: anthropic
  budget: {max_tokens: 1000, max_output_tokens: 2000, max_iterations: 9, call_timeout: 1m30s}
  thinking: {enabled: true}
  no_prompt_cache: true
  no_tool_search: true
"""
    )
    assert config.identity == "ops-agent"
    assert config.application_path == "/usr/local/bin/nats"
    assert config.nats_context == "prod"
    assert config.system_prompt == "You operate NATS.\n"
    assert (config.include.tools, config.include.tags) == (["^stream_"], ["ops"])
    assert (config.exclude.tools, config.exclude.tags) == (["purge"], [""])
    assert config.global_flags == ["server"]
    assert [(agent.name, agent.alias) for agent in config.remote_agents] == [("peer", "p")]
    (host,) = config.remote_tools
    assert (host.name, host.alias, host.include.tools, host.exclude.tools) == (
        "billing",
        "bill",
        ["invoice"],
        ["delete"],
    )
    agent = config.expose.agent
    assert agent.agent_to_agent is True
    assert agent.mcp is not None
    assert (agent.mcp.port, agent.mcp.address, agent.mcp.instructions) == (9090, "0.0.0.0", "Use with care.")
    assert (agent.mcp.confirm_over_mcp, agent.mcp.builtins) == ("always", ["knowledge_search"])
    assert (agent.mcp.max_concurrent_tools, agent.mcp.tool_timeout) == (4, timedelta(seconds=45))
    assert (agent.a2a.max_concurrent_tools, agent.a2a.tool_timeout) == (3, timedelta(minutes=1))
    assert (agent.tools.include.tags, agent.tools.exclude.tools) == (["public"], ["secret"])
    harness = config.harness
    assert harness.human_in_the_loop.enabled is True
    assert harness.confirm_tags == ["danger"]
    assert (harness.no_tui, harness.no_bell) == (True, True)
    memory = harness.memory
    assert (memory.enabled, memory.backend, memory.no_index) == (True, "jetstream", True)
    assert memory.options == {"bucket": "MEM", "prefix": "x"}
    knowledge = harness.knowledge
    assert (knowledge.enabled, knowledge.paths, knowledge.directory) == (True, ["docs", "notes"], "/var/kb")
    assert (knowledge.top_k, knowledge.max_injected_tokens) == (7, 900)
    embeddings = knowledge.embeddings
    assert embeddings is not None
    assert (embeddings.base_url, embeddings.model, embeddings.api_key_env) == (
        "http://localhost:11434/v1",
        "nomic-embed-text",
        "EMBED_KEY",
    )
    assert embeddings.timeout == timedelta(seconds=10)
    assert (embeddings.query_prefix, embeddings.document_prefix) == ("search_query: ", "search_document: {title}: ")
    assert (harness.sessions.backend, harness.sessions.options) == ("jetstream", {"stream": "RUNS"})
    assert (harness.environment.strip, harness.environment.passthrough) == (["MYCORP_*"], ["GH_TOKEN"])
    llm = config.llm
    assert (llm.model, llm.provider) == ("claude-sonnet-4-6", "anthropic")
    assert (llm.budget.max_tokens, llm.budget.max_output_tokens, llm.budget.max_iterations) == (1000, 2000, 9)
    assert llm.budget.call_timeout == timedelta(seconds=90)
    assert (llm.thinking.enabled, llm.no_prompt_cache, llm.no_tool_search) == (True, True, True)


def test_zero_and_empty_values_take_the_defaults() -> None:
    config = _mcp(
        """
llm:
  provider: ""
  budget: {max_output_tokens: 0, call_timeout: ""}
harness:
  memory: {backend: ""}
  sessions: {backend: ""}
  knowledge: {top_k: 0, max_injected_tokens: -3, directory: "", embeddings: {timeout: ""}}
expose:
  agent:
    mcp: {confirm_over_mcp: "", max_concurrent_tools: 0, tool_timeout: ""}
    a2a: {tool_timeout: 0s}
"""
    )
    assert config.llm.provider == "anthropic"
    assert config.llm.budget.max_tokens == 500_000
    assert config.llm.budget.max_output_tokens == 0
    assert config.llm.budget.max_iterations == 50
    assert config.llm.budget.call_timeout == timedelta(seconds=120)
    assert (config.harness.memory.backend, config.harness.sessions.backend) == ("file", "file")
    assert (config.harness.knowledge.top_k, config.harness.knowledge.max_injected_tokens) == (5, 6000)
    assert config.harness.knowledge.directory == "knowledge/fiskai"
    assert config.harness.knowledge.embeddings is not None
    assert config.harness.knowledge.embeddings.timeout == timedelta(seconds=30)
    mcp = config.expose.agent.mcp
    assert mcp is not None
    # Unlike the original (`auto`), unset refuses gated commands to clients that cannot ask their user.
    assert (mcp.confirm_over_mcp, mcp.max_concurrent_tools, mcp.tool_timeout) == ("always", 0, None)
    assert config.expose.agent.a2a.tool_timeout is None


def test_budget_zero_rules_follow_the_newer_reference() -> None:
    # Reference 7.4: max_tokens 0 is unbounded; max_iterations and call_timeout refuse zero.
    assert _mcp("llm: {budget: {max_tokens: 0}}").llm.budget.max_tokens == 0
    for text, message in [
        ("llm: {budget: {max_iterations: 0}}", "invalid llm max_iterations 0: must be at least 1"),
        ("llm: {budget: {call_timeout: 0s}}", 'invalid llm call_timeout "0s": must be positive'),
        ("llm: {budget: {call_timeout: -5s}}", 'invalid llm call_timeout "-5s": must be positive'),
    ]:
        with pytest.raises(ConfigError, match=message):
            _mcp(text)


def test_top_k_is_clamped_to_twenty() -> None:
    assert _mcp("harness: {knowledge: {top_k: 21}}").harness.knowledge.top_k == 20
    assert _mcp("harness: {knowledge: {top_k: 20}}").harness.knowledge.top_k == 20
    assert _mcp("harness: {knowledge: {top_k: -1}}").harness.knowledge.top_k == 5


def test_explicit_max_output_tokens_is_kept() -> None:
    config = _mcp("llm: {thinking: {enabled: true}, budget: {max_output_tokens: 4096}}")
    assert config.llm.budget.max_output_tokens == 4096


def test_global_flags_are_trimmed_undashed_and_deduplicated_keeping_the_first() -> None:
    config = _mcp("application_path: app\nglobal_flags: [' --server ', trace, '-trace', '', '--', '  ', context]")
    assert config.global_flags == ["server", "trace", "context"]


def test_confirm_tags_are_trimmed_and_deduplicated() -> None:
    config = _mcp("harness: {confirm_tags: [' danger', danger, '', ' ', prod, 'danger ']}")
    assert config.harness.confirm_tags == ["danger", "prod"]


@pytest.mark.parametrize(("written", "normalized"), [("ALWAYS", "always"), (" Never ", "never"), ("Auto", "auto")])
def test_confirm_over_mcp_is_lowercased_and_trimmed(written: str, normalized: str) -> None:
    mcp = _mcp(f"expose: {{agent: {{mcp: {{confirm_over_mcp: '{written}'}}}}}}").expose.agent.mcp
    assert mcp is not None
    assert mcp.confirm_over_mcp == normalized


def test_confirm_over_mcp_defaults_to_refusing_clients_that_cannot_ask() -> None:
    mcp = _mcp("expose: {agent: {mcp: {}}}").expose.agent.mcp
    assert mcp is not None
    assert mcp.confirm_over_mcp == "always"


def test_builtins_are_trimmed_and_deduplicated() -> None:
    config = _mcp(
        "harness: {knowledge: {enabled: true}}\n"
        "expose: {agent: {mcp: {builtins: [' knowledge_search', knowledge_search, '']}}}"
    )
    assert config.expose.agent.mcp is not None
    assert config.expose.agent.mcp.builtins == ["knowledge_search"]


def test_mcp_presence_is_the_switch_even_when_empty() -> None:
    assert _mcp("expose: {agent: {mcp: {}}}").expose.agent.mcp is not None
    # A key with no value is null, and null means unset, as in Go.
    assert _mcp("expose:\n  agent:\n    mcp:\n").expose.agent.mcp is None


def test_null_values_mean_unset() -> None:
    config = _mcp("identity:\nllm:\n  model: ~\n  budget:\nharness: null\nglobal_flags:\n")
    assert (config.identity, config.llm.model, config.global_flags) == ("fiskai", "", [])
    assert config.llm.budget.max_tokens == 500_000


def test_unquoted_numbers_in_string_keys_read_as_written() -> None:
    config = _mcp("identity: 007\nllm: {model: 1.10}\nnats_context: 42")
    assert (config.identity, config.llm.model, config.nats_context) == ("007", "1.10", "42")
    assert config.harness.knowledge.directory == "knowledge/007"


def test_dates_in_string_keys_stay_text() -> None:
    assert _mcp("system_prompt: 2024-01-01").system_prompt == "2024-01-01"


def test_options_keep_the_raw_values_for_the_backend() -> None:
    config = _mcp(
        "harness:\n  memory:\n    options: {directory: /m, nested: {n: 1, f: 1.5, ok: true, none: null, list: [a, 2]}}"
    )
    assert config.harness.memory.options == {
        "directory": "/m",
        "nested": {"n": 1, "f": 1.5, "ok": True, "none": None, "list": ["a", 2]},
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "llm:\n  budget:\n    max_tokens: lots\n",
            'agent.yaml:3: llm.budget.max_tokens: got the string "lots"; expected an integer',
        ),
        (
            "llm:\n  budget:\n    max_tokens: '5'\n",
            'agent.yaml:3: llm.budget.max_tokens: got the string "5"; expected an integer',
        ),
        (
            "llm:\n  budget:\n    max_iterations: 2.5\n",
            "agent.yaml:3: llm.budget.max_iterations: got the number 2.5; expected an integer",
        ),
        ("harness:\n  no_tui: 1\n", "agent.yaml:2: harness.no_tui: got the number 1; expected true or false"),
        ("harness:\n  no_tui: 'true'\n", 'agent.yaml:2: harness.no_tui: got the string "true"; expected true or false'),
        ("identity: true\n", "agent.yaml:1: identity: got true; expected a string (quote the value)"),
        ("global_flags: server\n", 'agent.yaml:1: global_flags: got the string "server"; expected a list'),
        (
            "application_path: a\nglobal_flags:\n  - ok\n  - [x]\n",
            "agent.yaml:4: global_flags[1]: got a list; expected a string",
        ),
        (
            "harness:\n  memory:\n    options: [a]\n",
            "agent.yaml:3: harness.memory.options: got a list; expected a mapping",
        ),
        (
            "llm: fast\n",
            'agent.yaml:1: llm: got the string "fast"; expected a mapping with keys model, provider, budget, thinking, no_prompt_cache, no_tool_search, base_url, capabilities, reasoning_effort, tool_definition_budget',
        ),
        (
            "remote_tools:\n  - billing\n",
            'agent.yaml:2: remote_tools[0]: got the string "billing"; expected a mapping with keys name, alias, include, exclude',
        ),
        (
            "llm:\n  budget:\n    call_timeout: [1]\n",
            "agent.yaml:3: llm.budget.call_timeout: got a list; expected a duration such as 120s, 1m30s or 500ms",
        ),
        (
            "expose:\n  agent:\n    mcp:\n      confirm_over_mcp: [a]\n",
            "agent.yaml:4: expose.agent.mcp.confirm_over_mcp: got a list; expected one of auto, always or never",
        ),
        (
            "llm:\n  budget:\n    max_tokens: 9223372036854775808\n",
            "agent.yaml:3: llm.budget.max_tokens: must fit in a signed 64-bit integer",
        ),
    ],
)
def test_type_errors_name_the_key_line_and_expected_type(text: str, message: str, tmp_path: Path) -> None:
    assert _error(text, tmp_path) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "llm:\n  budget:\n    max_tokens: -1\n",
            "agent.yaml:3: llm.budget.max_tokens: invalid llm max_tokens -1: must not be negative",
        ),
        (
            "llm:\n  budget:\n    max_output_tokens: -2\n",
            "agent.yaml:3: llm.budget.max_output_tokens: invalid llm max_output_tokens -2: must not be negative",
        ),
        (
            "llm:\n  budget:\n    max_iterations: -3\n",
            "agent.yaml:3: llm.budget.max_iterations: invalid llm max_iterations -3: must not be negative",
        ),
        (
            "llm:\n  budget:\n    call_timeout: soon\n",
            'agent.yaml:3: llm.budget.call_timeout: invalid llm call_timeout "soon": time: invalid duration "soon"',
        ),
        (
            "llm:\n  budget:\n    call_timeout: 30\n",
            'agent.yaml:3: llm.budget.call_timeout: invalid llm call_timeout "30": time: missing unit in duration "30"',
        ),
        (
            "harness:\n  knowledge:\n    embeddings:\n      timeout: 0s\n",
            'agent.yaml:4: harness.knowledge.embeddings.timeout: invalid knowledge.embeddings.timeout "0s": must be positive',
        ),
        (
            "harness:\n  knowledge:\n    embeddings:\n      timeout: -1s\n",
            'agent.yaml:4: harness.knowledge.embeddings.timeout: invalid knowledge.embeddings.timeout "-1s": must be positive',
        ),
        (
            "harness:\n  knowledge:\n    embeddings:\n      timeout: 5q\n",
            'agent.yaml:4: harness.knowledge.embeddings.timeout: invalid knowledge.embeddings.timeout "5q": time: unknown unit "q" in duration "5q"',
        ),
        (
            "expose:\n  agent:\n    mcp:\n      confirm_over_mcp: Sometimes\n",
            'agent.yaml:4: expose.agent.mcp.confirm_over_mcp: invalid confirm_over_mcp "Sometimes": must be auto, always or never',
        ),
        (
            "expose:\n  agent:\n    mcp:\n      max_concurrent_tools: -1\n",
            "agent.yaml:4: invalid expose.agent.mcp.max_concurrent_tools -1: must not be negative",
        ),
        (
            "expose:\n  agent:\n    mcp:\n      max_concurrent_tools: 1025\n",
            "agent.yaml:4: invalid expose.agent.mcp.max_concurrent_tools 1025: must not exceed 1024",
        ),
        (
            "expose:\n  agent:\n    a2a:\n      max_concurrent_tools: -7\n",
            "agent.yaml:4: invalid expose.agent.a2a.max_concurrent_tools -7: must not be negative",
        ),
        (
            "expose:\n  agent:\n    a2a:\n      max_concurrent_tools: 4096\n",
            "agent.yaml:4: invalid expose.agent.a2a.max_concurrent_tools 4096: must not exceed 1024",
        ),
        (
            "expose:\n  agent:\n    mcp:\n      tool_timeout: -1s\n",
            'agent.yaml:4: invalid expose.agent.mcp.tool_timeout "-1s": must not be negative',
        ),
        (
            "expose:\n  agent:\n    a2a:\n      tool_timeout: 10\n",
            'agent.yaml:4: invalid expose.agent.a2a.tool_timeout "10": time: missing unit in duration "10"',
        ),
        (
            "expose:\n  agent:\n    mcp:\n      builtins: [knowledge_search, memory_read]\n",
            'agent.yaml:4: expose.agent.mcp.builtins: "memory_read" cannot be exposed over MCP; the only exposable '
            "built-in is the read-only knowledge_search (the memory and human_in_the_loop built-ins are never "
            "exposable because they need operator state or interaction)",
        ),
    ],
)
def test_rejected_values_use_the_original_messages(text: str, message: str, tmp_path: Path) -> None:
    assert _error(text, tmp_path) == message


def test_limits_at_the_ceiling_are_accepted() -> None:
    config = _mcp("expose: {agent: {mcp: {max_concurrent_tools: 1024}, a2a: {max_concurrent_tools: 1024}}}")
    assert config.expose.agent.mcp is not None
    assert config.expose.agent.mcp.max_concurrent_tools == 1024
    assert config.expose.agent.a2a.max_concurrent_tools == 1024


def test_the_earliest_problem_in_the_file_is_reported(tmp_path: Path) -> None:
    text = "llm:\n  budget:\n    max_tokens: -1\nidentity: [x]\nharness:\n  no_tui: 3\n"
    assert _error(text, tmp_path).startswith("agent.yaml:3: llm.budget.max_tokens")


def test_tool_filters_satisfy_the_selection_rule_protocol() -> None:
    config = _mcp("include: {tools: [a]}\nexpose: {agent: {tools: {exclude: {tags: [b]}}}}")
    include: FilterRule = config.include
    exclude: FilterRule = config.expose.agent.tools.exclude
    assert (list(include.tools), list(exclude.tags)) == (["a"], ["b"])


def test_tool_timeout_defaults_to_five_minutes_and_zero_means_no_limit() -> None:
    assert _mcp("").harness.tool_timeout == timedelta(minutes=5)
    assert _mcp("harness:\n  tool_timeout: 0s\n").harness.tool_timeout == timedelta(0)
    assert _mcp("harness:\n  tool_timeout: 90s\n").harness.tool_timeout == timedelta(seconds=90)


def test_a_negative_tool_timeout_is_refused_naming_the_key(tmp_path: Path) -> None:
    message = _error("harness:\n  tool_timeout: -1s\n", tmp_path)
    assert 'harness.tool_timeout "-1s": must not be negative; 0s means no limit' in message


def test_request_timeout_defaults_to_two_minutes_and_is_raised_to_thirty_seconds() -> None:
    assert _mcp("").expose.agent.a2a.request_timeout == timedelta(seconds=120)
    raised = _mcp("expose:\n  agent:\n    a2a:\n      request_timeout: 5s\n")
    assert raised.expose.agent.a2a.request_timeout == timedelta(seconds=30)


@pytest.mark.parametrize("written", ["0s", "-5s"])
def test_a_request_timeout_of_zero_or_less_is_refused(written: str, tmp_path: Path) -> None:
    message = _error(f"expose:\n  agent:\n    a2a:\n      request_timeout: {written}\n", tmp_path)
    assert f'expose.agent.a2a.request_timeout "{written}": must be positive (at least 30s)' in message


def test_prompts_presence_enables_them_with_one_worker_and_no_elicitation() -> None:
    assert _mcp("").expose.agent.a2a.prompts is None
    prompts = _mcp("expose:\n  agent:\n    a2a:\n      prompts: {}\n").expose.agent.a2a.prompts
    assert prompts is not None and (prompts.workers, prompts.elicit) == (1, False)
    assert _mcp("expose:\n  agent:\n    a2a:\n      serve_tools: true\n").expose.agent.a2a.serve_tools
