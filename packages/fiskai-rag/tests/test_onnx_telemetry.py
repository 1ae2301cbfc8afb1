"""onnxruntime sends no usage events out of a process that runs the contextual model.

onnxruntime 1.29 and later send events to Microsoft from a background thread on Linux too, which
`disable_telemetry_events()` did not stop (a CONNECT to mobile.events.data.microsoft.com 9.1 s after a
session was made). `import_onnxruntime` sets `ORT_DISABLE_TELEMETRY=1` first, unless the operator set it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fiskai_rag.testing import build_bert_model

# Not `importorskip`: importing onnxruntime here would start its telemetry in the test process itself.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None, reason="the semantic extra (onnxruntime) is not installed"
)

WORDS = ["car", "fuel", "apple", "the", "a", "of"]
_WINDOW_S = 20.0
"""How long each child encodes: the event went out 9.1 s after the session was made (onnxruntime 1.32)."""

_CHILD = """
import os, sys, time
from pathlib import Path
from fiskai_rag.embed._bert_model import load_bert_model
model = load_bert_model(Path(sys.argv[1]), int8=True)
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    model.encode(["the car needs fuel"])
    time.sleep(0.5)
print(os.environ.get("ORT_DISABLE_TELEMETRY"))
"""


_CI_MARKERS = frozenset({
    "CI", "GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "TF_BUILD", "TRAVIS", "CIRCLECI", "APPVEYOR", "BUILDKITE",
    "CODEBUILD_BUILD_ID", "BITBUCKET_BUILD_NUMBER", "TEAMCITY_VERSION", "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI",
    "ORT_RUNNING_UNIT_TESTS",
})  # fmt: skip
"""Variables whose presence makes onnxruntime keep quiet by itself (names from its library's strings): a child
that kept one would pass whatever fiskai did, so CI would prove nothing."""


def _child(model: Path, proxy_url: str, telemetry: str | None, home: Path) -> subprocess.Popen[str]:
    dropped = {"NO_PROXY", "ORT_DISABLE_TELEMETRY", *_CI_MARKERS}
    env = {k: v for k, v in os.environ.items() if k.upper() not in dropped}
    env["HOME"], env["XDG_CACHE_HOME"] = str(home), str(home / ".cache")  # where a device id would go
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = proxy_url
    if telemetry is not None:
        env["ORT_DISABLE_TELEMETRY"] = telemetry
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(model), str(_WINDOW_S)], env=env, stdout=subprocess.PIPE, text=True
    )


def test_a_process_running_the_model_sends_nothing_out_unless_the_operator_turns_telemetry_on(
    recording_proxy: Any, tmp_path: Path
) -> None:
    model = build_bert_model(tmp_path / "bert", WORDS, layers=2, heads=2, hidden=8)
    with type(recording_proxy)() as opted_in:  # a second proxy: the two children's requests apart
        ours = _child(model, recording_proxy.url, None, tmp_path / "ours")
        theirs = _child(model, opted_in.url, "0", tmp_path / "theirs")  # the operator's explicit choice is kept
        out_ours, _ = ours.communicate(timeout=120)
        out_theirs, _ = theirs.communicate(timeout=120)
        assert ours.returncode == 0 and theirs.returncode == 0
        assert (out_ours.strip(), out_theirs.strip()) == ("1", "0")
        assert recording_proxy.requests == []
        # Nor a persistent device id or an offline event cache (onnxruntime keeps both under the cache dir).
        assert not list((tmp_path / "ours").rglob("deviceid")) and not list((tmp_path / "ours").rglob("*.db"))
        if not opted_in.requests:
            pytest.skip("this onnxruntime sent nothing in 20 s even with its telemetry on: no control to compare")
        assert all("microsoft.com" in line for line in opted_in.requests), opted_in.requests
