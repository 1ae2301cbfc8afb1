"""The fisk `ApplicationModel` as printed by `APP --fisk-introspect`.

Field names are fisk's JSON names. Unknown fields are tolerated and kept (`extra="allow"`), so a newer
fisk that adds keys still parses and nothing it said is lost. fisk v0.8 output has no `schema` or
`restricted_schema`; v0.9 and newer add both on every command.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = ["ApplicationModel", "ArgModel", "CmdModel", "FlagModel"]

_CONFIG = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


class FlagModel(BaseModel):
    """One flag of an application or a command."""

    model_config = _CONFIG

    name: str
    help: str = ""
    short: int | None = None
    """The short flag as a Unicode code point (fisk prints the rune as a number)."""
    default: list[str] = Field(default_factory=list[str])
    envar: str | None = None
    place_holder: str | None = None
    required: bool = False
    hidden: bool = False
    boolean: bool = False
    negatable: bool = False
    cumulative: bool = False
    completions: list[str] = Field(default_factory=list[str])


class ArgModel(BaseModel):
    """One positional argument of an application or a command."""

    model_config = _CONFIG

    name: str
    help: str = ""
    default: list[str] = Field(default_factory=list[str])
    envar: str | None = None
    place_holder: str | None = None
    required: bool = False
    hidden: bool = False
    cumulative: bool = False


class CmdModel(BaseModel):
    """One command; a command with sub-`commands` is a group, one without is a leaf."""

    model_config = _CONFIG

    name: str
    aliases: list[str] = Field(default_factory=list[str])
    help: str = ""
    help_long: str = ""
    hidden: bool = False
    default: bool = False
    tags: list[str] = Field(default_factory=list[str])
    json_schema: dict[str, JsonValue] | None = Field(default=None, alias="schema")
    """fisk v0.9+: the full JSON Schema of the command's flags and args."""
    restricted_schema: dict[str, JsonValue] | None = None
    """fisk v0.9+: the schema restricted to what model APIs accept; what fiskai sends."""
    flags: list[FlagModel] = Field(default_factory=list[FlagModel])
    args: list[ArgModel] = Field(default_factory=list[ArgModel])
    commands: list[CmdModel] = Field(default_factory=list["CmdModel"])


class ApplicationModel(BaseModel):
    """The whole application: its global flags, top-level args and command tree."""

    model_config = _CONFIG

    name: str
    help: str = ""
    cheat: str | None = None
    version: str | None = None
    author: str | None = None
    cheats: dict[str, str] = Field(default_factory=dict[str, str])
    cheat_tags: list[str] = Field(default_factory=list[str])
    llm_extra_info: str | None = None
    args: list[ArgModel] = Field(default_factory=list[ArgModel])
    commands: list[CmdModel] = Field(default_factory=list[CmdModel])
    flags: list[FlagModel] = Field(default_factory=list[FlagModel])
