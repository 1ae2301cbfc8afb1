"""Sessions cross between fiskai and the Go agent: a Go journal resumes here, and `session export --go` writes one.

The Go journal is hand-built from the reference's record formats (fixtures/go-journal/README.md); the
export is validated against the Go agent's own JSON schemas in the shared reference.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.testing import write_fake_app

_ROOT = Path(__file__).resolve().parents[1]
_GO = _ROOT / "fixtures" / "go-journal"


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    with MessagesServer() as scripted:
        yield scripted


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"), NO_COLOR="1")
    return base


def _fiskai(args: Sequence[str], env: Mapping[str, str], server: MessagesServer) -> subprocess.CompletedProcess[str]:
    full = {**env, "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key"}
    return subprocess.run(
        [sys.executable, "-m", "fiskai_cli", *args],
        cwd=Path(env["XDG_STATE_HOME"]).parent,
        env=full,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _config(tmp_path: Path, *, prompt: str | None = None) -> Path:
    """The fixture's agent.yaml over a fake fixturectl (optionally with another system prompt)."""
    app = write_fake_app(tmp_path, _ROOT / "fixtures" / "fisk" / "fixturectl.introspect.json", name="fixturectl")
    body = (_GO / "agent.yaml").read_text(encoding="utf-8").replace("./fixturectl", str(app))
    if prompt is not None:
        body = body.replace("report exactly what fixturectl printed", prompt)
    config = tmp_path / "agent.yaml"
    config.write_text(body, encoding="utf-8")
    return config


def _install_go_session(env: Mapping[str, str]) -> None:
    runs = Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs"
    runs.mkdir(parents=True)
    shutil.copyfile(_GO / "go-nodes.json", runs / "go-nodes.json")


def test_a_session_the_go_agent_wrote_resumes_without_force(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    config = _config(tmp_path)
    _install_go_session(env)
    server.add(Turn([text("n1 and n2 are up.")]))

    done = _fiskai(["-c", str(config), "run", "--resume", "go-nodes"], env, server)

    assert done.returncode == 0, done.stderr
    assert "--force" not in done.stderr
    assert done.stdout.strip() == "n1 and n2 are up."
    sent = json.dumps(server.requests[0].body["messages"])
    assert "which nodes are up?" in sent and "n1 up" in sent  # the Go transcript reached the model


def test_a_changed_configuration_still_needs_force_for_a_go_session(
    tmp_path: Path, env: dict[str, str], server: MessagesServer
) -> None:
    config = _config(tmp_path, prompt="summarise what fixturectl printed")
    _install_go_session(env)

    done = _fiskai(["-c", str(config), "run", "--resume", "go-nodes"], env, server)

    assert done.returncode != 0
    assert "system prompt: changed" in done.stderr and "--force" in done.stderr
    assert server.requests == []


def _go_validators(shared_fixtures: Path) -> dict[str, Any]:
    schemas = shared_fixtures.parent / "reference" / "schemas" / "runstate-v1"
    documents = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(schemas.glob("*.json"))]
    resources: list[tuple[str, Resource[Any]]] = [(doc["$id"], Resource.from_contents(doc)) for doc in documents]
    registry: Any = Registry().with_resources(resources)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportUnknownVariableType]
    checker = Draft202012Validator.FORMAT_CHECKER
    return {
        doc["$id"].rsplit("/", 1)[-1]: Draft202012Validator(doc, registry=registry, format_checker=checker)
        for doc in documents
    }


def test_export_go_writes_a_journal_the_go_agents_schemas_accept(
    tmp_path: Path, env: dict[str, str], server: MessagesServer, shared_fixtures: Path
) -> None:
    config = _config(tmp_path)
    server.add(Turn([tool_use("cluster_node_list", {"state": "up"}, id="t1")]), Turn([text("done")]))
    ran = _fiskai(["-c", str(config), "run", "--checkpoint", "--name", "py-nodes", "which nodes?"], env, server)
    journal = Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs" / "py-nodes.json"
    out = tmp_path / "py-nodes.go.json"

    exported = _fiskai(["-c", str(config), "session", "export", "--go", "py-nodes", "-o", str(out)], env, server)

    assert ran.returncode == 0, ran.stderr
    assert exported.returncode == 0, exported.stderr
    assert "tool_intent" in journal.read_text(encoding="utf-8")  # fiskai's own journal has them
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    validators = _go_validators(shared_fixtures)
    for record in records:
        kind = record["protocol"].rsplit(".", 1)[-1]
        validators[f"session.{kind}.json"].validate(record)
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert [r["protocol"].rsplit(".", 1)[-1] for r in records] == [
        "meta", "assistant", "tool_result", "assistant", "terminal",
    ]  # fmt: skip
    assert records[0]["meta"]["version"] == 3
    original = json.loads(journal.read_text(encoding="utf-8").splitlines()[0])
    assert records[0]["meta"]["fingerprint"] == original["meta"]["fingerprint"]  # the Go agent's hashes
