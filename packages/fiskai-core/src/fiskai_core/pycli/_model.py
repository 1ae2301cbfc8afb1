"""The document the introspection child writes: a Python CLI's command tree, framework-neutral.

`child/fiskai_child.py` builds it inside the app's interpreter from click, typer (either side of its vendoring of
click) or argparse objects; this is the parent's reading of it. Unknown keys are kept (`extra="allow"`)
so a newer child still parses.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = ["DOCUMENT_FORMAT", "Framework", "ParamModel", "PyCliDocument", "PyCommandModel", "SwitchChoice", "TypeModel"]

DOCUMENT_FORMAT = 1
Framework = Literal["click", "typer", "argparse"]
_CONFIG = ConfigDict(extra="allow", frozen=True, defer_build=True)


class TypeModel(BaseModel):
    """What a value is: `string`, `integer`, `number`, `boolean`, `choice`, `path`, `tuple`, `unprocessed`."""

    model_config = _CONFIG

    kind: str = "string"
    choices: list[str] = Field(default_factory=list[str])
    min: float | None = None
    max: float | None = None
    min_open: bool = False
    max_open: bool = False
    allow_dash: bool = False
    """`-` means stdin/stdout for this path or file, so a model may not send it."""


class SwitchChoice(BaseModel):
    """One flag of a feature switch (click flags sharing a name, argparse `store_const` siblings)."""

    model_config = _CONFIG

    opt: str
    value: JsonValue = None


class ParamModel(BaseModel):
    """One option or positional of a command."""

    model_config = _CONFIG

    name: str
    """The key a model sends: click's parameter name, argparse's `dest`."""
    kind: Literal["option", "argument"]
    opts: list[str] = Field(default_factory=list[str])
    off_opts: list[str] = Field(default_factory=list[str])
    """The `--no-x` side of a boolean pair."""
    action: Literal["value", "append", "flag", "bool_pair", "switch", "count"] = "value"
    nargs: int | str = 1
    """click: N or -1 (any); argparse: N, `?`, `*` or `+`."""
    multiple: bool = False
    required: bool = False
    help: str = ""
    default: JsonValue = None
    type: TypeModel = Field(default_factory=TypeModel)
    on_value: bool = True
    """For a flag: the value it stores when given (argparse `store_false` stores False)."""
    switch: list[SwitchChoice] = Field(default_factory=list[SwitchChoice])
    max: int | None = None
    """For a count: its cap, when the app sets one."""
    optional_value: bool = False
    """click: the value may be left out, so a value starting with `-` would be re-parsed as options."""
    prompt: bool = False
    confirmation: bool = False
    passthrough: bool = False
    envvars: list[str] = Field(default_factory=list[str])
    """click: environment variables the app reads this parameter from (`envvar`, `auto_envvar_prefix`)."""
    skip: str = ""
    """Why the parameter is never offered (eager, hidden, deprecated, custom action, ...); empty to offer it."""


class PyCommandModel(BaseModel):
    """A command: a group when `commands` is a list, a leaf when it is None."""

    model_config = _CONFIG

    name: str
    help: str = ""
    help_long: str = ""
    hidden: bool = False
    deprecated: bool = False
    params: list[ParamModel] = Field(default_factory=list[ParamModel])
    commands: list[PyCommandModel] | None = None
    passthrough: str = ""
    """Why the command passes arguments on unparsed (empty when it does not)."""
    confirm_opt: str = ""
    """click `confirmation_option`: the flag the harness appends once the gate approved the call."""
    tags: list[str] = Field(default_factory=list[str])
    """From the app's optional `__fiskai__ = {"tags": [...]}`."""
    prefix_chars: str = "-"
    fromfile_prefix_chars: str = ""
    allow_abbrev: bool = False
    exclusive: list[list[str]] = Field(default_factory=list[list[str]])
    """argparse mutually exclusive groups, by parameter name."""


class PyCliDocument(BaseModel):
    """The whole description, with what identifies it for the cache."""

    model_config = _CONFIG

    format: int
    framework: Framework
    framework_version: str = ""
    python: str
    python_version: str = ""
    dist: str = ""
    dist_version: str = ""
    fingerprint: list[tuple[str, int, int]] = Field(default_factory=list[tuple[str, int, int]])
    """(path, mtime_ns, size) of the files whose change makes the description stale."""
    root: PyCommandModel


def trusted_document(data: dict[str, Any]) -> PyCliDocument:
    """A document fiskai itself validated and cached, rebuilt without validating it again.

    Validation builds pydantic's schemas for these models, which costs more than a cached start may
    spend; a cache entry was validated before it was written (and is only read back when fresh).

    Raises:
        KeyError, TypeError: the entry is not a document (the caller treats it as a cache miss).
    """
    root = _command(data["root"])
    fields = {key: value for key, value in data.items() if key != "root"}
    fields["fingerprint"] = [tuple(entry) for entry in fields.get("fingerprint", [])]
    return PyCliDocument.model_construct(root=root, **fields)


def _command(data: dict[str, Any]) -> PyCommandModel:
    fields = dict(data)
    fields["params"] = [_param(param) for param in data.get("params", [])]
    commands = data.get("commands")
    fields["commands"] = None if commands is None else [_command(command) for command in commands]
    return PyCommandModel.model_construct(**fields)


def _param(data: dict[str, Any]) -> ParamModel:
    fields = dict(data)
    fields["type"] = TypeModel.model_construct(**data.get("type", {}))
    fields["switch"] = [SwitchChoice.model_construct(**choice) for choice in data.get("switch", [])]
    return ParamModel.model_construct(**fields)
