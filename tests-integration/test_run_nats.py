"""`fiskai run` over NATS: the run journal in JetStream and the memory in a KV bucket, from `nats_context`.

The harness opens one connection from the configured context (a file of the nats CLI) and lends it to the
JetStream journal and the KV memory; nothing connects to a default URL. A checkpointed run is SIGKILLed
after its first tool's result is journaled, then resumed: the journal it resumes is the one in JetStream,
the tool does not run again, and the memory it wrote is in the agent's bucket on that server.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import anyio
import nats
import pytest
from nats.js.api import DiscardPolicy, StreamConfig

from fiskai_agent.testing import Hang, MessagesServer, RunProcesses, Turn, text, tool_use

pytestmark = pytest.mark.nats

_ROOT = Path(__file__).resolve().parents[1]
_FIXTURECTL = _ROOT / "examples" / "fixturectl"
_RUN_ID = "nats-run"
_STREAM = StreamConfig(
    name="RUNS",
    subjects=["fiskai.runs.>"],
    max_msgs_per_subject=1,
    discard=DiscardPolicy.NEW,
    discard_new_per_subject=True,
)
_RUNS = RunProcesses()


@pytest.fixture(autouse=True)
def _reap() -> Iterator[None]:
    yield
    _RUNS.reap()


async def _prepare_server(url: str) -> None:
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    try:
        await nc.jetstream().add_stream(_STREAM)  # pyright: ignore[reportUnknownMemberType]
    finally:
        await nc.close()


async def _server_state(url: str) -> tuple[list[str], bytes | None]:
    """The journal subjects in RUNS, and the memory value under `cluster-layout` (None when absent)."""
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    try:
        js = nc.jetstream()  # pyright: ignore[reportUnknownMemberType]
        info = await js.stream_info("RUNS", subjects_filter=">")
        subjects = sorted((info.state.subjects or {}).keys())
        kv = await js.key_value("fiskai-memory-fixturectl")
        keys = await kv.keys()  # pyright: ignore[reportUnknownMemberType]
        found = next((key for key in keys if key.endswith("cluster-layout")), None)
        value = (await kv.get(found)).value if found is not None else None
        return subjects, value
    finally:
        await nc.close()


def _setup(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "app"
    shutil.copytree(_FIXTURECTL, folder)
    calls = folder / "calls.log"
    script = folder / "fixturectl"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "$(dirname "$0")/fixturectl.introspect.json"; fi\n'
        f'echo "$*" >> "{calls}"\n'
        'printf "fixturectl ran:"; printf " [%s]" "$@"; echo\n',
        encoding="utf-8",
    )
    config = folder / "agent.yaml"
    config.write_text(
        "identity: fixturectl\napplication_path: ./fixturectl\nsystem_prompt: operate fixturectl\n"
        "nats_context: test-nats\n"
        "harness:\n"
        "  sessions: {backend: jetstream, options: {stream: RUNS}}\n"
        "  memory: {enabled: true, backend: jetstream}\n"
        "llm: {model: claude-sonnet-4-6}\n",
        encoding="utf-8",
    )
    contexts = tmp_path / "config" / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "test-nats.json").write_text(json.dumps({"url": url}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_", "NATS_"))}
    env.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        NO_COLOR="1",
        ANTHROPIC_API_KEY="test-key",
    )
    return config, env


def test_a_run_journals_into_jetstream_and_a_kill_then_resume_finishes_there(tmp_path: Path, nats_server: str) -> None:
    """Steps:
    1. The stream exists (the operator's job: fiskai provisions nothing); the config names only the context.
    2. The run writes a memory, lists nodes, then the model hangs: SIGKILL once the second result is in.
    3. `--resume` reads the journal back from JetStream: the tools do not run again and the run completes.
    4. The journal's records are in RUNS under the run's subjects, the memory in the agent's KV bucket.
    """
    anyio.run(_prepare_server, nats_server)
    config, env = _setup(tmp_path, nats_server)
    calls = config.with_name("calls.log")
    remember = {"key": "cluster-layout", "description": "nodes", "content": "three nodes, n1 to n3"}
    with MessagesServer() as server:
        server.add(
            Turn([tool_use("memory_write", remember)]),
            Turn([tool_use("cluster_node_list", {})]),
            Hang(),
        )
        first = _RUNS.start(
            ["-c", str(config), "run", "--checkpoint", "--name", _RUN_ID, "look"], env, server, cwd=tmp_path
        )
        server.wait_for_requests(3, timeout=60)
        first.kill()
        first.communicate(timeout=30)
    assert calls.read_text(encoding="utf-8").splitlines() == ["cluster node list"]

    with MessagesServer() as server:
        server.add(Turn([text("three nodes")]))
        resumed = _RUNS.start(["-c", str(config), "run", "--resume", _RUN_ID], env, server, cwd=tmp_path)
        out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    assert out.strip() == "three nodes"
    assert calls.read_text(encoding="utf-8").splitlines() == ["cluster node list"]
    assert not (tmp_path / "state" / "fiskai" / "runs").exists()

    subjects, memory = anyio.run(_server_state, nats_server)
    assert subjects and all(subject.startswith(f"fiskai.runs.{_RUN_ID}.") for subject in subjects)
    assert memory is not None and b"three nodes, n1 to n3" in memory
