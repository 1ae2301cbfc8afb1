"""The agent.yaml models: one frozen pydantic model per block, unknown keys forbidden.

Field names are the YAML keys. Validators here do what the original's `prepare()` does to one block at
a time (defaults for zero values, normalization, duration parsing, range checks) and raise the
original's exact messages as `SettingError`. Checks that span blocks or depend on the mode live in
`_modes.py`; turning pydantic errors into one-line `ConfigError`s lives in `_diagnostics.py`.

Validation is strict (a quoted `"5"` is not an integer, `1` is not a boolean) except that a string
key accepts an unquoted number as written, as Go's YAML decoder does. A key set to null (`mcp:` with
nothing after it) counts as absent, also as in Go.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    ValidationInfo,
    field_validator,
    model_validator,
)

from fiskai_core._gojson import go_quote
from fiskai_core.exec import HARNESS_CREDENTIAL_PREFIXES as _HARNESS_CREDENTIAL_PREFIXES
from fiskai_core.tools import DEFINITION_TOKEN_BUDGET

from ._duration import DurationError, parse_go_duration
from ._yaml import YamlFloat, YamlInt

__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "KNOWLEDGE_SEARCH_TOOL",
    "CaptureSettings",
    "HookCommand",
    "HooksSettings",
    "PiiSettings",
    "TelemetrySettings",
    "A2ASettings",
    "Block",
    "BudgetSettings",
    "CitationRule",
    "HarnessTool",
    "CapabilitiesSettings",
    "CapabilitySetting",
    "EmbeddingsSettings",
    "EnvironmentSettings",
    "ExposeAgentSettings",
    "ExposeSettings",
    "ExposeToolsSettings",
    "FlagNames",
    "HarnessSettings",
    "HumanInTheLoopSettings",
    "Int",
    "KnowledgeSettings",
    "LLMSettings",
    "MCPSettings",
    "JobsSettings",
    "PromptsSettings",
    "MemorySettings",
    "RemoteAgent",
    "RemoteToolHost",
    "SessionsSettings",
    "SettingError",
    "Text",
    "ThinkingSettings",
    "ToolFilter",
    "as_written",
]

KNOWLEDGE_SEARCH_TOOL = "knowledge_search"
DEFAULT_REQUEST_TIMEOUT = timedelta(seconds=120)
MIN_REQUEST_TIMEOUT = timedelta(seconds=30)
DEFAULT_TOOL_TIMEOUT = timedelta(minutes=5)
"""`harness.tool_timeout` when unset (the Go agent's 0.0.5+ default for `run` and `serve` alike)."""
MAX_CONCURRENT_TOOLS_CEILING = 1024
_INT64_MAX = (1 << 63) - 1


class SettingError(ValueError):
    """A value is the right type but not allowed; the message is the original's exact wording."""


def as_written(value: object) -> object:
    """An unquoted YAML number as its source text; any other value unchanged."""
    # Go decodes any scalar into a string field, so `model: 1.10` means "1.10", not 1.1.
    if isinstance(value, YamlInt | YamlFloat):
        return value.text
    return value


def _names(values: list[str]) -> list[str]:
    """Trim, drop empties, dedupe keeping the first (confirm_tags, builtins)."""
    return list(dict.fromkeys(name for value in values if (name := value.strip())))


def _flag_names(values: list[str]) -> list[str]:
    """As `_names`, also dropping leading dashes so `--trace` and `trace` are one flag."""
    return list(dict.fromkeys(name for value in values if (name := value.strip().lstrip("-").strip())))


def _in_int64(value: int) -> int:
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise ValueError("must fit in a signed 64-bit integer")
    return value


Text = Annotated[str, BeforeValidator(as_written)]
Int = Annotated[int, AfterValidator(_in_int64)]
FlagNames = Annotated[list[Text], AfterValidator(_flag_names)]


def _duration(value: object, *, key: str, default: timedelta | None) -> object:
    value = as_written(value)
    if value == "":
        return default
    if not isinstance(value, str):
        return value  # not text: the strict timedelta check names the expected type
    try:
        return parse_go_duration(value)
    except DurationError as err:
        raise SettingError(f"invalid {key} {go_quote(value)}: {err}") from None


class Block(BaseModel):
    """Shared settings of every block."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_unset(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        items = cast("dict[object, object]", data).items()
        # Unknown keys stay even when null, so they are still reported.
        return {key: value for key, value in items if value is not None or key not in cls.model_fields}


# After `Block`: the built-in tool and citation blocks build on it (and are used by the blocks below).
from ._builtin_tools import CitationRule, HarnessTool, check_citation_rules, check_harness_tools  # noqa: E402


class ToolFilter(Block):
    """An include or exclude rule: `tools` are unanchored regexes on tool names, `tags` exact tags."""

    tools: list[Text] = Field(default_factory=list[str])
    tags: list[Text] = Field(default_factory=list[str])
    """`""` matches a tool with no tags."""


class RemoteAgent(Block):
    """A `remote_agents` entry (parsed and kept; nothing reads it yet, as in the original)."""

    name: Text = ""
    alias: Text = ""


class RemoteToolHost(Block):
    """A `remote_tools` entry: a peer agent whose tools are imported over NATS."""

    name: Text = ""
    alias: Text = ""
    """Prefix for imported names that collide; defaults to `name` where used."""
    include: ToolFilter = Field(default_factory=ToolFilter)
    exclude: ToolFilter = Field(default_factory=ToolFilter)


class BudgetSettings(Block):
    """`llm.budget`, with the 0.0.5+ defaults and zero rules (reference 7.4); negative is an error."""

    max_tokens: Int = 500_000
    """Cumulative over the conversation (all four usage tiers); `0` = unbounded."""
    max_output_tokens: Int = 0
    """0 = the built-in per-call default (8192, or 16384 with thinking)."""
    max_iterations: Int = 50
    """Model calls per turn; zero is refused."""
    call_timeout: timedelta = timedelta(seconds=120)
    """How long one model call may take; zero or negative is refused."""

    @field_validator("max_tokens", "max_output_tokens", "max_iterations")
    @classmethod
    def _not_negative(cls, value: int, info: ValidationInfo) -> int:
        name = info.field_name or ""
        if value < 0:
            raise SettingError(f"invalid llm {name} {value}: must not be negative")
        if value == 0 and name == "max_iterations":
            raise SettingError("invalid llm max_iterations 0: must be at least 1 (omit it for the default, 50)")
        return value

    @field_validator("call_timeout", mode="before")
    @classmethod
    def _call_timeout(cls, value: object) -> object:
        parsed = _duration(value, key="llm call_timeout", default=timedelta(seconds=120))
        if isinstance(parsed, timedelta) and parsed <= timedelta(0):
            written = go_quote(str(as_written(value)))
            raise SettingError(f"invalid llm call_timeout {written}: must be positive (omit it for the default, 120s)")
        return parsed


class ThinkingSettings(Block):
    """`llm.thinking`."""

    enabled: bool = False


def _capability_setting(value: object) -> object:
    # YAML 1.1 reads an unquoted on/off/true/false as a boolean; each means the same as the word.
    if isinstance(value, bool):
        return "on" if value else "off"
    return value


CapabilitySetting = Annotated[Literal["auto", "on", "off"], BeforeValidator(_capability_setting)]


class CapabilitiesSettings(Block):
    """`llm.capabilities`: force a server capability on or off; `auto` decides from the model and base URL."""

    tool_search: CapabilitySetting = "auto"
    """Server-side tool search; off (with many tools) uses the client-side `find_tools` finder instead."""
    prompt_cache: CapabilitySetting = "auto"
    thinking: CapabilitySetting = "auto"
    """Whether the server accepts thinking; `llm.thinking.enabled` still decides whether it is asked for."""


class LLMSettings(Block):
    """`llm`: the model and how the loop may spend on it."""

    model: Text = ""
    """Required in agent mode; any string is accepted."""
    provider: Text = "anthropic"
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    thinking: ThinkingSettings = Field(default_factory=ThinkingSettings)
    no_prompt_cache: bool = False
    no_tool_search: bool = False
    base_url: Text = ""
    """An Anthropic-compatible server (Ollama, llama.cpp, vLLM, a proxy); empty means the provider's own API."""
    capabilities: CapabilitiesSettings = Field(default_factory=CapabilitiesSettings)
    reasoning_effort: Text = ""
    """Passed to the model unchecked (Anthropic: `low`, `medium`, `high`, `xhigh`, `max`); empty sends nothing. A
    server that does not take it (`llm.capabilities`) gets nothing, with a warning."""
    tool_definition_budget: Int = DEFINITION_TOKEN_BUDGET
    """Tokens (estimated at 4 bytes each) of application and remote tool definitions a request carries
    whole on a server without tool search; above it they are deferred behind `find_tools`. 0 = default."""

    @field_validator("tool_definition_budget")
    @classmethod
    def _budget_not_negative(cls, value: int) -> int:
        if value < 0:
            raise SettingError(f"invalid llm tool_definition_budget {value}: must not be negative")
        return value or DEFINITION_TOKEN_BUDGET

    @field_validator("provider")
    @classmethod
    def _default_provider(cls, value: str) -> str:
        return value or "anthropic"


class HumanInTheLoopSettings(Block):
    """`harness.human_in_the_loop`."""

    enabled: bool = False


class MemorySettings(Block):
    """`harness.memory`: `options` is checked by the chosen backend when the store is built."""

    enabled: bool = False
    backend: Text = "file"
    no_index: bool = False
    read_only: bool = False
    """Offer only `memory_list` and `memory_read`: the run can use what earlier runs saved but change nothing."""
    options: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue])

    @field_validator("backend")
    @classmethod
    def _default_backend(cls, value: str) -> str:
        return value or "file"


class EmbeddingsSettings(Block):
    """`harness.knowledge.embeddings`: an OpenAI-compatible server (base_url and model checked at store open)."""

    base_url: Text = ""
    model: Text = ""
    api_key_env: Text = ""
    """The NAME of the environment variable holding the bearer token, never the token."""
    timeout: timedelta = timedelta(seconds=30)
    query_prefix: Text = ""
    document_prefix: Text = ""
    """May contain the `{title}` placeholder."""

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, value: object) -> object:
        parsed = _duration(value, key="knowledge.embeddings.timeout", default=timedelta(seconds=30))
        if isinstance(parsed, timedelta) and parsed <= timedelta(0):
            written = as_written(value)
            raise SettingError(f"invalid knowledge.embeddings.timeout {go_quote(str(written))}: must be positive")
        return parsed


class KnowledgeSettings(Block):
    """`harness.knowledge`: the local index searched by `knowledge_search`."""

    enabled: bool = False
    paths: list[Text] = Field(default_factory=list[str])
    directory: Text = ""
    """`knowledge/<identity>` unless set (filled in by `Config`)."""
    top_k: Int = 5
    max_injected_tokens: Int = 6000
    embeddings: EmbeddingsSettings | None = None
    """None = lexical-only."""
    result_format: Literal["pack", "json"] = "pack"
    """What `knowledge_search` returns: `pack` (a token-budgeted context pack with its receipt) or `json`
    (the Go agent's `{"tier", "status", "note"?, "results": [{"citation", "section"?, "content"}]}`, for
    prompts written against it)."""
    read_tool: bool = False
    """Add `knowledge_read`: a cited section with `before`/`after` neighbours, up to `max_injected_tokens / 2`."""
    expand_to_section: bool = False
    """Widen each `knowledge_search` hit to its whole heading section (`max_injected_tokens / top_k` tokens each,
    cited as `docs/foo.md#5..#9`); needs `result_format: json` (a pack chooses its own excerpts)."""
    citations: list[CitationRule] = Field(default_factory=list[CitationRule])
    """Ordered rules rewriting a document's path into the citation the model sees (the first match wins)."""

    @field_validator("citations")
    @classmethod
    def _citations(cls, rules: list[CitationRule]) -> list[CitationRule]:
        return check_citation_rules(rules)

    @model_validator(mode="after")
    def _expand_needs_json(self) -> KnowledgeSettings:
        if self.expand_to_section and self.result_format != "json":
            raise SettingError(
                "harness.knowledge.expand_to_section widens the whole-chunk hits of result_format: json; set "
                "result_format: json, or drop expand_to_section (a context pack chooses its own excerpts)"
            )
        return self

    @field_validator("top_k")
    @classmethod
    def _top_k(cls, value: int) -> int:
        return 5 if value <= 0 else min(value, 20)

    @field_validator("max_injected_tokens")
    @classmethod
    def _max_injected_tokens(cls, value: int) -> int:
        return 6000 if value <= 0 else value


class SessionsSettings(Block):
    """`harness.sessions`: where checkpointed runs are journaled; `options` is checked by the backend."""

    backend: Text = "file"
    options: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue])

    @field_validator("backend")
    @classmethod
    def _default_backend(cls, value: str) -> str:
        return value or "file"


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class EnvironmentSettings(Block):
    """`harness.environment`: which variables tool commands (and introspection) do not inherit.

    Every variable starting with `ANTHROPIC_` or `CLAUDE_CODE_` is always removed, and a default list of
    well-known credentials (see the fiskai-core README) unless passed; these add to that.
    """

    strip: list[Text] = Field(default_factory=list[str])
    """More variables to remove: exact names, or a prefix followed by `*` (`MYCORP_*`)."""
    passthrough: list[Text] = Field(default_factory=list[str], alias="pass")
    """Exact names from the default list a tool needs (a wrapped `gh` needs `GH_TOKEN`); `pass` in YAML."""

    @field_validator("strip")
    @classmethod
    def _strip(cls, values: list[str]) -> list[str]:
        names = _names(values)
        for name in names:
            bare = name[:-1] if name.endswith("*") else name
            if not _ENV_NAME.fullmatch(bare):
                raise SettingError(
                    f"harness.environment.strip: {go_quote(name)} is not a variable name or a prefix ending in *; "
                    "use letters, digits and '_' (for example MYCORP_TOKEN or MYCORP_*)"
                )
        return names

    @field_validator("passthrough")
    @classmethod
    def _passthrough(cls, values: list[str]) -> list[str]:
        names = _names(values)
        for name in names:
            if not _ENV_NAME.fullmatch(name):
                raise SettingError(
                    f"harness.environment.pass: {go_quote(name)} is not a variable name; list exact names "
                    "(prefixes are not accepted here)"
                )
            if name.startswith(_HARNESS_CREDENTIAL_PREFIXES):
                raise SettingError(
                    f"harness.environment.pass: {go_quote(name)} is the model provider's credential "
                    "namespace (ANTHROPIC_*, CLAUDE_CODE_*), which never reaches a tool; remove it"
                )
        return names

    @model_validator(mode="after")
    def _disjoint(self) -> EnvironmentSettings:
        both = [name for name in self.passthrough if name in self.strip]
        if both:
            raise SettingError(
                f"harness.environment: {go_quote(both[0])} is listed under both strip and pass; keep it in one"
            )
        return self


# After `Block` and its helpers, which the observability blocks build on.
from ._observe import CaptureSettings, HookCommand, HooksSettings, PiiSettings, TelemetrySettings  # noqa: E402


class HarnessSettings(Block):
    """`harness`: what the agent loop adds around the tools."""

    human_in_the_loop: HumanInTheLoopSettings = Field(default_factory=HumanInTheLoopSettings)
    confirm_tags: Annotated[list[Text], AfterValidator(_names)] = Field(default_factory=list[str])
    """Extra tags that gate a tool behind confirmation, on top of `ai:confirm`."""
    no_tui: bool = False
    no_bell: bool = False
    memory: MemorySettings = Field(default_factory=MemorySettings)
    knowledge: KnowledgeSettings = Field(default_factory=KnowledgeSettings)
    sessions: SessionsSettings = Field(default_factory=SessionsSettings)
    environment: EnvironmentSettings = Field(default_factory=EnvironmentSettings)
    """What tool commands do not inherit from the harness's environment, beyond the defaults."""
    hooks: HooksSettings = Field(default_factory=HooksSettings)
    """Commands asked before and after tool calls and about each prompt."""
    tools: list[HarnessTool] = Field(default_factory=list[HarnessTool])
    """Harness-implemented built-ins, offered only when listed: `read_file`, `base64_encode`."""
    pii: PiiSettings = Field(default_factory=PiiSettings)
    """Personal data and secrets in prompts and tool results: redacted (default), rejected, or let through."""
    tool_timeout: timedelta = DEFAULT_TOOL_TIMEOUT
    """How long one tool call may run in an agent run (`run`, `serve`, `tools call`); `0s` = no limit. A command
    is killed with its process group; a call waiting on an operator's answer is not limited."""

    @field_validator("tools")
    @classmethod
    def _tools(cls, tools: list[HarnessTool]) -> list[HarnessTool]:
        return check_harness_tools(tools)

    @field_validator("tool_timeout", mode="before")
    @classmethod
    def _tool_timeout(cls, value: object) -> object:
        parsed = _duration(value, key="harness.tool_timeout", default=DEFAULT_TOOL_TIMEOUT)
        if isinstance(parsed, timedelta) and parsed < timedelta(0):
            written = str(as_written(value))
            raise SettingError(
                f"invalid harness.tool_timeout {go_quote(written)}: must not be negative; 0s means no limit"
            )
        return parsed


# The expose blocks live in their own module (it imports the base blocks above, so it comes last).
from ._expose import (  # noqa: E402
    A2ASettings,
    ExposeAgentSettings,
    ExposeSettings,
    ExposeToolsSettings,
    JobsSettings,
    MCPSettings,
    PromptsSettings,
)
