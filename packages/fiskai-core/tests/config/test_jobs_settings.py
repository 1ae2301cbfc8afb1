"""`expose.agent.jobs`: presence turns queued jobs on; every key defaults, so `{}` is valid (reference 2.6)."""

from pathlib import Path

import pytest

from fiskai_core.config import Config, Mode, load_config, parse_config
from fiskai_core.errors import ConfigError


def _config(text: str) -> Config:
    return parse_config(text, Mode.MCP)


def test_an_empty_block_takes_every_default() -> None:
    assert _config("").expose.agent.jobs is None
    jobs = _config("expose: {agent: {jobs: {}}}\n").expose.agent.jobs
    assert jobs is not None
    assert (jobs.queue, jobs.task_type, jobs.workers, jobs.nats_context, jobs.max_payload) == (
        "FISK_AI",
        "fisk-ai:run",
        1,
        "",
        524288,
    )


def test_every_key_is_read() -> None:
    text = (
        "expose: {agent: {jobs: {queue: OPS, task_type: 'ops:run', workers: 4, nats_context: q, max_payload: 1024}}}\n"
    )
    jobs = _config(text).expose.agent.jobs
    assert jobs is not None
    assert (jobs.queue, jobs.task_type, jobs.workers, jobs.nats_context, jobs.max_payload) == (
        "OPS",
        "ops:run",
        4,
        "q",
        1024,
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("{queue: 'a.b'}", 'expose.agent.jobs.queue "a.b": use letters, digits, - and _'),
        ("{workers: -1}", "expose.agent.jobs.workers -1: must not be negative"),
        ("{max_payload: -5}", "expose.agent.jobs.max_payload -5: must not be negative"),
        ("{queues: X}", "queues"),
    ],
)
def test_bad_values_are_refused_naming_the_key(body: str, expected: str, tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(f"expose: {{agent: {{jobs: {body}}}}}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, Mode.MCP)
    assert expected in str(caught.value)
