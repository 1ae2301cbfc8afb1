"""An agent-safety suite file: cases of a prompt, a scripted model, operator answers and expectations.

```yaml
config: ../fixturectl/agent.yaml        # the agent under test, relative to this file
cases:
  - name: no-shell
    prompt: read the key
    turns:                              # the scripted model, one entry per model response
      - calls: [{tool: cluster_config_get, arguments: {key: "a; rm -rf /"}}]
      - answer: done
    expect:
      ran: [{tool: cluster_config_get, argv: [cluster, config, get, --, "a; rm -rf /"]}]
```

Every key is checked (unknown keys are errors, so a misspelt expectation cannot pass silently). See
`Case` and `Expect` for the fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator, model_validator

from fiskai_agent.errors import AgentError

__all__ = ["Call", "Case", "Expect", "Kill", "ModelTurn", "Ran", "Resume", "Suite", "SuiteError", "load_suite"]


class SuiteError(AgentError):
    """A suite file cannot be read or is invalid; the message names the file and the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Call(_Strict):
    """One tool call in a model turn."""

    tool: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue])
    id: str | None = None


class ModelTurn(_Strict):
    """One scripted model response: tool calls (with optional narration), or a final answer."""

    calls: list[Call] = Field(default_factory=list[Call])
    text: str = ""
    answer: str | None = None
    input_tokens: int | None = None
    output_tokens: int = 10

    @model_validator(mode="after")
    def _one_kind(self) -> ModelTurn:
        if (self.answer is None) == (not self.calls):
            raise ValueError("a turn has either calls (tool calls) or answer (the final text), not both or neither")
        return self


class Kill(_Strict):
    """Where the first run dies: just after a record of this kind is durable (nothing else of it runs)."""

    after: Literal["intent", "result", "assistant"]
    tool: str | None = None
    """For `intent` and `result`: the tool whose record it is."""
    nth: int = Field(default=1, ge=1)
    """Which matching record (1 = the first)."""

    @model_validator(mode="after")
    def _tool_named(self) -> Kill:
        if self.after != "assistant" and not self.tool:
            raise ValueError(f"kill after {self.after} needs tool")
        return self


class Ran(_Strict):
    """A command that ran: its tool and, optionally, its argv after the binary."""

    tool: str
    argv: list[str] | None = None


class Gated(_Strict):
    """A journaled gate decision."""

    tool: str
    allowed: bool
    channel: str | None = None
    tag: str | None = None
    """The tag that gated the tool (`ai:confirm` or a confirm_tags entry)."""
    rule: str | None = None


class Expect(_Strict):
    """What must hold after the case (after the resume, for a killed case)."""

    outcome: Literal["completed", "budget", "max_iterations", "error", "suspended"] | None = None
    ran: list[Ran] | None = None
    """Exactly the commands that ran, in order, over both processes of a killed case."""
    not_ran: list[str] = Field(default_factory=list[str])
    gated: list[Gated] | None = None
    """Exactly the journaled gate decisions, in order."""
    denied: list[str] = Field(default_factory=list[str])
    """Tools with at least one denied gate decision."""
    offered: list[str] = Field(default_factory=list[str])
    """Tools sent to the model (loaded or deferred) in at least one request."""
    not_offered: list[str] = Field(default_factory=list[str])
    """Tools in no request at all (ai:deny, include/exclude)."""
    output_contains: list[str] = Field(default_factory=list[str])
    """Text some command's output holds."""
    output_excludes: list[str] = Field(default_factory=list[str])
    """Text no command's output holds (a credential, say)."""
    prompts: int | None = None
    """How many times the operator was asked to approve a command."""
    journal_terminal: str | None = None
    """The reason on the journal's last terminal record."""
    resume_ran: list[Ran] | None = None
    """Exactly the commands the resumed run ran (a killed case)."""


def _answers(value: object) -> object:
    # YAML 1.1 reads a bare no/yes as a boolean; an operator's answer "no" is what was meant.
    if isinstance(value, list):
        items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        return [("yes" if item else "no") if isinstance(item, bool) else item for item in items]
    return value


class Resume(_Strict):
    """How a killed case is resumed: an operator (or none) and the model's turns from then on."""

    terminal: bool = False
    answers: list[str] = Field(default_factory=list[str])
    turns: list[ModelTurn] = Field(default_factory=list[ModelTurn])

    _yaml_answers = field_validator("answers", mode="before")(_answers)


class Case(_Strict):
    """One scenario."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    prompt: str = "assist the user"
    terminal: bool = False
    """Whether an operator is at a terminal (without one, gated commands are denied)."""
    answers: list[str] = Field(default_factory=list[str])
    """The operator's answers in order: no, once, always, command, rule (then the rule text), yes."""
    rules: list[str] = Field(default_factory=list[str])
    """Persisted approval rules the agent has before the run (`TOOL PATTERN...`)."""
    env: dict[str, str] = Field(default_factory=dict[str, str])
    """Environment variables set for the run (a credential, to prove it does not reach a command)."""
    max_tokens: int | None = Field(default=None, ge=1)
    max_iterations: int | None = Field(default=None, ge=1)
    turns: list[ModelTurn] = Field(min_length=1)
    kill: Kill | None = None
    resume: Resume | None = None
    expect: Expect = Field(default_factory=Expect)

    _yaml_answers = field_validator("answers", mode="before")(_answers)

    @model_validator(mode="after")
    def _kill_and_resume(self) -> Case:
        if (self.kill is None) != (self.resume is None):
            raise ValueError("kill and resume go together: a killed case says how it is resumed")
        return self


class Suite(_Strict):
    """A suite: the agent configuration and its cases."""

    config: Path
    """The agent.yaml, resolved against the suite file's folder."""
    cases: list[Case] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Suite:
        seen: set[str] = set()
        for case in self.cases:
            if case.name in seen:
                raise ValueError(f'two cases are named "{case.name}"')
            seen.add(case.name)
        return self


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def load_suite(path: Path) -> Suite:
    """Read and check a suite file; `config` is resolved against the file's folder.

    Raises:
        SuiteError: The file is unreadable, not YAML, or invalid (the message names the key and the fix).
    """
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise SuiteError(f'suite "{path}" cannot be read: {err}') from err
    except yaml.YAMLError as err:
        raise SuiteError(f'suite "{path}" is not valid YAML: {err}') from err
    if not isinstance(data, dict):
        raise SuiteError(f'suite "{path}" must be a mapping with config and cases')
    try:
        suite = Suite.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        raise SuiteError(
            f'suite "{path}": {_where(first["loc"])}: {first["msg"]}'
            + (f" (and {err.error_count() - 1} more problem(s))" if err.error_count() > 1 else "")
        ) from err
    config = suite.config if suite.config.is_absolute() else path.resolve().parent / suite.config
    return suite.model_copy(update={"config": config})
