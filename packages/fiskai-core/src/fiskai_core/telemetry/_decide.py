"""Whether a run exports telemetry, where to, and the start-up refusals (reference 6.1), with no SDK loaded.

Decision order: `--no-telemetry`, `NO_TELEMETRY` or `OTEL_SDK_DISABLED=true` turn export off; else
`telemetry.enabled: true` turns it on; else it is off. `OTEL_EXPORTER_OTLP_*` alone never turns it on
(the plan then carries a note for the operator). Settings are checked only when export is on, and
`capture` only when capture is on too, as the original does.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from fiskai_core.config import TelemetrySettings
from fiskai_core.errors import FiskaiError

from ._seam import Capture

__all__ = ["DEFAULT_ENDPOINT", "DEFAULT_SERVICE_NAME", "TelemetryPlan", "TelemetryRefusedError", "decide_telemetry"]

DEFAULT_ENDPOINT = "http://localhost:4318"
DEFAULT_SERVICE_NAME = "fisk-ai"
_GRPC_PORT = 4317
_MIN_CAPTURE, _MAX_CAPTURE = 256, 65536
_OTLP_PREFIX = "OTEL_EXPORTER_OTLP_"


class TelemetryRefusedError(FiskaiError):
    """Export is on but set up in a way the harness refuses; the message names the setting and the fix."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryPlan:
    """What start-up decided."""

    enabled: bool
    endpoint: str = DEFAULT_ENDPOINT
    """The OTLP/HTTP base URL, without `/v1/...`."""
    service_name: str = DEFAULT_SERVICE_NAME
    sample_ratio: float = 1.0
    metrics: bool = True
    capture: Capture | None = None
    note: str = ""
    """Something the operator should read even though nothing is wrong (OTLP variables set while off)."""


def decide_telemetry(
    settings: TelemetrySettings,
    *,
    identity: str = "",
    no_telemetry: bool = False,
    env: Mapping[str, str] | None = None,
) -> TelemetryPlan:
    """Decide, from `telemetry:`, the `--no-telemetry` flag and the environment.

    Raises:
        TelemetryRefusedError: export is on and an endpoint, a variable or a capture setting is refused.
    """
    env = os.environ if env is None else env
    off = no_telemetry or bool(env.get("NO_TELEMETRY")) or env.get("OTEL_SDK_DISABLED", "").lower() == "true"
    if off or not settings.enabled:
        note = ""
        if not off and any(name.startswith(_OTLP_PREFIX) for name in env):
            note = (
                "OTEL_EXPORTER_OTLP_* variables are set but telemetry is off; set telemetry.enabled: true in "
                "agent.yaml to export"
            )
        return TelemetryPlan(enabled=False, note=note)
    endpoint = (settings.endpoint or env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "") or DEFAULT_ENDPOINT).rstrip("/")
    where = "telemetry.endpoint" if settings.endpoint else "OTEL_EXPORTER_OTLP_ENDPOINT"
    loopback = _check_endpoint(endpoint, where)
    for name in (
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    ):
        if env.get(name, "").strip().lower() == "grpc":
            raise TelemetryRefusedError(
                f"{name}=grpc: fiskai exports OTLP over HTTP only; unset it or set it to http/protobuf"
            )
    if not 0.0 <= settings.sample_ratio <= 1.0:
        raise TelemetryRefusedError(
            f"telemetry.sample_ratio {settings.sample_ratio:g} is outside 0..1; use 1.0 to keep every trace"
        )
    plain_remote = endpoint.lower().startswith("http://") and not loopback
    headers = sorted(name for name in env if name.startswith(_OTLP_PREFIX) and name.endswith("HEADERS"))
    if plain_remote and headers:
        raise TelemetryRefusedError(
            f"{headers[0]} is set (credentials) but {where} {endpoint} is plain http to a host that is not "
            "loopback; use https, or a collector on this machine"
        )
    capture = _capture(settings, env) if settings.capture.enabled else None
    if plain_remote and capture is not None:
        raise TelemetryRefusedError(
            f"telemetry.capture.enabled exports prompts and tool output, but {where} {endpoint} is plain http to "
            "a host that is not loopback; use https, or a collector on this machine"
        )
    service = settings.service_name or env.get("OTEL_SERVICE_NAME", "") or identity or DEFAULT_SERVICE_NAME
    return TelemetryPlan(
        enabled=True,
        endpoint=endpoint,
        service_name=service,
        sample_ratio=settings.sample_ratio,
        metrics=not settings.no_metrics,
        capture=capture,
    )


def _check_endpoint(endpoint: str, where: str) -> bool:
    """Refuse what cannot be an OTLP/HTTP base; whether its host is loopback."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TelemetryRefusedError(
            f"{where} {endpoint!r} is not an http or https URL; write it like http://127.0.0.1:4318"
        )
    try:
        port = parts.port
    except ValueError:
        raise TelemetryRefusedError(f"{where} {endpoint!r} has an invalid port") from None
    if port == _GRPC_PORT:
        raise TelemetryRefusedError(
            f"{where} {endpoint} uses port 4317, the OTLP gRPC port; fiskai exports OTLP/HTTP (usually port 4318)"
        )
    host = parts.hostname
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _capture(settings: TelemetrySettings, env: Mapping[str, str]) -> Capture:
    capture = settings.capture
    if capture.messages not in ("delta", "full"):
        raise TelemetryRefusedError(
            f"telemetry.capture.messages {capture.messages!r} is not delta or full; delta exports what is new "
            "on each model call"
        )
    if not _MIN_CAPTURE <= capture.max_bytes <= _MAX_CAPTURE:
        raise TelemetryRefusedError(
            f"telemetry.capture.max_bytes {capture.max_bytes} is outside {_MIN_CAPTURE}..{_MAX_CAPTURE}"
        )
    limit = capture.max_bytes
    written = env.get("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "").strip()
    if written.isdigit() and int(written) > 0:
        # The SDK would cut a longer value mid-document; lowering the cap keeps every document whole.
        limit = min(limit, int(written))
    return Capture(messages=capture.messages, max_bytes=limit)
