import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from fiskai_a2a.protocol import DiscoveryReply, Identity, ToolDescriptor, request_header
from fiskai_cli._root import cli
from fiskai_cli.commands.discover import render_card

ROOT = Path(__file__).resolve().parents[3]
APP = ROOT / "examples" / "fixturectl" / "fixturectl"


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _config(tmp_path: Path, body: str) -> str:
    path = tmp_path / "agent.yaml"
    path.write_text(f"identity: fixturectl\napplication_path: {APP}\n{body}", encoding="utf-8")
    return str(path)


def test_a2a_needs_agent_to_agent(tmp_path: Path) -> None:
    code, _, err = _invoke("-c", _config(tmp_path, "nats_context: ops\n"), "a2a")
    assert code == 1
    assert "requires expose.agent.a2a.serve_tools: true (or the older expose.agent.agent_to_agent: true)" in err
    assert "Traceback" not in err


def test_a2a_without_a_connection_says_what_to_set(tmp_path: Path) -> None:
    code, _, err = _invoke("-c", _config(tmp_path, "expose: {agent: {agent_to_agent: true}}\n"), "a2a")
    assert code == 1 and "nats_context is required for the a2a server" in err
    # It names every way to give one: the setting and both flags.
    assert "set nats_context in agent.yaml" in err and "--server URL" in err and "--context NAME" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a2a_with_only_confirm_gated_tools_serves_nothing(tmp_path: Path) -> None:
    body = "include: {tags: [ai:confirm]}\nexpose: {agent: {agent_to_agent: true}}\n"
    code, _, err = _invoke("-c", _config(tmp_path, body), "a2a", "--server", "nats://127.0.0.1:9")
    assert code == 1
    assert "no tools available to serve over a2a; all were filtered or confirmation-gated" in err
    assert "warning: skipping tool cluster_node_drain: confirmation-gated" not in err


def test_a2a_with_an_unknown_context_names_it(tmp_path: Path) -> None:
    body = "nats_context: nowhere\nexpose: {agent: {agent_to_agent: true}}\n"
    code, _, err = _invoke("-c", _config(tmp_path, body), "a2a")
    assert code == 1 and 'unknown NATS context "nowhere"' in err and "nats context add nowhere" in err


def test_discover_needs_a_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _invoke("discover", "peer")
    assert code == 1 and "pass --context NAME or --server URL" in err
    code, _, err = _invoke("discover", "peer", "--server", "nats://x", "--context", "y")
    assert code == 1 and "not both" in err


def test_discover_uses_the_configured_context(tmp_path: Path) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    folder.mkdir(parents=True)
    (folder / "ops.json").write_text(json.dumps({"url": "nats://127.0.0.1:9"}), encoding="utf-8")
    code, _, err = _invoke("-c", _config(tmp_path, "nats_context: ops\n"), "discover", "peer")
    assert code == 1
    assert 'cannot connect to NATS at NATS context "ops" (nats://127.0.0.1:9): connection refused' in err


def test_card_rendering() -> None:
    header = request_header(DiscoveryReply.PROTOCOL, sender=Identity(name="peer"))
    card = DiscoveryReply(
        header=header,
        name="peer",
        version="1.0.0",
        description="Ops tools",
        protocols=["io.choria.fisk-ai.v1"],
        tools=[ToolDescriptor(name="status", description="Show the status " * 10), ToolDescriptor(name="bare")],
    )
    text = render_card("peer", card)
    assert text.splitlines()[0] == "Agent Card for peer"
    assert "Description  Ops tools" in text and "Protocols    io.choria.fisk-ai.v1" in text
    assert "status  Show the status Show the status" in text and "..." in text
    empty = render_card("peer", DiscoveryReply(header=header, name="peer", version="1"))
    assert empty.endswith("The agent exposes no tools.")
