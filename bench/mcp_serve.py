"""`fiskai mcp` speed, each figure beside a floor measured in the same run.

Run: uv run python bench/mcp_serve.py [--calls N] [--rounds N]

What is measured (medians; a real `fiskai mcp` server process, the real mcp client over HTTP):

- tools/list with 300 tools, against tools/list with 1 tool (the protocol round trip).
- tools/call overhead beyond the command's own runtime: a call of `cluster config get` through MCP minus the
  same tool called directly in this process through the whole call path, `prepare_call` then `run_call`
  (`fiskai_core.testing.call_tool`: the one decode, the plan, the run), the floor. Target: <= 10 ms.
  Measured in both protocol eras (2025-11-25 sessions, 2026-07-28 per-request). Before the call path the
  floor was `CommandTool.execute`, which decoded, checked, rendered and ran in one step: the same work.
- calls per second with 10 clients against that fast command, at the default cap (2 in flight) and with
  `max_concurrent_tools: 10`, beside the floor of 10 concurrent direct calls.
- server start to the first tools/list answer, beside `fiskai info` on the same configuration (the same
  start-up and introspection, no server).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import copy
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol, Self, cast

import anyio
import httpx

from fiskai_core.exec.running import CommandTool, command_tools
from fiskai_core.fisk import load_application
from fiskai_core.testing import call_tool, write_fake_app

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "fixturectl"
FISKAI = [sys.executable, "-m", "fiskai_cli"]
Mode = Literal["auto", "legacy"]


class McpClient(Protocol):
    """The part of `mcp.Client` the bench uses."""

    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    async def list_tools(self) -> object: ...
    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> object: ...


def _client(url: str, mode: Mode) -> McpClient:
    """`mcp.Client(url, mode=mode, cache=None)`.

    This file is named `mcp.py`, so run as a script it would shadow the SDK: the SDK is imported from
    the installed packages only, with this folder taken off the import path.
    """
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]
    client = importlib.import_module("mcp").Client
    return cast(McpClient, client(url, mode=mode, cache=None))


def _model_with(count: int, work: Path) -> Path:
    """fixturectl's captured model with `count` copies of `cluster config get` as sibling commands."""
    model = json.loads((EXAMPLE / "fixturectl.introspect.json").read_text(encoding="utf-8"))
    cluster = next(cmd for cmd in model["commands"] if cmd["name"] == "cluster")
    config = next(cmd for cmd in cluster["commands"] if cmd["name"] == "config")
    get = next(cmd for cmd in config["commands"] if cmd["name"] == "get")
    clones: list[Any] = []
    for index in range(count):
        clone = copy.deepcopy(get)
        clone["name"] = f"get{index:03d}"
        clones.append(clone)
    model["commands"] = [{**config, "name": "bulk", "commands": clones}]
    path = work / f"model-{count}.json"
    path.write_text(json.dumps(model), encoding="utf-8")
    return path


def _config(work: Path, name: str, app: Path, mcp_block: str = "{}") -> Path:
    path = work / f"{name}.yaml"
    path.write_text(
        f"identity: bench\napplication_path: {app}\nexpose:\n  agent:\n    mcp: {mcp_block}\n", encoding="utf-8"
    )
    return path


class Server:
    """A `fiskai mcp --port 0` process."""

    def __init__(self, config: Path) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [*FISKAI, "-c", str(config), "mcp", "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.url = ""
        self._ready = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()
        if not self._ready.wait(60) or not self.url:
            self.stop()
            sys.exit(f"fiskai mcp did not start for {config}")

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if line.startswith("Serving ") and " on http://" in line:
                self.url = line.split(" on ", 1)[1].split(" as ", 1)[0]
                self._ready.set()
        self._ready.set()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        if self.process.stderr is not None:
            self.process.stderr.close()


async def _timed(action: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples: list[float] = []
    for _ in range(count):
        start = time.perf_counter()
        await action()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def _list_times(url: str, rounds: int) -> list[float]:
    async with _client(url, "legacy") as client:
        await client.list_tools()
        return await _timed(client.list_tools, rounds)


def _direct_tool(app: Path) -> CommandTool:
    return next(t for t in command_tools(load_application(str(app))) if t.name == "cluster_config_get")


async def _direct_call(tool: CommandTool) -> None:
    """The call path in this process, no server: what MCP's overhead is measured beyond."""
    result = await call_tool(tool, '{"key": "replicas"}')
    if result.is_error:
        sys.exit(f"the direct call failed: {result.text}")


async def _interleaved_calls(url: str, app: Path, calls: int) -> dict[str, list[float]]:
    """A direct call and a call in each era, one of each per round, so machine load hits all alike."""
    tool = _direct_tool(app)
    samples: dict[str, list[float]] = {"direct": [], "legacy": [], "auto": []}
    async with _client(url, "legacy") as legacy, _client(url, "auto") as modern:
        clients = {"legacy": legacy, "auto": modern}
        for client in clients.values():
            await client.list_tools()  # as real clients do; the SDK client validates results against it
            await client.call_tool("cluster_config_get", {"key": "replicas"})
        await _direct_call(tool)
        for _ in range(calls):
            samples["direct"] += await _timed(lambda: _direct_call(tool), 1)
            for mode, client in clients.items():
                samples[mode] += await _timed(lambda c=client: c.call_tool("cluster_config_get", {"key": "r"}), 1)
    return samples


async def _throughput(run_one: Callable[[], Awaitable[object]], clients: int, each: int) -> float:
    start = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for _ in range(clients):

            async def worker() -> None:
                for _ in range(each):
                    await run_one()

            tasks.start_soon(worker)
    return clients * each / (time.perf_counter() - start)


async def _mcp_throughput(url: str, clients: int, each: int) -> float:
    async with contextlib.AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(_client(url, "legacy")) for _ in range(clients)]
        for client in sessions:
            await client.list_tools()
        index = 0

        async def one() -> None:
            nonlocal index
            client = sessions[index % clients]
            index += 1
            await client.call_tool("cluster_config_get", {"key": "replicas"})

        return await _throughput(one, clients, each)


def _first_list_ms(config: Path) -> float:
    server = Server(config)
    try:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "1"},
            },
        }
        headers = {"Accept": "application/json, text/event-stream"}
        with httpx.Client(timeout=30) as http:
            init = http.post(server.url, json=body, headers=headers)
            session = init.headers["mcp-session-id"]
            headers["mcp-session-id"] = session
            http.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
            listed = http.post(server.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
            assert "cluster_config_get" in listed.text
        return (time.perf_counter() - server.started) * 1000
    finally:
        server.stop()


def _info_ms(config: Path) -> float:
    start = time.perf_counter()
    subprocess.run([*FISKAI, "-c", str(config), "info", "--format", "json"], capture_output=True, check=True)
    return (time.perf_counter() - start) * 1000


def _row(label: str, value: float, unit: str, floor_label: str, floor: float, note: str = "") -> list[str]:
    return [label, f"{value:.2f} {unit}", floor_label, f"{floor:.2f} {unit}", f"{value / floor:.2f}x", note]


async def _measure(args: argparse.Namespace, work: Path) -> list[list[str]]:
    rows: list[list[str]] = []
    app = write_fake_app(work, EXAMPLE / "fixturectl.introspect.json", name="fixturectl")
    example = _config(work, "example", app)
    wide = _config(work, "wide", write_fake_app(work, _model_with(300, work), name="wide"))
    single = _config(work, "single", write_fake_app(work, _model_with(1, work), name="single"))
    roomy = _config(work, "roomy", app, "{max_concurrent_tools: 10}")

    servers = {name: Server(path) for name, path in [("wide", wide), ("single", single), ("example", example)]}
    try:
        list_300 = statistics.median(await _list_times(servers["wide"].url, args.rounds))
        list_1 = statistics.median(await _list_times(servers["single"].url, args.rounds))
        rows.append(_row("tools/list, 300 tools", list_300, "ms", "tools/list, 1 tool", list_1))

        samples = await _interleaved_calls(servers["example"].url, app, args.calls)
        direct = statistics.median(samples["direct"])
        eras: list[tuple[Mode, str]] = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]
        for mode, era in eras:
            call = statistics.median(samples[mode])
            overhead = call - direct
            verdict = "meets <= 10 ms" if overhead <= 10 else "misses 10 ms target"
            rows.append(
                _row(
                    f"tools/call ({era})",
                    call,
                    "ms",
                    "direct call",
                    direct,
                    f"overhead {overhead:.2f} ms, {verdict}",
                )
            )

        tool = _direct_tool(app)
        floor_rate = await _throughput(lambda: _direct_call(tool), 10, args.calls // 5)
        capped = await _mcp_throughput(servers["example"].url, 10, args.calls // 5)
        rows.append(_row("calls/s, 10 clients, cap 2", capped, "/s", "10 direct concurrent", floor_rate))
    finally:
        for server in servers.values():
            server.stop()
    roomy_server = Server(roomy)
    try:
        roomy_rate = await _mcp_throughput(roomy_server.url, 10, args.calls // 5)
        rows.append(_row("calls/s, 10 clients, cap 10", roomy_rate, "/s", "10 direct concurrent", floor_rate))
    finally:
        roomy_server.stop()

    starts = [_first_list_ms(example) for _ in range(args.starts)]
    infos = [_info_ms(example) for _ in range(args.starts)]
    rows.append(
        _row(
            "start to first tools/list",
            statistics.median(starts),
            "ms",
            "fiskai info (same config)",
            statistics.median(infos),
        )
    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100, help="sequential calls per latency figure")
    parser.add_argument("--rounds", type=int, default=30, help="tools/list requests per figure")
    parser.add_argument("--starts", type=int, default=5, help="server starts to time")
    args = parser.parse_args()
    for src in sorted((ROOT / "packages").glob("*/src")):
        compileall.compile_dir(src, quiet=1)

    with tempfile.TemporaryDirectory() as tmp:
        rows = anyio.run(_measure, args, Path(tmp))
    header = ["measure", "median", "floor", "floor median", "ratio", "note"]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print(f"python {sys.version.split()[0]}; cores {os.cpu_count()}; calls {args.calls}, rounds {args.rounds}")
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
