"""The web channel's guards on a real `fiskai serve`: Origin and the loopback Host rule, the fixed 5-turn
limit (503, `Retry-After: 5`), 1 MiB bodies (413), the optional bearer token, and the drain."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from fiskai_agent.testing import MessagesServer, RecordedRequest, Turn, text

from .conftest import ORIGIN, WebWorker, write_config


def _say(thread: str, words: str = "hello") -> dict[str, Any]:
    return {"id": thread, "messages": [{"id": "m", "role": "user", "parts": [{"type": "text", "text": words}]}]}


class _Gate:
    """A model that holds every answer until released, counting the requests waiting."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.waiting = 0
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Turn:
        del request
        with self._lock:
            self.waiting += 1
        self.release.wait(60)
        return Turn([text("Done.")])

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + 30
        while self.waiting < count:
            assert time.monotonic() < deadline, f"only {self.waiting} turns reached the model"
            time.sleep(0.05)


def test_foreign_origin_and_host_are_refused(web_worker: Callable[..., WebWorker]) -> None:
    with MessagesServer([Turn([text("Hi.")])]) as model:
        worker = web_worker(model)
        foreign = worker.client.post("/vercel", json=_say("o1"), headers={"origin": "http://evil.example"})
        assert foreign.status_code == 403 and foreign.json()["code"] == "forbidden_origin"
        assert worker.client.get("/card", headers={"origin": "https://evil.example"}).status_code == 403
        assert not model.requests, "a refused request never reaches the model"
        port = worker.url.split(":")[2].split("/")[0]
        rebound = worker.client.get("/card", headers={"host": f"evil.example:{port}"})
        assert rebound.status_code == 403 and rebound.json()["code"] == "forbidden_host"
        assert worker.client.get("/card", headers={"host": f"localhost:{port}"}).status_code == 200
        assert worker.client.get("/card", headers={"host": "localhost:1"}).status_code == 403
        # The page's own loopback origin and a listed origin pass; no Origin at all (curl) passes.
        own = worker.client.get("/card", headers={"origin": f"http://127.0.0.1:{port}"})
        assert own.status_code == 200
        plain = httpx.get(worker.url + "/card", timeout=10)
        assert plain.status_code == 200
        answered = worker.post("/vercel", _say("o1"))
        assert answered.status_code == 200 and answered.headers["access-control-allow-origin"] == ORIGIN
        # A page on a listed origin may call from there: its preflight is answered, a foreign one's is not.
        ask = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}
        preflight = worker.client.options("/vercel", headers=ask)
        assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == ORIGIN
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert worker.client.options("/vercel", headers={**ask, "origin": "http://evil.example"}).status_code == 403
        worker.stop()


def test_sixth_concurrent_turn_gets_503_with_retry_after(web_worker: Callable[..., WebWorker]) -> None:
    gate = _Gate()
    with MessagesServer(responder=gate) as model:
        worker = web_worker(model)
        with ThreadPoolExecutor(5) as pool:
            running = [pool.submit(worker.post, "/vercel", _say(f"c{n}")) for n in range(5)]
            gate.wait_for(5)
            sixth = worker.post("/vercel", _say("c5"))
            assert sixth.status_code == 503
            assert sixth.headers["retry-after"] == "5"
            assert sixth.json()["code"] == "capacity"
            again = worker.post("/vercel", _say("c0", "second turn of a running conversation"))
            assert again.status_code == 503, "the limit is checked first"
            gate.release.set()
            assert all(future.result(timeout=60).status_code == 200 for future in running)
        assert worker.post("/vercel", _say("c5")).status_code == 200, "a slot is free again"
        assert len(model.requests) == 6
        worker.stop()


def test_busy_conversation_gets_409(web_worker: Callable[..., WebWorker]) -> None:
    gate = _Gate()
    with MessagesServer(responder=gate) as model:
        worker = web_worker(model)
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(worker.post, "/vercel", _say("b1"))
            gate.wait_for(1)
            second = worker.post("/vercel", _say("b1", "again"))
            assert second.status_code == 409 and second.json()["code"] == "conversation_busy"
            assert worker.client.delete("/sessions/b1").status_code == 409
            gate.release.set()
            assert first.result(timeout=60).status_code == 200
        worker.stop()


def test_body_over_one_mib_gets_413(web_worker: Callable[..., WebWorker]) -> None:
    with MessagesServer([Turn([text("Hi.")])]) as model:
        worker = web_worker(model)
        big = _say("big", "x" * (1 << 20))
        refused = worker.post("/vercel", big)
        assert refused.status_code == 413 and refused.json()["code"] == "too_large"

        def chunks():
            yield b'{"id": "big", "messages": [], "pad": "'
            for _ in range(17):
                yield b"y" * 65536
            yield b'"}'

        streamed = worker.client.post("/agui", content=chunks(), headers={"content-type": "application/json"})
        assert streamed.status_code == 413, "a chunked body is counted as it is read"
        fits = worker.post("/vercel", _say("small", "x" * 1000))
        assert fits.status_code == 200
        assert worker.client.post("/vercel", content=b"{not json").status_code == 400
        assert worker.post("/vercel", _say("bad/thread")).status_code == 400
        worker.stop()


def test_bearer_token(web_worker: Callable[..., WebWorker]) -> None:
    with MessagesServer([Turn([text("Hi.")])]) as model:
        worker = web_worker(model, "--token-env", "WEB_TOKEN", env={"WEB_TOKEN": "s3cret"})
        refused = worker.client.get("/card")
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert worker.client.get("/card", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert worker.client.get("/card", headers={"authorization": "Bearer s3cret"}).status_code == 200
        assert worker.client.get("/").status_code == 200, "the page itself holds nothing and needs no token"
        ok = worker.client.post("/vercel", json=_say("t1"), headers={"authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert "s3cret" not in worker.stderr()
        worker.stop()


def test_drain_refuses_new_turns_and_finishes_running_ones(web_worker: Callable[..., WebWorker]) -> None:
    gate = _Gate()
    with MessagesServer(responder=gate) as model:
        worker = web_worker(model)
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(worker.post, "/vercel", _say("d1"))
            gate.wait_for(1)
            worker.proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 20
            while "draining" not in worker.stderr():
                assert time.monotonic() < deadline
                time.sleep(0.05)
            late = worker.post("/vercel", _say("d2"))
            assert late.status_code == 503 and late.headers["retry-after"] == "5"
            assert late.json()["code"] == "draining"
            gate.release.set()
            finished = running.result(timeout=60)
            assert finished.status_code == 200 and '"finishReason":"stop"' in finished.text
        assert worker.proc.wait(timeout=30) == 0
        assert "fiskai serve stopped" in worker.stderr()


def test_start_up_refusals(tmp_path: Path, web_worker: Callable[..., WebWorker]) -> None:
    import subprocess
    import sys

    config = write_config(tmp_path, listen="127.0.0.1:0")
    config.write_text(config.read_text().replace(f"origins: ['{ORIGIN}']", "origins: []"))
    result = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "serve", "--state-dir", str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "k"},
    )
    assert result.returncode != 0 and "expose.agent.web.origins is required" in result.stderr
    assert "Traceback" not in result.stderr
    with MessagesServer([]) as model:
        first = web_worker(model)
        port = first.url.split(":")[2].split("/")[0]
        taken = tmp_path / "taken"
        taken.mkdir()
        busy = write_config(taken, listen=f"127.0.0.1:{port}")
        result = subprocess.run(
            [sys.executable, "-m", "fiskai_cli", "-c", str(busy), "serve", "--state-dir", str(taken / "runs")],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": model.base_url},
        )
        assert result.returncode != 0 and "cannot listen" in result.stderr and "Traceback" not in result.stderr
        assert "Endpoints" not in result.stderr, "refused before the banner"
        first.stop()


def test_second_interrupt_stops_running_turns(web_worker: Callable[..., WebWorker]) -> None:
    gate = _Gate()
    with MessagesServer(responder=gate) as model:
        worker = web_worker(model)
        try:
            with ThreadPoolExecutor(1) as pool:
                running = pool.submit(worker.post, "/vercel", _say("s1"))
                gate.wait_for(1)
                worker.proc.send_signal(signal.SIGTERM)
                deadline = time.monotonic() + 20
                while "draining" not in worker.stderr():
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
                worker.proc.send_signal(signal.SIGTERM)
                stopped = running.result(timeout=30)
            assert stopped.status_code == 200
            assert '"type":"error"' in stopped.text and '"code":"stopped"' in stopped.text
            assert stopped.text.rstrip().endswith("data: [DONE]")
            assert worker.proc.wait(timeout=30) == 0
            assert "stopping now" in worker.stderr()
        finally:
            gate.release.set()
