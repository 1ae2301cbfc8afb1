"""`fiskai session stats | search` over the JetStream journal backend, against a real nats-server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import nats
import pytest
from click.testing import CliRunner
from nats.js.api import DiscardPolicy, StreamConfig

from fiskai_cli._root import cli
from fiskai_runstate import Record
from fiskai_runstate.jetstream import JetStreamJournalStore
from fiskai_runstate.records import TerminalRecord
from fiskai_runstate.testing import sample_meta, sample_turn

pytestmark = pytest.mark.nats

_STREAM = StreamConfig(
    name="RUNS",
    subjects=["fiskai.runs.>"],
    max_msgs_per_subject=1,
    discard=DiscardPolicy.NEW,
    discard_new_per_subject=True,
)


async def _write(url: str) -> None:
    nc = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    try:
        await nc.jetstream().add_stream(_STREAM)  # pyright: ignore[reportUnknownMemberType]
        store = await JetStreamJournalStore.bind(nc, "RUNS")
        for run_id, turns, end in (("js-done", 1, True), ("js-open", 2, False)):
            async with await store.create(sample_meta(run_id, prompt=f"look at {run_id}")) as journal:
                for iteration in range(turns):
                    for record in sample_turn(run_id, seq=journal.last_seq + 1, iteration=iteration):
                        await journal.append(record)
                if end:
                    await journal.append(Record(seq=journal.last_seq + 1, payload=TerminalRecord(reason="completed")))
    finally:
        await nc.close()


def test_stats_and_search_read_the_jetstream_backend(
    tmp_path: Path, nats_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    anyio.run(_write, nats_server)
    contexts = tmp_path / "config" / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "test-nats.json").write_text(json.dumps({"url": nats_server}), encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    config = tmp_path / "agent.yaml"
    config.write_text(
        "application_path: ./app\nnats_context: test-nats\n"
        "harness:\n  sessions: {backend: jetstream, options: {stream: RUNS}}\n",
        encoding="utf-8",
    )

    def invoke(*args: str) -> dict[str, Any]:
        result = CliRunner().invoke(cli, ["-c", str(config), "session", *args, "--format", "json"])
        assert result.exit_code == 0, (result.output, result.exception)
        document: dict[str, Any] = json.loads(result.stdout)
        return document

    stats = invoke("stats", "js-open")
    assert (stats["run_id"], stats["iterations"], stats["terminal"]) == ("js-open", 2, None)
    assert stats["updated"] is not None  # found through the store's listing (no file to stat)
    found = invoke("search", "--status", "completed")
    assert [r["run_id"] for r in found["runs"]] == ["js-done"]
    calls = invoke("query", "js-open", "--iteration", "1")
    assert [c["tool_use_id"] for c in calls["calls"]] == ["toolu_1"]
    result = CliRunner().invoke(cli, ["-c", str(config), "session", "stats", "nope"])
    assert result.exit_code == 1 and "'nope'" in result.stderr and "fiskai session list" in result.stderr
