import pytest

from fiskai_core.config import CaptureSettings, TelemetrySettings
from fiskai_core.telemetry import TelemetryRefusedError, decide_telemetry

ON = TelemetrySettings(enabled=True)


def test_off_unless_enabled_and_otlp_variables_alone_only_earn_a_note() -> None:
    plan = decide_telemetry(TelemetrySettings(), env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})
    assert not plan.enabled
    assert "telemetry.enabled" in plan.note
    assert decide_telemetry(TelemetrySettings(), env={}).note == ""


@pytest.mark.parametrize(
    ("flag", "env"),
    [(True, {}), (False, {"NO_TELEMETRY": "1"}), (False, {"OTEL_SDK_DISABLED": "TRUE"})],
)
def test_the_flag_and_the_variables_win_over_enabled(flag: bool, env: dict[str, str]) -> None:
    # Even a refused endpoint is not checked: validation runs only when export is on.
    settings = TelemetrySettings(enabled=True, endpoint="grpc://x:4317")
    assert not decide_telemetry(settings, no_telemetry=flag, env=env).enabled


def test_endpoint_and_service_name_resolution_order() -> None:
    plan = decide_telemetry(ON, identity="nodes", env={})
    assert (plan.endpoint, plan.service_name, plan.metrics, plan.capture) == (
        "http://localhost:4318",
        "nodes",
        True,
        None,
    )
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example:443/", "OTEL_SERVICE_NAME": "svc"}
    plan = decide_telemetry(ON, identity="nodes", env=env)
    assert (plan.endpoint, plan.service_name) == ("https://collector.example:443", "svc")
    plan = decide_telemetry(TelemetrySettings(enabled=True, endpoint="http://127.0.0.1:9", service_name="x"), env=env)
    assert (plan.endpoint, plan.service_name) == ("http://127.0.0.1:9", "x")
    assert decide_telemetry(ON, env={}).service_name == "fisk-ai"


@pytest.mark.parametrize(
    ("settings", "env", "names"),
    [
        (TelemetrySettings(enabled=True, endpoint="ftp://h:4318"), {}, "not an http or https URL"),
        (TelemetrySettings(enabled=True, endpoint="http://127.0.0.1:4317"), {}, "4317"),
        (ON, {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"),
        (TelemetrySettings(enabled=True, sample_ratio=1.5), {}, "sample_ratio"),
        (
            TelemetrySettings(enabled=True, endpoint="http://collector.example:4318"),
            {"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=b"},
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ),
        (
            TelemetrySettings(enabled=True, endpoint="http://10.0.0.1:4318", capture=CaptureSettings(enabled=True)),
            {},
            "capture",
        ),
        (TelemetrySettings(enabled=True, capture=CaptureSettings(enabled=True, messages="all")), {}, "messages"),
        (TelemetrySettings(enabled=True, capture=CaptureSettings(enabled=True, max_bytes=100)), {}, "max_bytes"),
    ],
)
def test_start_up_refusals_name_the_setting(settings: TelemetrySettings, env: dict[str, str], names: str) -> None:
    with pytest.raises(TelemetryRefusedError) as raised:
        decide_telemetry(settings, env=env)
    assert names in str(raised.value)


def test_capture_settings_are_not_checked_while_capture_is_off_and_loopback_http_is_fine() -> None:
    settings = TelemetrySettings(enabled=True, capture=CaptureSettings(messages="all", max_bytes=1))
    assert decide_telemetry(settings, env={}).capture is None
    settings = TelemetrySettings(
        enabled=True, endpoint="http://[::1]:4318", capture=CaptureSettings(enabled=True, messages="full")
    )
    capture = decide_telemetry(settings, env={"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "1000"}).capture
    assert capture is not None
    assert (capture.messages, capture.max_bytes) == ("full", 1000)
