"""`tool_sources:`: several programs whose commands become tools, each with its own selection.

One entry names exactly one source: `fisk: PATH` (a fisk application, as `application_path`), or a
Python CLI, `click:`, `typer:` or `argparse:`, naming a console script (a name on PATH or a path) or
`module:attr`. `application_path` stays the one-source shorthand and, when set, is the first source.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ._schema import Block, Text, ToolFilter, _duration  # pyright: ignore[reportPrivateUsage]

__all__ = ["SourceKind", "ToolSourceRule", "ToolSourceSettings"]

SourceKind = Literal["fisk", "click", "typer", "argparse"]
_KINDS: tuple[SourceKind, ...] = ("fisk", "click", "typer", "argparse")


class ToolSourceRule(Block):
    """Tags and denied parameters for the commands whose space-separated path fully matches `commands`."""

    commands: Text = ".*"
    """A regular expression matched against the WHOLE command path (`db drop`), so `delete` does not match
    `undelete`."""
    tags: list[Text] = Field(default_factory=list[str])
    """Added to each matching command (`ai:deny`, `ai:confirm`, `impact:destructive`, ...); rules accumulate."""
    deny_params: list[Text] = Field(default_factory=list[str])
    """Parameters of the matching commands never offered to a model (refused by name if one is sent)."""


class ToolSourceSettings(Block):
    """A `tool_sources` entry: one program and how its commands are offered."""

    fisk: Text = ""
    """A fisk application: its path (relative to the config's folder) or a name on PATH."""
    click: Text = ""
    """A click application: a console script (name or path) or `module:attr` of the command object."""
    typer: Text = ""
    """A typer application (before or after typer vendored click): a console script or `module:attr`."""
    argparse: Text = ""
    """An argparse application: a console script or `module:attr` of its entry function or parser."""
    python: Text = ""
    """Python CLIs: the app's interpreter; by default the one the console script's `#!` line names."""
    run: Text = ""
    """Python CLIs: the program commands run; by default the console script. Needed for `module:attr`."""
    parser: Text = ""
    """argparse: a parser factory (`module:attr`, like `build_parser`) read instead of trapping the entry point."""
    prefix: Text = ""
    """Put before every tool name of this source (when two sources have commands of the same name)."""
    include: ToolFilter = Field(default_factory=ToolFilter)
    exclude: ToolFilter = Field(default_factory=ToolFilter)
    rules: list[ToolSourceRule] = Field(default_factory=list[ToolSourceRule])
    """Python CLIs: tags and denied parameters by command path."""
    deny_params: list[Text] = Field(default_factory=list[str])
    """Python CLIs: parameters never offered on any command (`load_extension`)."""
    allow_passthrough: list[Text] = Field(default_factory=list[str])
    """Python CLIs: commands that pass arguments on unparsed (click `ignore_unknown_options`, UNPROCESSED,
    argparse REMAINDER, forwarders such as sqlite-utils `install`), offered anyway; by command path or tool
    name. Denied (`ai:deny`) otherwise."""
    timeout: timedelta = timedelta(seconds=20)
    """Python CLIs: how long describing the app may take (its import runs in a child process)."""

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, value: object) -> object:
        return _duration(value, key="tool_sources timeout", default=timedelta(seconds=20))

    @model_validator(mode="after")
    def _one_kind(self) -> ToolSourceSettings:
        named = [kind for kind in _KINDS if getattr(self, kind)]
        if len(named) != 1:
            raise ValueError(
                "a tool_sources entry names exactly one of fisk, click, typer or argparse"
                + (f" (this one names {', '.join(named)})" if named else "")
            )
        if self.parser and named[0] != "argparse":
            raise ValueError("parser applies only to an argparse source")
        python_only = ("python", "run", "rules", "deny_params", "allow_passthrough")
        if named[0] == "fisk" and any(getattr(self, key) for key in python_only):
            raise ValueError(f"{', '.join(python_only)} apply to Python CLI sources, not to a fisk one")
        return self

    @property
    def kind(self) -> SourceKind:
        """Which framework the entry names."""
        return next(kind for kind in _KINDS if getattr(self, kind))

    @property
    def target(self) -> str:
        """What the entry names (a path, a console script or `module:attr`)."""
        return str(getattr(self, self.kind))

    @property
    def label(self) -> str:
        """`click: sqlite-utils`: how messages name the source."""
        return f"{self.kind}: {self.target}"
