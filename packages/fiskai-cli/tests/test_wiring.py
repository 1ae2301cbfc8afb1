"""The composition module: one configuration rule, one state home, paths relative to the config file."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import click
import pytest
from click.testing import CliRunner

from fiskai_cli._root import cli
from fiskai_cli._wiring import (
    Invocation,
    invocation,
    knowledge_directory,
    knowledge_embedder,
    knowledge_paths,
    load_settings,
    open_journal_store,
    open_knowledge_store,
    state_home,
)
from fiskai_core.config import Mode, parse_config
from fiskai_runstate import FileJournalStore

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "fixturectl" / "agent.yaml"


def _settings_of(*args: str) -> tuple[Invocation, str]:
    """Run a probe subcommand under the real root group and return what it saw."""
    seen: list[Invocation] = []
    loaded: list[str] = []

    @click.command("probe")
    @click.pass_context
    def probe(ctx: click.Context) -> None:
        seen.append(invocation(ctx))
        settings = load_settings(ctx, Mode.MCP, required=False)
        loaded.append("none" if settings is None else settings.config.identity)

    cli.add_command(probe)
    try:
        result = CliRunner().invoke(cli, [*args, "probe"])
    finally:
        cli.commands.pop("probe")
    assert result.exit_code == 0, result.output
    return seen[0], loaded[0]


def test_the_implicit_agent_yaml_is_used_when_it_exists_and_optional_when_it_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    given, loaded = _settings_of()
    assert given == Invocation(config_path="agent.yaml", config_explicit=False)
    assert loaded == "none"
    (tmp_path / "agent.yaml").write_text("identity: here\n", encoding="utf-8")
    assert _settings_of()[1] == "here"


def test_an_explicit_configuration_comes_from_the_flag_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "a.yaml"
    config.write_text("identity: flagged\n", encoding="utf-8")
    assert _settings_of("-c", str(config)) == (Invocation(config_path=str(config), config_explicit=True), "flagged")
    monkeypatch.setenv("FISKAI_CONFIG", str(config))
    assert _settings_of()[0].config_explicit


def test_state_home_follows_an_absolute_xdg_state_home_and_ignores_a_relative_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert state_home() == tmp_path / "fiskai"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_home() == tmp_path / "home" / ".local" / "state" / "fiskai"


def test_the_knowledge_index_defaults_to_the_state_home_and_a_relative_one_is_under_the_config_folder(
    tmp_path: Path,
) -> None:
    config = parse_config("identity: ops\nharness: {knowledge: {enabled: true}}\n", Mode.MCP)
    default = knowledge_directory(config.harness.knowledge, identity=config.identity, folder=tmp_path)
    assert default == state_home() / "knowledge" / "ops"
    config = parse_config("harness: {knowledge: {enabled: true, directory: idx}}\n", Mode.MCP)
    assert knowledge_directory(config.harness.knowledge, identity="x", folder=tmp_path) == tmp_path / "idx"


def test_a_relative_sessions_directory_is_under_the_config_folder_wherever_the_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = parse_config("harness: {sessions: {options: {directory: runs}}}\n", Mode.MCP)
    monkeypatch.chdir(tmp_path)  # not the config folder: the directory must not follow the working one
    store = anyio.run(lambda: open_journal_store(config.harness.sessions, folder=tmp_path / "conf"))
    assert isinstance(store, FileJournalStore)
    assert store.directory == tmp_path / "conf" / "runs"
    default = anyio.run(lambda: open_journal_store(parse_config("", Mode.MCP).harness.sessions, folder=tmp_path))
    assert isinstance(default, FileJournalStore)
    assert default.directory == state_home() / "runs"


def test_a_misspelled_sessions_option_is_one_line_naming_the_known_ones() -> None:
    config = parse_config("harness: {sessions: {options: {directroy: runs}}}\n", Mode.MCP)
    with pytest.raises(click.ClickException) as caught:
        anyio.run(lambda: open_journal_store(config.harness.sessions))
    assert caught.value.message == 'invalid file session options: unknown option "directroy" (known: directory)'


def test_info_resolves_the_knowledge_paths_against_the_config_folder_and_creates_nothing_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "agent.yaml").write_text(
        "identity: docs\nharness: {knowledge: {enabled: true, paths: [manual, /abs/notes]}}\n", encoding="utf-8"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = CliRunner().invoke(cli, ["-c", str(folder / "agent.yaml"), "info", "--format", "json"])
    assert result.exit_code == 0, result.output
    knowledge = json.loads(result.stdout)["knowledge"]
    assert knowledge["paths"] == [str(folder / "manual"), "/abs/notes"]
    assert knowledge["directory"] == str(state_home() / "knowledge" / "docs")
    assert list(elsewhere.iterdir()) == []


def test_memory_in_a_relative_directory_is_found_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    config = folder / "agent.yaml"
    config.write_text("identity: ops\nharness: {memory: {enabled: true, options: {directory: notes}}}\n", "utf-8")
    for where in (folder, tmp_path):
        monkeypatch.chdir(where)
        result = CliRunner().invoke(cli, ["-c", str(config), "memory", "list", "--format", "json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["store"] == str(folder / "notes")


def test_the_knowledge_openers_index_and_search_a_real_store_where_the_config_says(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    (folder / "manual").mkdir(parents=True)
    (folder / "manual" / "drain.md").write_text("# Draining\n\nDrain a node before maintenance.\n", "utf-8")
    config = parse_config(
        "identity: ops\nharness: {knowledge: {enabled: true, paths: [manual], directory: idx,"
        " embeddings: {base_url: 'http://127.0.0.1:9/v1', model: m, timeout: 5s}}}\n",
        Mode.MCP,
    )
    knowledge = config.harness.knowledge
    embedder = knowledge_embedder(knowledge.embeddings)
    assert embedder is not None  # built from the typed block; nothing is contacted until it embeds
    assert knowledge_embedder(None) is None
    directory = knowledge_directory(knowledge, identity=config.identity, folder=folder)
    assert directory == folder / "idx"
    writer = open_knowledge_store(directory, read_only=False)
    try:
        writer.index(knowledge_paths(knowledge, folder=folder))
    finally:
        writer.close()
    reader = open_knowledge_store(directory, read_only=True)
    try:
        hits = reader.search("maintenance").hits
    finally:
        reader.close()
    # How a hit names its file is the knowledge store's choice (relative where that reads better).
    assert [hit.path.endswith("manual/drain.md") for hit in hits] == [True]


def test_every_knowledge_remedy_has_words_in_this_cli() -> None:
    # A remedy the tier adds without words here would reach the operator as a bare error.
    from fiskai_cli._wiring import remedy_text
    from fiskai_rag.errors import Remedy

    assert {remedy.value: bool(remedy_text(remedy)) for remedy in Remedy} == {remedy.value: True for remedy in Remedy}
