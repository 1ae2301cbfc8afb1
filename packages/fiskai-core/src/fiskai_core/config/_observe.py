"""`telemetry`, `harness.hooks` and `harness.pii`: the blocks an operator uses to watch runs and put policy before tools.

`telemetry` keys follow the Go agent's (reference 6.1) so its dashboards and docs apply unchanged. Its
values are checked only when export is on (`fiskai_core.telemetry.decide_telemetry`), as the original
does: a file with a half-written `capture` block still loads while telemetry is off.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field, field_validator

from fiskai_core._gojson import go_quote

from ._duration import DurationError, parse_go_duration
from ._schema import Block, Int, SettingError, Text, as_written

__all__ = ["CaptureSettings", "HookCommand", "HooksSettings", "PiiSettings", "TelemetrySettings"]

DEFAULT_HOOK_TIMEOUT = timedelta(seconds=10)


class CaptureSettings(Block):
    """`telemetry.capture`: export prompts, the conversation, replies, tool arguments and results."""

    enabled: bool = False
    messages: Text = "delta"
    """`delta` (what is new since the last model call) or `full` (the whole conversation every call: quadratic)."""
    max_bytes: Int = 8192
    """Cap per content attribute, measured on the encoded JSON, 256..65536."""


class TelemetrySettings(Block):
    """`telemetry`: OpenTelemetry export over OTLP/HTTP (needs the `telemetry` extra).

    Off unless `enabled: true`; `--no-telemetry`, `NO_TELEMETRY` or `OTEL_SDK_DISABLED=true` turn it off
    again. The standard `OTEL_EXPORTER_OTLP_*` variables alone never turn it on.
    """

    enabled: bool = False
    endpoint: Text = ""
    """OTLP/HTTP base URL (`/v1/traces`, `/v1/metrics` appended); else `OTEL_EXPORTER_OTLP_ENDPOINT`, else
    `http://localhost:4318`."""
    service_name: Text = ""
    """Else `OTEL_SERVICE_NAME`, then the identity, then `fisk-ai`."""
    sample_ratio: float = 1.0
    """Head sampling, 0.0..1.0; an explicit 0 samples nothing."""
    no_metrics: bool = False
    """Export traces only."""
    capture: CaptureSettings = Field(default_factory=CaptureSettings)

    @field_validator("sample_ratio", mode="before")
    @classmethod
    def _ratio(cls, value: object) -> object:
        # YAML `1` is an integer; a ratio written without a point is still a ratio.
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


class HookCommand(Block):
    """One hook command: run from an argv (no shell) with the event as JSON on stdin.

    It answers on stdout with `{"decision": "allow"}`, `{"decision": "deny", "reason": "..."}` or a
    rewrite (`{"decision": "rewrite", ...}`); empty output with exit status 0 allows. Anything else (a
    non-zero exit, output that is not such an object, the timeout) denies: a broken policy fails closed.
    """

    command: list[Text] = Field(default_factory=list[str])
    """The argv: the program, then its arguments; a relative program is relative to agent.yaml's folder."""
    timeout: timedelta = DEFAULT_HOOK_TIMEOUT
    """How long it may take before its process group is killed and the call denied."""
    tools: list[Text] = Field(default_factory=list[str])
    """Tool hooks only: the tool names it is asked about; empty: every tool."""

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str]) -> list[str]:
        if not value or not value[0].strip():
            raise SettingError("harness.hooks: a hook needs a command, e.g. command: [./policy, --strict]")
        return value

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, value: object) -> object:
        value = as_written(value)
        if value == "":
            return DEFAULT_HOOK_TIMEOUT
        if not isinstance(value, str):
            return value
        try:
            parsed = parse_go_duration(value)
        except DurationError as err:
            raise SettingError(f"invalid harness.hooks timeout {go_quote(value)}: {err}") from None
        if parsed <= timedelta(0):
            raise SettingError(f"invalid harness.hooks timeout {go_quote(value)}: must be positive")
        return parsed


class HooksSettings(Block):
    """`harness.hooks`: commands asked before and after tool calls and about each prompt (every decision journaled).

    A `pre_tool_use` hook can deny a call or rewrite the tool and its arguments; the confirm gate still
    fires when the original or the rewritten tool is gated. A `post_tool_use` hook can replace the
    output. A `user_prompt_submit` hook can deny or rewrite a prompt (each one: the first, chat follow-ups,
    served turns). Hooks of one point run in order; the first deny wins. The tool hooks run on every face
    (`run`, `serve`, `mcp`, the a2a tool endpoint, `tools call`); a server logs its decisions on stderr.
    """

    pre_tool_use: list[HookCommand] = Field(default_factory=list[HookCommand])
    post_tool_use: list[HookCommand] = Field(default_factory=list[HookCommand])
    user_prompt_submit: list[HookCommand] = Field(default_factory=list[HookCommand])


class PiiSettings(Block):
    """`harness.pii`: personal data and secrets in prompts and tool results (reference 7.4).

    Each prompt and each tool result is scanned on entry, after the caller's hooks and before the model,
    the journal and telemetry see it. Types: `BANK_ACCOUNT`, `CLOUD_RESOURCES`, `CREDIT_CARD`,
    `DATE_OF_BIRTH`, `DRIVERS_LICENSE`, `EMAIL`, `MEDICAL_ID`, `OTP`, `PASSPORT`, `PHONE`, `PHYSICAL_ADDRESS`,
    `SECRETS` (API keys, tokens, NATS creds and nkey seeds, private keys, passwords), `SSN`. Not scanned: the
    system prompt, the memory index, model replies, model-written tool arguments, restored history.
    """

    mode: Literal["redact", "reject", "off"] = "redact"
    """`redact` (the default, also without the block) replaces each value with `[REDACTED:<TYPE>]`; `reject`
    refuses a prompt that holds any and withholds such a tool result from the model with a fixed message;
    `off` passes everything. The journal records what was found (counts per type), never a value."""

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, value: object) -> object:
        # YAML 1.1 reads a bare `off` as false; the Go agent's YAML reader keeps it a string.
        return "off" if value is False else value
