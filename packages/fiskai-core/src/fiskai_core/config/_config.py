"""`Config`: the whole agent.yaml, resolved.

The root model derives what depends on more than one key (the identity from `application_path`, the
knowledge directory from the identity) and remembers where it was read from, so later errors about a
setting (an unknown backend option, a `--state-dir` conflict) can still name the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from pydantic import Field, PrivateAttr, model_validator

from fiskai_core._gojson import go_quote
from fiskai_core.errors import ConfigError

from ._mcp_clients import McpClientEntry
from ._origin import Origin
from ._schema import (
    Block,
    ExposeSettings,
    FlagNames,
    HarnessSettings,
    KnowledgeSettings,
    LLMSettings,
    RemoteAgent,
    RemoteToolHost,
    SessionsSettings,
    TelemetrySettings,
    Text,
    ToolFilter,
    as_written,
)
from ._tool_sources import ToolSourceSettings
from ._web import check_card

__all__ = ["DEFAULT_IDENTITY", "Config", "attach_origin", "go_base"]

DEFAULT_IDENTITY = "fiskai"
"""The identity of an agent that names neither an identity nor an application."""


def go_base(path: str) -> str:
    """Go's `filepath.Base`: the last element, trailing slashes ignored; `/` for all slashes."""
    if not path:
        return "."
    stripped = path.rstrip("/")
    if not stripped:
        return "/"
    return stripped.rsplit("/", 1)[-1]


class Config(Block):
    """A whole agent.yaml after defaults and normalization; build it with `load_config` or `parse_config`."""

    identity: Text = DEFAULT_IDENTITY
    """Explicit, else the basename of `application_path`, else `fiskai`; doubles as the NATS queue group."""
    application_path: Text = ""
    """The wrapped fisk application (shorthand for one `tool_sources` entry `fisk: PATH`, listed first)."""
    tool_sources: list[ToolSourceSettings] = Field(default_factory=list[ToolSourceSettings])
    """Further programs whose commands become tools: fisk applications and Python CLIs (click, typer,
    argparse), each with its own include/exclude, tag rules, denied parameters and name prefix."""
    nats_context: Text = ""
    system_prompt: Text = ""
    include: ToolFilter = Field(default_factory=ToolFilter)
    exclude: ToolFilter = Field(default_factory=ToolFilter)
    global_flags: FlagNames = Field(default_factory=list[str])
    """Application global flags the model may set: trimmed, leading dashes dropped, deduplicated."""
    remote_agents: list[RemoteAgent] = Field(default_factory=list[RemoteAgent])
    remote_tools: list[RemoteToolHost] = Field(default_factory=list[RemoteToolHost])
    mcp_clients: list[McpClientEntry] = Field(default_factory=list[McpClientEntry])
    """Third-party MCP servers whose tools the run imports as `<alias>_<tool>` (see the section below)."""
    mcp_servers: list[McpClientEntry] = Field(default_factory=list[McpClientEntry])
    """The earlier name of `mcp_clients`, still read (with a notice); set one of the two."""
    expose: ExposeSettings = Field(default_factory=ExposeSettings)
    harness: HarnessSettings = Field(default_factory=HarnessSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    description: Text = ""
    """What the agent does, for its card (the web channel's `/card`)."""
    display_name: Text = ""
    """A friendlier name than the identity for pages (at most 128 bytes)."""
    icon: Text = ""
    """One emoji (at most 16 bytes) pages show beside the name."""
    icon_url: Text = ""
    """An https image (at most 512 bytes) pages show instead of the emoji."""
    prompts: list[Text] = Field(default_factory=list[str])
    """Up to 8 example prompts (at most 256 characters each) a page offers as suggestions."""

    _origin: Origin | None = PrivateAttr(default=None)
    _identity_written: bool | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        fields = dict(cast("dict[str, object]", data))
        identity = as_written(fields.get("identity"))
        if identity is None or identity == "":
            application = fields.get("application_path")
            derived = go_base(application) if isinstance(application, str) and application else ""
            identity = fields["identity"] = derived or DEFAULT_IDENTITY
        if isinstance(identity, str):
            harness = fields.get("harness")
            fields["harness"] = _with_knowledge_directory(harness, f"knowledge/{identity}")
        return fields

    @model_validator(mode="after")
    def _card(self) -> Config:
        check_card(display_name=self.display_name, icon=self.icon, icon_url=self.icon_url, prompts=self.prompts)
        return self

    @property
    def has_tool_source(self) -> bool:
        """Whether any program's commands are wrapped (`application_path` or `tool_sources`)."""
        return bool(self.application_path or self.tool_sources)

    @property
    def identity_written(self) -> bool:
        """Whether the file sets `identity` itself (not derived from `application_path` or defaulted).

        A configuration built without the loader counts a non-empty identity as written.
        """
        return self._identity_written if self._identity_written is not None else bool(self.identity)

    @property
    def source_path(self) -> Path | None:
        """The file this configuration was read from; None when it came from a string."""
        return self._origin.path if self._origin is not None else None

    def error_at(self, path: Sequence[str | int], message: str) -> ConfigError:
        """A `ConfigError` for the setting at `path`, naming this configuration's file and line.

        For callers that validate a setting later (a backend checking its `options`), so their errors
        read like the loader's.

        Args:
            path: the key path, e.g. `("harness", "memory", "options", "directory")`.
            message: what is wrong and how to fix it.
        """
        origin = self._origin or Origin(label="agent.yaml")
        return origin.error(tuple(path), message, exact=True)

    @property
    def mcp_client_entries(self) -> list[McpClientEntry]:
        """The MCP servers to import tools from, under whichever of the two keys the file used."""
        return self.mcp_clients or self.mcp_servers

    def notices(self) -> list[str]:
        """What an operator should change in this file though it still loads (an older key name)."""
        if self.mcp_servers:
            return ["agent.yaml uses mcp_servers, the earlier name of mcp_clients; rename the key to mcp_clients"]
        return []

    def credential_env_names(self) -> list[str]:
        """Environment variables to strip from tool environments beyond the built-in defaults.

        `harness.environment.strip` (exact names or `PREFIX_*`), then
        `harness.knowledge.embeddings.api_key_env` when the vector tier is on. Pass the result as
        `strip_env`, and `passed_env_names()` as `pass_env`.
        """
        names = list(self.harness.environment.strip)
        knowledge = self.harness.knowledge
        if knowledge.enabled and knowledge.embeddings is not None:
            name = knowledge.embeddings.api_key_env.strip()
            if name and name not in names:
                names.append(name)
        return names

    def passed_env_names(self) -> list[str]:
        """`harness.environment.pass`: default-stripped names the operator lets tools inherit."""
        return list(self.harness.environment.passthrough)

    def with_state_dir(self, state_dir: str | os.PathLike[str] | None) -> Config:
        """Apply `--state-dir`: journal sessions in `state_dir` with the file backend.

        The flag wins over a configured directory. No-op when `state_dir` is None or empty.

        Raises:
            ConfigError: `harness.sessions.backend` is not `file`.
        """
        if state_dir is None or not os.fspath(state_dir):
            return self
        backend = self.harness.sessions.backend
        if backend != "file":
            raise self.error_at(
                ("harness", "sessions", "backend"),
                "--state-dir applies only to the file session backend, but harness.sessions.backend is "
                f'{go_quote(backend)}: remove --state-dir, or set harness.sessions.backend to "file"',
            )
        sessions = SessionsSettings(backend="file", options={"directory": os.fspath(state_dir)})
        return self.model_copy(update={"harness": self.harness.model_copy(update={"sessions": sessions})})


def attach_origin(config: Config, origin: Origin, *, identity_written: bool | None = None) -> Config:
    """Record where `config` was read from, and whether it named its identity (it is otherwise immutable)."""
    # The loader is the only writer; a public setter would let callers relabel a config's errors.
    config._origin = origin  # pyright: ignore[reportPrivateUsage]
    config._identity_written = identity_written  # pyright: ignore[reportPrivateUsage]
    return config


def _with_knowledge_directory(harness: object, directory: str) -> object:
    """Fill `harness.knowledge.directory` with `directory` when it is unset, whatever shape harness has."""
    if harness is None:
        harness = {}
    if isinstance(harness, HarnessSettings):
        if harness.knowledge.directory:
            return harness
        knowledge = harness.knowledge.model_copy(update={"directory": directory})
        return harness.model_copy(update={"knowledge": knowledge})
    if not isinstance(harness, dict):
        return harness  # the type check reports it
    block = dict(cast("dict[str, object]", harness))
    knowledge = block.get("knowledge")
    if knowledge is None:
        knowledge = {}
    if isinstance(knowledge, KnowledgeSettings):
        if not knowledge.directory:
            block["knowledge"] = knowledge.model_copy(update={"directory": directory})
    elif isinstance(knowledge, dict):
        entries = dict(cast("dict[str, object]", knowledge))
        if entries.get("directory") in (None, ""):
            entries["directory"] = directory
        block["knowledge"] = entries
    return block
